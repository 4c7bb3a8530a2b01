"""The labelling page: a random seeded sample, escaped, offline, the same bytes for a seed; marked in
headless Chromium, downloaded as labels.csv and read back by ``score --human``."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import pytest

from tests.cli._judged_trials import judged_line
from tests.cli_runner import CliRunner
from tests.report.conftest import needs_browser
from trialscore.cli import app
from trialscore.report.label_page import sample_cases
from trialscore.results.records import JudgeGrade

runner = CliRunner()
HOSTILE = '</pre><script>window.pwned = 1</script><img src="https://example.com/x.png">'


def _run(folder: Path, cases: int = 30, trials: int = 3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines, asked = [], []
    for i in range(cases):
        case = f'case "{i:02d}", odd' if i % 7 == 0 else f"case-{i:02d}"
        asked.append(json.dumps({"eval_id": case, "input": f"question {i} <b>bold</b>", "expected": i}))
        for target in ("m1", "m2"):
            for t in range(trials):
                passed = (i + t) % 3 != 0
                calls = (
                    JudgeGrade(
                        judge="gpt", repeat=0, score=float(passed), passed=passed, reason=f"because {HOSTILE}"
                    ),
                    JudgeGrade(judge="gpt", repeat=1, error="HTTP 500"),
                )
                said = f"answer {i} {HOSTILE}"
                lines.append(judged_line(case, t, target, calls, passed, "mean of 1 judge", said))
    (folder / "trials.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "cases.jsonl").write_text("\n".join(asked) + "\n")
    return folder


@pytest.mark.slow
def test_the_sample_is_random_seeded_and_the_page_the_same_bytes_for_a_seed(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    pages = []
    for name, seed in (("a.html", "0"), ("b.html", "0"), ("c.html", "1")):
        result = runner.invoke(
            app, ["label", str(run), "--sample", "8", "--out", str(tmp_path / name), "--seed", seed]
        )
        assert result.exit_code == 0, result.output
        pages.append((tmp_path / name).read_bytes())
    assert pages[0] == pages[1] and pages[0] != pages[2]
    text = pages[0].decode()
    assert "drawn <strong>at random</strong> from the run's 30 cases" in text and "(seed 0;" in text
    assert HOSTILE not in text and "&lt;/pre&gt;&lt;script&gt;" in text and "&lt;b&gt;bold&lt;/b&gt;" in text
    assert "<img" not in text and 'src="' not in text and "href=" not in text  # nothing to fetch
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    chosen = sample_cases([f"case-{i:02d}" for i in range(30)], 8, 0)
    assert len(chosen) == 8 and chosen == sorted(chosen)
    # Every case is equally likely: over many seeds each of 30 cases is drawn about 8/30 of the time.
    counts: dict[str, int] = {}
    for seed in range(3000):
        for case in sample_cases([f"c{i}" for i in range(30)], 8, seed):
            counts[case] = counts.get(case, 0) + 1
    assert min(counts.values()) > 3000 * 8 / 30 * 0.85 and max(counts.values()) < 3000 * 8 / 30 * 1.15


def test_a_run_that_is_not_the_runners_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("case_id,trial,passed\nq,0,1\n")
    result = runner.invoke(app, ["label", str(tmp_path / "t.csv")])
    assert result.exit_code == 2 and "the labelling page reads a run of the runner" in result.stderr


@pytest.mark.slow
@needs_browser
@pytest.mark.timeout(300)
def test_mark_download_and_read_back_with_score_human(tmp_path: Path, open_page) -> None:
    run = _run(tmp_path / "run")
    page_path = tmp_path / "label.html"
    made = runner.invoke(app, ["label", str(run), "--sample", "12", "--out", str(page_path), "--seed", "3"])
    assert made.exit_code == 0, made.output
    page = open_page(page_path)
    chosen = sample_cases(
        [f'case "{i:02d}", odd' if i % 7 == 0 else f"case-{i:02d}" for i in range(30)], 12, 3
    )
    assert any("odd" in case for case in chosen)  # a case id with a quote and a comma goes through the CSV
    assert page.eval("document.querySelectorAll('.trial').length") == 12 * 2 * 3
    assert page.eval("typeof window.pwned") == "undefined"
    assert "because </pre><script>" in page.eval("document.body.innerText")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    page.send("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
    # Mark every trial: pass on even trials, fail on odd ones (a reviewer's own judgement).
    page.eval(
        """Array.prototype.forEach.call(document.querySelectorAll('.trial'), function (t) {
             var value = Number(t.dataset.trial) % 2 === 0 ? 'true' : 'false';
             t.querySelector('input[value=' + value + ']').click();
           })"""
    )
    assert page.eval("document.getElementById('count').textContent") == "72"
    page.eval("document.getElementById('download').click()")
    target = downloads / "labels.csv"
    deadline = time.monotonic() + 60  # a hang guard, not a timing: the download is a local file
    while not target.is_file() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert target.is_file(), "the page did not download labels.csv (hung)"
    assert page.problems() == []
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert len(rows) == 72 and {row["target"] for row in rows} == {"m1", "m2"}
    assert {row["case_id"] for row in rows} == set(chosen)
    assert all(row["passed"] == ("true" if int(row["trial"]) % 2 == 0 else "false") for row in rows)
    scored = runner.invoke(app, ["score", str(run), "--human", str(target), "-f", "json"])
    assert scored.exit_code == 0, scored.output
    groups = json.loads(scored.stdout)["human"]["groups"]
    assert sorted(g["label"] for g in groups) == ["target=m1", "target=m2"]
    assert all(g["labelled_items"] == 12 and g["labelled_trials"] == 36 for g in groups)
