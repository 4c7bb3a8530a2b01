"""The everyday path on ordinary data: a store with two suites, two targets, an interrupted run and a
one-case category, and every command a user types after ``score`` on it.

None exits 2 (bad input): each exits 0, or with the documented gate code (1 failed, 3 could not judge).
The interrupted run is a real one: the runner is stopped by SIGINT in the middle of a run, as by Ctrl-C.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.cli._app import EXIT_INTERRUPTED, EXIT_NOT_JUDGED

runner = CliRunner()

# A deterministic agent: answers from the seed; errors now and then (an infrastructure error, never a
# failure); with STOP_AFTER set, it interrupts its own runner (SIGINT, as Ctrl-C) after that many calls.
AGENT = """
import os, random, signal

HERE = os.path.dirname(os.path.abspath(__file__))


def answer(case, seed):
    stop = os.environ.get("STOP_AFTER")
    if stop is not None:
        with open(os.path.join(HERE, "calls.log"), "a") as log:
            log.write("x")
        with open(os.path.join(HERE, "calls.log")) as log:
            calls = len(log.read())
        if calls >= int(stop):  # two threads may both see 13: the marker makes it one interrupt
            try:
                os.close(os.open(os.path.join(HERE, "stopped"), os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGINT)
    r = random.Random(seed)
    if r.random() < 0.08:
        raise RuntimeError("sandbox unavailable")
    return {"output": "yes" if r.random() < case.metadata.get("rate", 0.7) else "no", "cost_usd": 0.001}
"""


def _suite(root: Path, name: str, targets: list[str], cases: dict[str, str], trials: int, seed: int) -> Path:
    document = {
        "name": name,
        "targets": [{"name": t, "type": "python", "callable": "agent.py:answer"} for t in targets],
        "graders": [{"type": "exact"}],
        "execution": {"trials": {"count": trials}, "retries": 0, "seed": seed, "concurrency": 2},
        "cases": [
            {"id": case, "input": "q", "expected": "yes", "category": category, "metadata": {"rate": 0.6}}
            for case, category in cases.items()
        ],
    }
    path = root / f"{name}-{seed}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


ALPHA = {"q1": "math", "q2": "math", "q3": "math", "q4": "math", "lonely": "solo"}
BETA = {"b1": "facts", "b2": "facts", "b3": "facts"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """alpha (targets a, b) twice, beta once, then alpha interrupted after 12 of its 50 trials."""
    root = tmp_path_factory.mktemp("everyday")
    (root / "agent.py").write_text(textwrap.dedent(AGENT))
    path = root / "store.sqlite"
    for suite in (
        _suite(root, "alpha", ["a", "b"], ALPHA, 5, 1),
        _suite(root, "beta", ["a"], BETA, 3, 2),
        _suite(root, "alpha", ["a", "b"], ALPHA, 5, 3),
    ):
        result = runner.invoke(app, ["run", str(suite), "--store", str(path), "--no-progress"])
        assert result.exit_code == 0, result.output
    interrupted = _suite(root, "alpha", ["a", "b"], ALPHA, 5, 4)
    stopped = subprocess.run(
        [sys.executable, "-m", "trialscore", "run", str(interrupted), "--store", str(path), "--no-progress"],
        cwd=root,
        env={**os.environ, "STOP_AFTER": "12"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert stopped.returncode == EXIT_INTERRUPTED, stopped.stderr
    return path


def invoke(store: Path, *args: str) -> Any:
    return runner.invoke(app, [*args, "--store", str(store)])


def as_json(result: Any) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
def test_runs_show_status_and_planned_trials(store: Path) -> None:
    runs = as_json(invoke(store, "runs", "-f", "json"))["runs"]
    assert [run["suite"] for run in runs] == ["alpha", "beta", "alpha", "alpha"]
    assert [run["status"] for run in runs] == ["complete", "complete", "complete", "interrupted"]
    assert [run["planned"] for run in runs] == [50, 9, 50, 50]
    assert runs[-1]["partial"] and runs[-1]["trials"] < 50
    table = invoke(store, "runs")
    assert (
        table.exit_code == 0 and "interrupted" in table.output and f"{runs[-1]['trials']}/50" in table.output
    )
    only = as_json(invoke(store, "runs", "--suite", "beta", "-f", "json"))["runs"]
    assert [run["suite"] for run in only] == ["beta"]
    shown = invoke(store, "runs", "show", "latest")
    assert shown.exit_code == 0, shown.output


@pytest.mark.slow
def test_reading_a_partial_run_warns_once(store: Path) -> None:
    scored = invoke(store, "score", "latest", "-f", "json")
    assert scored.exit_code == 0, scored.output
    warnings = [line for line in scored.stderr.splitlines() if "did not finish" in line]
    assert (
        len(warnings) == 1 and "(status interrupted)" in warnings[0] and "of 50 trials missing" in warnings[0]
    )
    (partial,) = json.loads(scored.stdout)["rows"]["partial"]
    assert partial["status"] == "interrupted" and partial["planned"] == 50
    assert warnings[0] == f"warning: {partial['source']}: the run did not finish (status interrupted): " + (
        f"{partial['missing']} of 50 trials missing"
    )


@pytest.mark.slow
def test_compare_latest_pairs_runs_of_one_suite_per_target(store: Path) -> None:
    result = invoke(store, "compare", "latest~1", "latest", "-f", "json")
    payload = as_json(result)
    assert "suite 'alpha'" in result.stderr  # latest~1 counted among alpha's runs, not beta's
    assert {c["label"] for c in payload["comparisons"]} <= {"target=a", "target=b"}
    assert {c["label"] for c in payload["comparisons"]} | {u["label"] for u in payload["not_tested"]} == {
        "target=a",
        "target=b",
    }


def test_compare_by_category_marks_the_one_case_category_not_tested(store: Path) -> None:
    payload = as_json(invoke(store, "compare", "latest~2", "latest~1", "--by", "category", "-f", "json"))
    # --by category on runs of two targets: per target and category (models are never pooled unasked)
    assert [u["label"] for u in payload["not_tested"]] == [
        "target=a, category=solo",
        "target=b, category=solo",
    ]
    assert "1 case in both runs" in payload["not_tested"][0]["reason"]
    assert [c["label"] for c in payload["comparisons"]] == [
        "target=a, category=math",
        "target=b, category=math",
    ]
    table = invoke(store, "compare", "latest~2", "latest~1", "--by", "category")
    assert table.exit_code == 0 and "not tested" in table.output


@pytest.mark.slow
def test_a_gate_on_the_partial_run_cannot_judge_unless_allowed(store: Path) -> None:
    refused = invoke(store, "compare", "latest~1", "latest", "--fail-on", "regression")
    assert refused.exit_code == EXIT_NOT_JUDGED, refused.output
    assert "refuses a partial input" in refused.stderr and "--allow-partial" in refused.stderr
    allowed = invoke(store, "compare", "latest~1", "latest", "--fail-on", "regression", "--allow-partial")
    assert allowed.exit_code in (0, 1), allowed.output
    by_category = invoke(
        store, "compare", "latest~2", "latest~1", "--by", "category", "--fail-on", "regression"
    )
    assert by_category.exit_code in (0, 1), by_category.output
    assert "not tested: target=a, category=solo; target=b, category=solo" in by_category.output


@pytest.mark.slow
def test_rank_track_plan_and_report(store: Path, tmp_path: Path) -> None:
    ranked = as_json(invoke(store, "rank", "latest~1", "-f", "json"))
    assert {model["label"] for model in ranked["models"]} == {"target=a", "target=b"}
    tracked = as_json(invoke(store, "track", "-f", "json"))
    names = {category["task_category"] for category in tracked["categories"]}
    names |= {entry["label"] for entry in tracked["not_tracked"]}
    assert "suite=beta, target=a: facts" in names and "suite=alpha, target=b: solo" in names
    assert tracked["by"] == ["suite", "target", "category"]
    beta = as_json(invoke(store, "track", "--suite", "beta", "-f", "json"))
    assert [category["task_category"] for category in beta["categories"]] == ["facts"]
    planned = as_json(
        invoke(store, "plan", "--delta", "0.2", "--pilot", "latest~1", "--by", "category", "-f", "json")
    )
    assert [entry["label"] for entry in planned["not_planned"]] == [
        "target=a, category=solo",
        "target=b, category=solo",
    ]
    report = invoke(store, "report", "latest", "--baseline", "latest~1", "--out", str(tmp_path / "r.html"))
    assert report.exit_code == 0, report.output
    assert (tmp_path / "r.html").stat().st_size > 0
    history = ["latest~3", "latest~2", "latest~1"]  # alpha, beta, alpha: trends per suite and target
    trends = invoke(
        store,
        "report",
        *history,
        "--dates",
        "2026-01-01,2026-01-02,2026-01-03",
        "--out",
        str(tmp_path / "t.html"),
    )
    assert trends.exit_code == 0, trends.output
    page = (tmp_path / "t.html").read_text()
    assert "alpha · a · math" in page and "alpha · b · math" in page and "beta · a · facts" in page


@pytest.mark.slow
def test_run_gates_refuse_a_partial_baseline_and_judge_what_they_can(store: Path) -> None:
    suite = next(store.parent.glob("alpha-1.yaml"))
    base = ["run", str(suite), "--no-progress", "--trials", "2", "--out", str(store.parent / "g")]
    refused = invoke(store, *base, "--baseline", "latest", "--fail-on", "regression")
    assert refused.exit_code == EXIT_NOT_JUDGED and "refuses a partial input" in refused.stderr
    judged = invoke(store, *base, "--baseline", "latest", "--allow-partial", "--fail-under", "pass@2=0.01")
    assert judged.exit_code in (0, 1, EXIT_NOT_JUDGED), judged.output
    assert judged.exit_code != 1 or "gate failed" in judged.stderr
