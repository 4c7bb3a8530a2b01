"""The report as a whole: contents, escaping, determinism, size, errored trials and ragged counts."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import write_trials
from trialscore.errors import EvaluationError
from trialscore.report import ReportSettings, build_report
from trialscore.report.packing import unpack
from trialscore.report.render import safe_json
from trialscore.report.runs import read_run
from trialscore.results.trials import OUTPUT_CHARS, OUTPUT_TEXT_CHARS

PAYLOADS = (
    "<script>window.__pwned=1</script>",
    "</script><img src=x onerror=window.__pwned=2>",
    '"onerror="window.__pwned=3',
    "{{ 7*7 }}{% if 1 %}x{% endif %}",
    "line\u2028break\u2029&amp;",
)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, set[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name for name, _ in attrs}))


def _tags(html: str) -> list[tuple[str, set[str]]]:
    """Every start tag of the page (as a browser's tokenizer sees it) and its attribute names."""
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _record(case: str, trial: int, verdict: str, **extra: object) -> dict[str, object]:
    passed = None if verdict == "error" else verdict == "pass"
    return {
        "case_id": case,
        "trial": trial,
        "passed": passed,
        "verdict": verdict,
        "score": None if verdict == "error" else float(bool(passed)),
        **extra,
    }


def page_data(html: str) -> dict[str, Any]:
    """The page's embedded data, its distinct texts unpacked (as the page's script does)."""
    block = re.search(r'<script type="application/json" id="trial-data">(.*?)</script>', html, re.S)
    assert block is not None
    data = json.loads(block.group(1))
    data["cases"]["texts"] = unpack(data["cases"]["texts"])
    return dict(data)


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def payload_run(path: Path, now: bool = False) -> Path:
    """Every user- or model-supplied field carries every payload: ids, names, outputs (two alike but for
    whitespace and case), errors, grader names and reasons, tool-call names and arguments.  ``now``: the
    payload cases regressed (the baseline's passed a trial), with another output (a word diff)."""
    rows = []
    for index, payload in enumerate(PAYLOADS):
        common = {"target": payload, "category": payload, "suite": payload, "run_id": payload}
        grader = [{"name": payload, "score": 0.0, "passed": False, "reason": payload}]
        calls = {"tool_calls": [{"name": payload, "arguments": {payload: payload}}, {"name": "ok"}]}
        said = f"{payload} then {payload}" if now else payload
        rows.append(_record(payload, 0, "fail" if now else "pass", output=said, **common, **calls))
        other = {"tool_calls": [{"name": "ok"}]}  # another path: the trials diverge at their first call
        rows.append(
            _record(payload, 1, "fail", output=f" {said.upper()} ", grader_results=grader, **common, **other)
        )
        rows.append(_record(payload, 2, "error", error=payload, **common))
        rows.append(_record(f"plain-{index}", 0, "pass", **common))
        rows.append(_record(f"plain-{index}", 1, "fail", **common))
    return _write(path, rows)


def test_payloads_are_escaped_in_the_html_text(tmp_path: Path) -> None:
    html = build_report(
        [payload_run(tmp_path / "bad.jsonl", now=True)], baseline=payload_run(tmp_path / "base.jsonl")
    )
    # exactly the page's own two script elements: the JSON block and the inline script
    assert len(re.findall(r"<script\b", html, flags=re.I)) == 2
    assert len(re.findall(r"</script", html, flags=re.I)) == 2
    tags = _tags(html)
    assert "img" not in {tag for tag, _ in tags}
    assert not [attrs for _, attrs in tags if any(name.startswith("on") for name in attrs)]
    # Jinja syntax in data is text, never evaluated
    assert "{{ 7*7 }}" in html and ">49<" not in html
    # the embedded JSON parses back to the payloads
    block = re.search(r'<script type="application/json" id="trial-data">(.*?)</script>', html, re.S)
    assert block is not None
    assert not set("<>&\u2028\u2029") & set(block.group(1))
    data = page_data(html)
    texts = data["cases"]["texts"]
    said = {
        texts[index]
        for case in data["cases"]["trials"]
        if case and case[4]
        for index in case[4]
        if index is not None
    }
    assert {f"{payload} then {payload}" for payload in PAYLOADS} <= said
    # the diffs, tool names and arguments carry the payloads as data, never as markup
    rebuilt = {
        "".join(text for op, text in entry["ops"] if op >= 0) for entry in data["against"]["diffs"].values()
    }
    assert {f"{payload} then {payload}" for payload in PAYLOADS} <= rebuilt
    assert set(PAYLOADS) <= set(data["cases"]["tools"])
    arguments = {
        json.dumps({payload: payload}, ensure_ascii=False, separators=(",", ":")) for payload in PAYLOADS
    }
    assert arguments <= {text for text in texts if isinstance(text, str)}


def test_safe_json_never_closes_a_script() -> None:
    text = safe_json({"a": "</script><!--", "b": ["&", ">", "\u2028"]})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!--", "b": ["&", ">", "\u2028"]}


def test_packed_texts_are_the_json_the_encoder_writes() -> None:
    """Texts joined as they are (none escaped) or encoded: the same bytes as ``json.dumps`` either way."""
    import random
    import zlib

    from trialscore.report.packing import pack

    rng = random.Random(2)
    pieces = ["a", "é", " ", '"', "\\", "\n", "\x00", "\x1f", "\x7f", "\u2028", "</script>", "中", "🙂", ""]
    for _ in range(500):
        texts: list[object] = [
            "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 5))
        ]
        if rng.random() < 0.1:
            texts.append([rng.choice(pieces), 7])
        plain = json.dumps(texts, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        assert pack(texts) == base64.b64encode(zlib.compress(plain.encode("utf-8"), 1)).decode("ascii")
        assert unpack(pack(texts)) == texts


def test_errored_trials_and_ragged_counts(tmp_path: Path) -> None:
    rows = [
        _record("a", t, v, target="m", category="x") for t, v in enumerate("pass fail error pass".split())
    ]
    rows += [_record("b", t, v, target="m", category="y") for t, v in enumerate("pass pass".split())]
    rows += [_record("c", t, v, target="m", category="y") for t, v in enumerate(["error"] * 3)]
    rows += [_record("d", t, "borderline", target="m", category="x") for t in range(6)]
    for row in rows:
        if row["verdict"] == "error":
            row["error"] = "rate limited (429)"
    html = build_report([_write(tmp_path / "t.jsonl", rows)])
    run = read_run(tmp_path / "t.jsonl")
    assert [case.verdicts for case in run.cases] == ["pfep", "bbbbbb", "pp", "eee"]
    # the strip keeps every trial in order; passed/n leaves errored trials out of n
    assert '<td class="st">pfep</td><td data-v="2">2/3</td>' in html
    assert '<td class="st">eee</td><td data-v="0">0/0</td>' in html
    # k stops at the fewest scored trials of any scored case (b has 2)
    assert "k stops at 2" in html
    # errors grouped with their count and the cases they hit
    assert re.search(r"<td>4</td><td><code>rate limited \(429\)</code></td><td>a \(m\), c \(m\)</td>", html)
    # counting errored trials as failures changes n, never the strip
    failing = build_report([tmp_path / "t.jsonl"], settings=ReportSettings(errors="fail"))
    assert '<td class="st">pfep</td><td data-v="2">2/4</td>' in failing


def test_baseline_flips_and_paired_verdict(tmp_path: Path) -> None:
    def run(path: Path, outcomes: dict[str, str]) -> Path:
        rows = [
            _record(case, t, "pass" if mark == "p" else "fail", target="m", category=case[0])
            for case, marks in outcomes.items()
            for t, mark in enumerate(marks)
        ]
        return _write(path, rows)

    base = run(
        tmp_path / "base.jsonl",
        {"a1": "ppp", "a2": "ppp", "b1": "fff", "b2": "pfp", "c1": "ppf", "c2": "ppppppppfp", "d9": "ppp"},
    )
    now = run(
        tmp_path / "now.jsonl",
        {"a1": "fff", "a2": "pfp", "b1": "ppp", "b2": "fff", "c1": "pfp", "c2": "pppffpfppf", "e1": "ppp"},
    )
    html = build_report([now], baseline=base)
    flips = dict(re.findall(r'<button class="case">(\w+)</button>.*?class="flip [\w-]+">([\w ]+)<', html))
    assert flips == {
        "a1": "regressed",
        "a2": "became flaky",
        "b1": "improved",
        "b2": "regressed",
        "c1": "stable",
        "c2": "lower",  # 0.9 -> 0.6, flaky in both runs: lower, never stable
        "e1": "new",
    }
    deltas = dict(
        re.findall(
            r'<button class="case">(\w+)</button>.*?<td data-v="[-\d.]+">([^<]+)</td><td class="flip', html
        )
    )
    assert deltas == {
        "a1": "-1.00", "a2": "-0.33", "b1": "+1.00", "b2": "-0.67", "c1": "0.00", "c2": "-0.30", "e1": "—"
    }  # fmt: skip
    counts = dict(re.findall(r'<li><span class="flip [\w-]+">([\w ]+)</span> (\d+)</li>', html))
    assert counts == {
        "regressed": "2",
        "became flaky": "1",
        "lower": "1",
        "higher": "0",
        "improved": "1",
        "stable": "1",
        "new": "1",
        "removed": "1",
    }
    # the cases that changed, by their delta, the largest fall first, with before and now
    changed = html.split("<h3>Cases that changed</h3>", 1)[1].split("</table>", 1)[0]
    listed = re.findall(
        r'<tr data-i="\d+"><td>(\w+)</td><td>m</td><td>\w</td>'
        r"<td>([\d/]+)</td><td>([\d/]+)</td><td>([^<]+)</td>",
        changed,
    )
    assert listed == [
        ("a1", "3/3", "0/3", "-1.00"),
        ("b2", "2/3", "0/3", "-0.67"),
        ("a2", "3/3", "2/3", "-0.33"),
        ("c2", "9/10", "6/10", "-0.30"),
        ("b1", "0/3", "3/3", "+1.00"),
    ]
    # the paired verdict per target is compare_paired's (pass@1 per case, shared cases only)
    from trialscore.stats import compare_paired

    result = compare_paired(
        {
            "a1": [1, 1, 1],
            "a2": [1, 1, 1],
            "b1": [0, 0, 0],
            "b2": [1, 0, 1],
            "c1": [1, 1, 0],
            "c2": [1] * 8 + [0, 1],
        },
        {
            "a1": [0, 0, 0],
            "a2": [1, 0, 1],
            "b1": [1, 1, 1],
            "b2": [0, 0, 0],
            "c1": [1, 0, 1],
            "c2": [1, 1, 1, 0, 0, 1, 0, 1, 1, 0],
        },
        permutations=0,
    )
    assert result.interval.clipped_to is None  # six cases: inside [-1, 1] (a clipped one is marked so)
    bounds = f"[{result.interval.low:+.3f}, {result.interval.high:+.3f}]"
    assert f"<td>{result.delta:+.3f}</td><td>{bounds}</td>" in html
    assert f'<td class="verdict {result.verdict}">{result.verdict}</td>' in html


@pytest.mark.slow
def test_same_inputs_same_bytes(tmp_path: Path) -> None:
    base = write_trials(tmp_path / "base.jsonl", 40, 6, seed=1)
    now = write_trials(tmp_path / "now.jsonl", 40, 6, seed=2, shift=-0.1, started="2025-01-13T10:00:00Z")
    first = build_report([base, now], baseline=base)
    second = build_report([base, now], baseline=base)
    assert first == second
    assert "Trends" in first and "pass@1 per category over runs" in first


@pytest.mark.slow
def test_a_thousand_cases_ten_trials_two_runs_fit_in_one_megabyte(tmp_path: Path) -> None:
    base = write_trials(tmp_path / "base.jsonl", 1000, 10, seed=1)
    now = write_trials(tmp_path / "now.jsonl", 1000, 10, seed=2, shift=-0.05)
    html = build_report([now], baseline=base)
    assert html.count("<tr data-s=") == 1000
    assert len(html.encode("utf-8")) <= 1_000_000


def test_long_outputs_are_cut_with_their_full_length(tmp_path: Path) -> None:
    long = "x" * (OUTPUT_TEXT_CHARS + 1000)
    path = _write(tmp_path / "t.jsonl", [_record("a", 0, "pass", output=long), _record("a", 1, "fail")])
    html = build_report([path])
    assert page_data(html)["cases"]["texts"] == [["x" * OUTPUT_TEXT_CHARS, len(long)]]
    assert "x" * 100 not in html  # the page holds the text packed


def test_other_formats_give_counts_only(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("case_id,model,passed\nq1,a,1\nq1,a,0\nq2,a,1\nq2,a,\n", encoding="utf-8")
    run = read_run(path)
    assert [(case.case_id, case.verdicts, case.detailed) for case in run.cases] == [
        ("q1", "pf", False),
        ("q2", "pe", False),
    ]
    assert "This format records counts only" in build_report([run])


def test_bad_records_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(_record("a", 0, "pass"))
        + "\n"
        + json.dumps(_record("a", 1, "pass") | {"passed": False})
        + "\n"
    )
    with pytest.raises(EvaluationError, match=r"t\.jsonl line 2: .*verdict"):
        read_run(path)
    run = read_run(path, skip_invalid=True)
    assert run.rows_skipped == 1 and run.cases[0].verdicts == "p"


def _mixed_records(path: Path) -> Path:
    """Records of every shape the report shows: graders with and without reasons, long and non-ASCII
    outputs (a raw U+2028 among them), unknown numbers, trials out of order, several targets."""
    rows = []
    for case in range(6):
        for trial in (3, 0, 2, 1)[: 2 + case % 3]:
            verdict = ("pass", "fail", "borderline", "error")[(case + trial) % 4]
            extra: dict[str, object] = {
                "target": ("m1", "m2", None)[case % 3],
                "category": ("x", None)[trial % 2] if case != 4 else "é<&>",
                "cost_usd": None if trial == 2 else 0.001 * (case + 1) + trial * 1e-7,
                "latency_s": 12345.678 if trial == 1 else 0.25,
                "started_at": f"2025-01-0{case + 1}T10:00:00Z",
                "run_id": "r1" if case else "",
            }
            if verdict == "error":
                extra["error"] = "boom\nsecond line" if case % 2 else None
            else:
                extra["output"] = ("out\u2028é " * (case * 40))[: 10 + case * 90]
                extra["grader_results"] = [
                    {"name": "g1", "score": 1 / 3, "passed": verdict == "pass"},
                    {"name": "<g2>", "score": None, "passed": None, "reason": "r" * 400},
                ][: case % 3]
            rows.append(_record(f"c{case}", trial, verdict, **extra))
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _seen(run: object) -> list[object]:
    cases = run.cases  # type: ignore[attr-defined]
    return [(c.target, c.category, c.case_id, c.verdicts, c.cost, c.details) for c in cases]


def _oracle(path: Path) -> list[object]:
    """The cases of a trial-record file read line by line in Python, as the report shows them."""
    from trialscore.results.trials import TrialDetail

    def number(value: object) -> float | None:
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def cut(value: object, chars: int = OUTPUT_CHARS) -> str | None:
        return None if value is None else str(value)[:chars]

    cases: dict[tuple[object, str], list[dict[str, object]]] = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            row = json.loads(line)
            cases.setdefault((row.get("target"), row["case_id"]), []).append(row)
    seen = []
    for (target, case), rows in cases.items():
        rows.sort(key=lambda row: row["trial"])  # type: ignore[arg-type, return-value]
        letters = "".join(
            {"pass": "p", "fail": "f", "borderline": "b", "error": "e"}[r["verdict"]] for r in rows
        )  # type: ignore[index]
        costs = [number(row.get("cost_usd")) for row in rows]
        known = [cost for cost in costs if cost is not None]
        details = [
            TrialDetail(
                row["trial"],  # type: ignore[arg-type]
                row["verdict"],  # type: ignore[arg-type]
                number(row.get("score")),
                number(row.get("cost_usd")),
                number(row.get("latency_s")),
                cut(row.get("output"), OUTPUT_TEXT_CHARS),
                len(row["output"]) if isinstance(row.get("output"), str) else 0,  # type: ignore[arg-type]
                cut(row.get("error")),
                tuple(
                    (g["name"], number(g.get("score")), g.get("passed"), cut(g.get("reason")))
                    for g in row.get("grader_results") or []  # type: ignore[attr-defined]
                ),
                row.get("started_at"),  # type: ignore[arg-type]
            )
            for row in rows
        ]
        category = rows[0].get("category")
        seen.append((target, category, case, letters, sum(known) if known else None, details))
    return sorted(seen, key=lambda c: (c[0] or "", c[1] or "", c[2], c[0] is not None))  # type: ignore[operator]


def test_the_reader_gives_each_record_as_written(tmp_path: Path) -> None:
    path = _mixed_records(tmp_path / "t.jsonl")
    run = read_run(path)
    seen = _seen(run)
    expected = _oracle(path)
    assert [case[:4] for case in seen] == [case[:4] for case in expected]
    assert [case[5] for case in seen] == [case[5] for case in expected]
    assert [case[4] for case in seen] == pytest.approx([case[4] for case in expected])
    assert (run.run_id, run.suite, run.started, run.rows_read) == ("r1", None, "2025-01-01T10:00:00Z", 18)
    assert build_report([run]) == build_report([path])
    # the raw U+2028 inside an output is text, not a line break (18 trials)
    assert any("\u2028" in (d.output or "") for c in run.cases for d in c.details)
    # without detail: the same verdicts, no trial detail
    bare = read_run(path, detail=False)
    assert [c.verdicts for c in bare.cases] == [c.verdicts for c in run.cases]
    assert not bare.detailed and bare.cases[0].details == []


@pytest.mark.slow
def test_lines_of_every_shape_are_read_as_score_reads_them(tmp_path: Path) -> None:
    plain = _record("a", 0, "pass", target="m")
    cases = {
        "bom": "\ufeff" + json.dumps(plain) + "\n",
        "number target": json.dumps(plain | {"target": 5}) + "\n",
        "empty case id": json.dumps(plain | {"case_id": ""}) + "\n",
        "float trial": json.dumps(plain | {"trial": 1.0}) + "\n",
        "not json": json.dumps(plain) + "\n{oops\n",
        "an array": json.dumps(plain) + "\n[1]\n",
        "graders not a list": json.dumps(plain | {"grader_results": {"a": 1}}) + "\n",
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text, encoding="utf-8")
    # a field's escaped JSON text reads as its value: an escaped verdict is still "pass"
    escaped = tmp_path / "escaped.jsonl"
    escaped.write_text(json.dumps(plain).replace('"verdict": "pass"', '"verdict": "\\u0070ass"'))
    assert "u0070" in escaped.read_text()
    assert read_run(escaped).cases[0].verdicts == "p"
    # each file gives a valid record, or an error naming its line
    assert read_run(tmp_path / "bom.jsonl").cases[0].verdicts == "p"
    assert read_run(tmp_path / "number target.jsonl").cases[0].target == "5"  # as score groups it: target=5
    assert read_run(tmp_path / "graders not a list.jsonl").cases[0].details[0].graders == ()
    for name in ("empty case id", "float trial"):
        with pytest.raises(EvaluationError, match=rf"{name}\.jsonl line 1: TrialRecord field"):
            read_run(tmp_path / f"{name}.jsonl")
    with pytest.raises(EvaluationError, match=r"not json\.jsonl line 2: not valid JSON"):
        read_run(tmp_path / "not json.jsonl")
    skipped = read_run(tmp_path / "an array.jsonl", skip_invalid=True)
    assert (skipped.rows_read, skipped.rows_skipped, skipped.cases[0].verdicts) == (2, 1, "p")
    assert skipped.first_skipped is not None and "an array.jsonl line 2" in skipped.first_skipped


def test_a_repeated_trial_names_its_line_whatever_else_the_file_holds(tmp_path: Path) -> None:
    rows = [_record("a", 0, "pass"), _record("b", 0, "fail"), _record("a", 0, "fail")]
    fast = tmp_path / "fast.jsonl"
    fast.write_text("\n" + json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n\n" + json.dumps(rows[2]))
    slow = tmp_path / "slow.jsonl"
    slow.write_text(fast.read_text() + "\n{bad\n")
    for path in (fast, slow):
        with pytest.raises(
            EvaluationError, match=rf"{path.name} line 6: case 'a' \(target None\) has trial 0 twice"
        ):
            read_run(path, skip_invalid=True)


def test_the_headline_uses_one_k_for_every_target_and_does_not_repeat_its_table(tmp_path: Path) -> None:
    rows = [
        _record(f"c{i}", t, "pass" if (i + t) % 3 else "fail", target="a") for i in range(6) for t in range(8)
    ]
    rows += [
        _record(f"c{i}", t, "pass" if (i + t) % 4 else "fail", target="b") for i in range(6) for t in range(5)
    ]
    html = build_report([_write(tmp_path / "t.jsonl", rows)])
    headline = html.split('<section id="headline"', 1)[1].split("</section>", 1)[0]
    cards = headline.split('<article class="card">')[1:]
    assert len(cards) == 2
    for card in cards:  # target a has 8 trials a case, b 5: both at k = 5, the most both have
        labels = re.findall(r'<th scope="row">([^<]+)</th>', card)
        assert labels == ["pass@1", "pass@5", "pass^1", "pass^5"], labels
    assert "pass@k and pass^k at k = 5 for every target" in headline
    # the list under each table says how the intervals were made, not the table again at four decimals
    for card in cards:
        notes = card.split('<ul class="rules">', 1)[1].split("</ul>", 1)[0]
        assert "95% wilson-eff intervals over 6 cases (effective number of cases: pass@1 " in notes
        assert not re.search(r"\[\d\.\d{4}", notes) and "pass@5: " not in notes, notes


def test_the_header_date_is_a_formatted_date(tmp_path: Path) -> None:
    path = write_trials(tmp_path / "t.jsonl", 6, 3, seed=1, started="2025-01-06T10:00:00.123456Z")
    html = build_report([path])
    assert (
        '<dt>date</dt><dd><time datetime="2025-01-06T10:00:00.123456Z">2025-01-06 10:00 UTC</time></dd>'
        in html
    )
