"""Judge panels and repeats against a judge server on 127.0.0.1 whose calls fail or answer garbage.

Every judge call's outcome is decided by its seed (the trial's seed for repeat 0, ``repeat_seed``
for the others), so the test predicts each call, and from the calls each trial's verdict, and
checks the stored records call by call.
"""

from __future__ import annotations

import json
import math
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.runner.test_runner_run import make_suite, run
from trialscore.results.records import GraderResult, TrialRecord
from trialscore.runner.outputs import write_outputs
from trialscore.runner.seeds import repeat_seed, trial_seed

JUDGES = {"strict": "m-strict", "lenient": "m-lenient"}


def judge_action(seed: int, prompt: str) -> str:
    """What the judge server does with a call: ``400`` (a client error, not retried), ``500`` (then a
    success on the retry), ``garbage`` (a reply with no score) or ``ok``."""
    if "HOPELESS" in prompt:
        return "garbage"
    return {1: "400", 2: "500", 3: "garbage"}.get(seed % 6, "ok")


def judge_points(seed: int, model: str) -> int:
    """The judge's score out of 10: the lenient judge adds 3 (capped at 10)."""
    base = seed % 11
    return min(base + 3, 10) if model == JUDGES["lenient"] else base


def _serve(chat_server: Any) -> None:
    attempts: dict[tuple[int, str], int] = {}
    lock = threading.Lock()

    def handle(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        prompt = body["messages"][-1]["content"]
        seed = int(headers["x-trialscore-seed"])
        model = body["model"]
        with lock:
            chat_server.requests.append({"body": body, "headers": headers})
            attempt = attempts.get((seed, model), 0)
            attempts[(seed, model)] = attempt + 1
        if model == "m-agent":
            content = "HOPELESS answer" if "hopeless" in prompt else "an answer"
        else:
            action = judge_action(seed, prompt)
            if action == "400":
                return 400, {"error": {"message": "bad judge request"}}, {}
            if action == "500" and attempt == 0:
                return 500, {"error": {"message": "judge overloaded"}}, {}
            points = judge_points(seed, model)
            content = "I would rather not say" if action == "garbage" else json.dumps({"score": points})
        reply = {
            "id": "x",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return 200, reply, {}

    chat_server.handle = handle


def _suite(tmp_path: Path, url: str, grader: dict[str, Any]) -> Path:
    base = {"type": "openai", "base_url": url, "prices": {"input_per_mtok": 1.0, "output_per_mtok": 1.0}}
    document = {
        "name": "panel",
        "targets": [
            {"name": "agent", "model": "m-agent", **base},
            *({"name": name, "model": model, "judge_only": True, **base} for name, model in JUDGES.items()),
        ],
        "graders": [grader],
        "cases": [{"id": f"case-{i}", "input": f"question {i}"} for i in range(6)]
        + [{"id": "hopeless", "input": "hopeless question"}],
        "execution": {"trials": {"count": 4}, "seed": 11, "retries": 1, "backoff_s": 0.0, "concurrency": 4},
    }
    return make_suite(tmp_path, document)


def _expected_call(seed: int, judge: str, repeat: int, hopeless: bool) -> dict[str, Any]:
    call_seed = repeat_seed(seed, repeat)
    action = judge_action(call_seed, "HOPELESS" if hopeless else "")
    if action in ("400", "garbage"):
        return {"judge": judge, "repeat": repeat, "passed": None, "score": None, "kind": action}
    score = judge_points(call_seed, JUDGES[judge]) / 10
    return {"judge": judge, "repeat": repeat, "passed": score >= 0.6, "score": score, "kind": "ok"}


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("combine", ["mean", "majority"])
def test_panel_with_repeats_keeps_every_call_and_never_fails_an_errored_call(
    tmp_path: Path, chat_server, combine: str
) -> None:
    _serve(chat_server)
    grader = {
        "type": "llm_judge",
        "judges": list(JUDGES),
        "repeats": 3,
        "combine": combine,
        "rubric": "Grade 0-10: {{output}}",
        "scale": 10,
        "pass_score": 0.6,
    }
    report = run(_suite(tmp_path, chat_server.url, grader), tmp_path, out_dir=tmp_path / "out")
    assert report.completed
    records = {(r.case_id, r.trial): r for r in report.records}
    assert len(records) == 7 * 4
    kinds: dict[str, int] = {"ok": 0, "400": 0, "garbage": 0}
    for (case_id, trial), record in records.items():
        seed = trial_seed(11, case_id, trial)
        expected = [
            _expected_call(seed, judge, repeat, case_id == "hopeless")
            for judge in JUDGES
            for repeat in range(3)
        ]
        for call in expected:
            kinds[call["kind"]] += 1
        answered = [c for c in expected if c["passed"] is not None]
        if not answered:  # no call answered: the trial errored, never failed
            assert record.verdict == "error" and record.passed is None, record
            assert "no judge call answered (6 calls" in (record.error or "")
            assert record.grader_results == ()
            continue
        (result,) = record.grader_results
        stored = [(c.judge, c.repeat, c.passed, c.score) for c in result.calls or ()]
        assert stored == [(c["judge"], c["repeat"], c["passed"], c["score"]) for c in expected]
        for call, want in zip(result.calls or (), expected, strict=True):
            assert (call.error is not None) == (want["passed"] is None)
            if want["kind"] == "400":
                assert "HTTP 400" in (call.error or "")
            if want["kind"] == "garbage":
                assert "carries no score" in (call.error or "") and call.reason == "I would rather not say"
        per_judge = []
        for judge in JUDGES:
            own = [c for c in answered if c["judge"] == judge]
            if own:
                values = [c["score"] if combine == "mean" else float(c["passed"]) for c in own]
                per_judge.append(math.fsum(values) / len(values))
        score = math.fsum(per_judge) / len(per_judge)
        passed = score >= 0.6 if combine == "mean" else score > 0.5
        assert result.score == pytest.approx(score, abs=1e-12) and result.passed is passed
        assert record.verdict == ("pass" if passed else "fail")
        judges = f"{len(per_judge)} judge{'s' if len(per_judge) > 1 else ''}"
        assert (result.reason or "").startswith(f"{combine} of {judges}: {len(answered)} of 6 calls")
        errored = 6 - len(answered)
        assert (f"({errored} errored)" in result.reason) is (errored > 0)
        if any(c["kind"] == "400" for c in expected):
            assert record.cost_usd is None  # a call that failed costs an unknown amount
        else:
            assert record.cost_usd == pytest.approx((2 + 2 * 6) / 1e6, rel=1e-12)
    assert min(kinds.values()) > 0  # every kind of call happened
    assert sum(r.verdict == "error" for r in records.values()) == 4  # the hopeless case only
    # The stored file keeps every call and reads back as it was written.
    files = write_outputs(report)
    lines = files.trials.read_text().splitlines()
    back = [
        TrialRecord.from_json_line(line, where=f"trials.jsonl line {n}") for n, line in enumerate(lines, 1)
    ]
    assert sorted(back, key=lambda r: (r.case_id, r.trial)) == sorted(
        report.records, key=lambda r: (r.case_id, r.trial)
    )


def test_old_grader_results_without_calls_read_and_write_unchanged() -> None:
    line = (
        '{"case_id":"c","trial":0,"passed":true,"verdict":"pass","score":1.0,'
        '"grader_results":[{"name":"exact","score":1.0,"passed":true,"weight":1.0,"reason":null}]}'
    )
    record = TrialRecord.from_json_line(line)
    assert record.grader_results[0].calls is None
    assert '"calls"' not in record.to_json_line()
    assert GraderResult(name="x", score=1.0, passed=True).to_dict(camel=True) == {
        "graderName": "x",
        "score": 1.0,
        "passed": True,
        "weight": 1.0,
        "reason": None,
    }


@pytest.mark.slow
def test_a_single_judge_call_is_stored_too(tmp_path: Path, chat_server) -> None:
    chat_server.answer = lambda prompt, seed: '{"score": 7}' if prompt.startswith("Grade") else "an answer"
    grader = {"type": "llm_judge", "target": "strict", "rubric": "Grade 0-10: {{output}}", "scale": 10}
    report = run(_suite(tmp_path, chat_server.url, grader), tmp_path)
    for record in report.records:
        (result,) = record.grader_results
        assert [(c.judge, c.repeat, c.score, c.passed) for c in result.calls or ()] == [
            ("strict", 0, 0.7, True)
        ]
        assert result.reason == "mean of 1 judge: 1 of 1 call answered"


@pytest.mark.parametrize(
    ("grader", "message"),
    [
        ({"rubric": "r"}, "needs exactly one of target (one judge) or judges (a panel); got neither"),
        ({"rubric": "r", "target": "strict", "judges": ["lenient"]}, "got both"),
        (
            {"rubric": "r", "judges": ["strict", "nobody"]},
            "graders[0].judges[1]: must name one of the suite's targets",
        ),
        ({"rubric": "r", "judges": ["strict", "strict"]}, "names judge 'strict' twice"),
        ({"rubric": "r", "target": "strict", "repeats": 0}, "repeats"),
        ({"rubric": "r", "target": "strict", "combine": "median"}, "combine"),
    ],
)
def test_bad_panels_are_named(tmp_path: Path, grader: dict[str, Any], message: str) -> None:
    from trialscore.errors import EvaluationError
    from trialscore.runner.suite import load_suite

    path = _suite(tmp_path, "http://127.0.0.1:9/v1", {"type": "llm_judge", **grader})
    with pytest.raises(EvaluationError, match=re.escape(message)):
        load_suite(path)


@pytest.mark.slow
def test_a_judged_run_says_judge_only_in_its_summary_junit_and_terminal(tmp_path: Path, chat_server) -> None:
    import io

    from rich.console import Console

    from trialscore.ci.junit import run_junit
    from trialscore.results.judged import JUDGE_ONLY
    from trialscore.runner.summary import build_summary
    from trialscore.runner.table import print_run

    chat_server.answer = lambda prompt, seed: '{"score": 7}' if prompt.startswith("Grade") else "an answer"
    grader = {"type": "llm_judge", "target": "strict", "rubric": "Grade 0-10: {{output}}", "scale": 10}
    report = run(_suite(tmp_path, chat_server.url, grader), tmp_path)
    summary = build_summary(report)
    assert summary["calibration"] == JUDGE_ONLY
    assert f'<property name="calibration" value="{JUDGE_ONLY}" />' in run_junit(report)
    out = io.StringIO()
    print_run(report, summary, Console(file=out, width=200))
    assert JUDGE_ONLY in out.getvalue()
    (tmp_path / "plain").mkdir()
    plain = run(
        _suite(tmp_path / "plain", chat_server.url, {"type": "contains", "value": "answer"}),
        tmp_path / "plain",
    )
    assert "calibration" not in build_summary(plain) and "calibration" not in run_junit(plain)


def test_judges_and_agent_share_one_ssl_context_with_httpx_default_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every openai target's client (an agent and its judges alike) verifies with one SSL context per
    process, httpx's default for the environment it reads: a CA bundle named by SSL_CERT_FILE is the
    trust of the targets made after it is set."""
    import certifi
    import httpx

    from trialscore.runner.targets.openai import OpenAITarget, OpenAITargetSpec

    def context(target: OpenAITarget) -> Any:
        return target._client._transport._pool._ssl_context  # type: ignore[attr-defined]

    def targets() -> list[OpenAITarget]:
        specs = [
            OpenAITargetSpec(type="openai", name=n, base_url="http://127.0.0.1:9", model=m)
            for n, m in JUDGES.items()
        ]
        return [OpenAITarget(spec, 2) for spec in specs]

    def trust(ssl_context: Any) -> list[Any]:
        return sorted(map(str, ssl_context.get_ca_certs()))

    first, second = targets()
    assert context(first) is context(second)
    assert trust(context(first)) == trust(httpx.create_ssl_context())
    pem = Path(certifi.where()).read_text()
    one = tmp_path / "one.pem"
    one.write_text(pem[: pem.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----\n")])
    monkeypatch.setenv("SSL_CERT_FILE", str(one))
    third, _ = targets()
    assert context(third) is not context(first) and len(trust(context(third))) == 1
    assert trust(context(third)) == trust(httpx.create_ssl_context())
