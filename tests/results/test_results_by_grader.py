"""Each grader's verdict as its own group (``read_counts(graders=True)``): counts, errored trials, repeated
grader names, the trials' detail kept with each grader's verdict, and what is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trialscore.errors import EvaluationError
from trialscore.results.by_grader import by_grader
from trialscore.results.per_success import FIELDS, group_trials, per_success_of
from trialscore.results.readers import read_counts


def grade(name: str, passed: bool) -> dict[str, object]:
    return {"name": name, "score": float(passed), "passed": passed}


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def trial(case: str, t: int, target: str, graders: list[dict[str, object]] | None, cost: float = 1.0):  # type: ignore[no-untyped-def]
    """A runner trial record: errored when ``graders`` is None, else passed when every grader passed."""
    if graders is None:
        return {
            "case_id": case,
            "trial": t,
            "target": target,
            "passed": None,
            "verdict": "error",
            "error": "boom",
        }
    passed = all(g["passed"] for g in graders)
    return {
        "case_id": case,
        "trial": t,
        "target": target,
        "passed": passed,
        "verdict": "pass" if passed else "fail",
        "grader_results": graders,
        "cost_usd": cost,
    }


def test_each_grader_is_a_group_beside_the_trial_verdict(tmp_path: Path) -> None:
    rows = []
    for target in ("a", "b"):
        for case in ("q1", "q2"):
            for t in range(3):
                process = not (target == "b" and t == 1)
                rows.append(trial(case, t, target, [grade("answer", True), grade("process", process)]))
    rows.append(trial("q1", 3, "a", None))  # errored: no verdict from any grader
    counts = read_counts([write(tmp_path / "t.jsonl", rows)], by=["target"], graders=True)
    assert counts.trials is None  # the graders' detail was read for the split alone
    got = {
        g.label: (g.item.tolist(), g.graded.tolist(), g.c.tolist(), g.errored.tolist())
        for g in counts.groups()
    }
    assert got == {
        "target=a, grader=(trial)": (["q1", "q2"], [3, 3], [3, 3], [1, 0]),
        "target=a, grader=answer": (["q1", "q2"], [3, 3], [3, 3], [1, 0]),
        "target=a, grader=process": (["q1", "q2"], [3, 3], [3, 3], [1, 0]),
        "target=b, grader=(trial)": (["q1", "q2"], [3, 3], [2, 2], [0, 0]),
        "target=b, grader=answer": (["q1", "q2"], [3, 3], [3, 3], [0, 0]),
        "target=b, grader=process": (["q1", "q2"], [3, 3], [2, 2], [0, 0]),
    }
    assert any("scored per grader: 2 graders (answer, process)" in note for note in counts.stats.notes)


def test_detail_keeps_each_graders_verdict_for_the_per_success_metrics(tmp_path: Path) -> None:
    rows = [
        trial("q1", 0, "a", [grade("answer", True), grade("process", False)], cost=2.0),
        trial("q1", 1, "a", [grade("answer", True), grade("process", True)], cost=4.0),
        trial("q2", 0, "a", [grade("answer", False), grade("process", True)], cost=6.0),
        trial("q2", 1, "a", [grade("answer", True), grade("process", True)], cost=8.0),
    ]
    counts = read_counts([write(tmp_path / "t.jsonl", rows)], detail=FIELDS, graders=True)
    figures = {
        group.label: per_success_of(group, "cost-per-success").estimate for group in group_trials(counts)
    }
    assert figures == {
        "target=a, grader=(trial)": pytest.approx(20.0 / 2),
        "target=a, grader=answer": pytest.approx(20.0 / 3),
        "target=a, grader=process": pytest.approx(20.0 / 3),
    }


def test_missing_verdicts_and_repeated_names(tmp_path: Path) -> None:
    rows = [
        trial("q1", 0, "a", [grade("contains", True), grade("contains", False)]),
        trial("q1", 1, "a", [grade("contains", True)]),  # the second contains gave no verdict here
    ]
    counts = read_counts([write(tmp_path / "t.jsonl", rows)], graders=True)
    got = {g.label: (g.graded.tolist(), g.c.tolist(), g.errored.tolist()) for g in counts.groups()}
    assert got["grader=contains"] == ([2], [2], [0])
    assert got["grader=contains#2"] == ([1], [0], [1])
    assert "grader contains#2: 1 graded trial without its verdict, counted as errored" in counts.stats.notes


def test_what_cannot_be_split(tmp_path: Path) -> None:
    plain = write(tmp_path / "plain.jsonl", [{"case_id": "q", "trial": 0, "passed": True}])
    with pytest.raises(EvaluationError, match="the trials hold no grader results"):
        read_counts([plain], graders=True)
    column = write(
        tmp_path / "column.jsonl",
        [{**trial("q", 0, "a", [grade("answer", True)]), "grader": "x"}],
    )
    with pytest.raises(EvaluationError, match="already have a group column named 'grader'"):
        read_counts([column], by=["grader"], graders=True)
    with pytest.raises(EvaluationError, match="read the counts with detail"):
        by_grader(read_counts([plain]))
