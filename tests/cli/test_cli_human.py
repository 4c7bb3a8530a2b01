"""Judged trials in ``score``, ``compare`` and ``plan``: the judge-only mark, human labels that correct
the judge (prediction-powered, the item as the unit), the judge-noise split and the budget plan."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.cli._judged_trials import judged_line
from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.results.judged import JUDGE_ONLY
from trialscore.results.records import JudgeGrade
from trialscore.stats import ppi_interval, ppi_paired_interval

runner = CliRunner()
ITEMS, TRIALS, LABELLED = 120, 4, 40


def _judged(folder: Path, targets: dict[str, float], seed: int = 1) -> dict[str, dict[str, np.ndarray]]:
    """A judged run (one trials.jsonl per target in ``folder/<target>``, and all in ``folder/all``): a
    lenient judge called twice a trial; returns each target's truth and judge verdicts (items x trials)."""
    rng = np.random.default_rng(seed)
    rate = rng.beta(0.6, 0.41, ITEMS)
    lenient = rng.random(ITEMS) < 0.3
    banks: dict[str, dict[str, np.ndarray]] = {}
    every = []
    for target, scale in targets.items():
        truth = rng.random((ITEMS, TRIALS)) < rate[:, None] * scale
        verdict = np.zeros((ITEMS, TRIALS))
        lines = []
        for i in range(ITEMS):
            for t in range(TRIALS):
                calls = []
                for r in range(2):
                    tnr = 0.3 if lenient[i] else 0.85
                    said = bool(rng.random() < 0.95) if truth[i, t] else bool(rng.random() > tnr)
                    calls.append(JudgeGrade(judge="gpt", repeat=r, score=float(said), passed=said))
                passed = calls[0].passed is True
                verdict[i, t] = passed
                lines.append(judged_line(f"q{i:03d}", t, target, calls, passed))
        (folder / target).mkdir(parents=True)
        (folder / target / "trials.jsonl").write_text("\n".join(lines) + "\n")
        every += lines
        banks[target] = {"truth": truth.astype(float), "judge": verdict}
    (folder / "all").mkdir()
    (folder / "all" / "trials.jsonl").write_text("\n".join(every) + "\n")
    return banks


def _labels(path: Path, banks: dict[str, dict[str, np.ndarray]], with_target: bool = True) -> None:
    rows = ["case_id,trial,target,passed" if with_target else "case_id,trial,passed"]
    for target, bank in banks.items():
        for i in range(LABELLED):
            for t in range(TRIALS):
                passed = "true" if bank["truth"][i, t] else "false"
                rows.append(f"q{i:03d},{t},{target},{passed}" if with_target else f"q{i:03d},{t},{passed}")
    path.write_text("\n".join(rows) + "\n")


def _human(bank: dict[str, np.ndarray]) -> np.ndarray:
    return np.where(np.arange(ITEMS)[:, None] < LABELLED, bank["truth"], np.nan)


@pytest.mark.slow
def test_score_with_labels_gives_the_prediction_powered_figures_beside_human_and_judge_only(
    tmp_path: Path,
) -> None:
    banks = _judged(tmp_path, {"m": 1.0})
    _labels(tmp_path / "labels.csv", banks)
    args = ["score", str(tmp_path / "m"), "--k", "1,4", "--human", str(tmp_path / "labels.csv"), "-f", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert "calibration" not in payload  # labelled: no judge-only mark
    (group,) = payload["human"]["groups"]
    assert (group["items"], group["labelled_items"], group["labelled_trials"]) == (
        ITEMS,
        LABELLED,
        LABELLED * TRIALS,
    )
    figures = {f["metric"]: f for f in group["figures"]}
    assert list(figures) == ["pass@1", "pass@4", "pass^4"]
    judge, human = banks["m"]["judge"], _human(banks["m"])
    for name, metric, k in (("pass@1", "pass@1", 1), ("pass@4", "pass@k", 4), ("pass^4", "pass^k", 4)):
        expected = ppi_interval(judge, human, metric, k)
        got = figures[name]["corrected"]
        assert (got["estimate"], got["low"], got["high"]) == pytest.approx(
            (expected.estimate, expected.low, expected.high), abs=1e-12
        )
        labelled = human[:LABELLED]
        truth_mean = {
            "pass@1": labelled.mean(),
            "pass@4": labelled.max(axis=1).mean(),
            "pass^4": labelled.min(axis=1).mean(),
        }
        assert figures[name]["human_only"]["estimate"] == pytest.approx(truth_mean[name], abs=1e-12)
        judged = {
            "pass@1": judge.mean(),
            "pass@4": judge.max(axis=1).mean(),
            "pass^4": judge.min(axis=1).mean(),
        }
        assert figures[name]["judge_only"]["estimate"] == pytest.approx(judged[name], abs=1e-12)
        bias = figures[name]["bias"]
        assert bias["low"] < bias["estimate"] < bias["high"]
    # The lenient judge's bias is measured: it passes wrong outputs.
    assert figures["pass@1"]["bias"]["low"] > 0
    table = runner.invoke(app, args[:-2])
    assert "human labels: target=m: 40 of 120 items labelled (160 trials" in table.stdout
    assert "judge bias (judge - human)" in table.stdout and "corrected (ppi++)" in table.stdout
    assert "must be a random sample" in table.stdout
    assert "judge noise: grader judge, judge gpt" in table.stdout


@pytest.mark.slow
def test_judged_figures_without_labels_say_judge_only_in_every_format(tmp_path: Path, monkeypatch) -> None:
    _judged(tmp_path, {"m": 1.0})
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    table = runner.invoke(app, ["score", str(tmp_path / "m")])
    assert table.exit_code == 0 and JUDGE_ONLY in table.stdout
    assert JUDGE_ONLY in summary.read_text()
    payload = json.loads(runner.invoke(app, ["score", str(tmp_path / "m"), "-f", "json"]).stdout)
    assert payload["calibration"] == JUDGE_ONLY
    assert payload["judge_noise"][0]["variance"]["items"] == ITEMS
    markdown = runner.invoke(app, ["score", str(tmp_path / "m"), "-f", "markdown"]).stdout
    assert JUDGE_ONLY in markdown
    compared = runner.invoke(app, ["compare", str(tmp_path / "m"), str(tmp_path / "m"), "-f", "json"])
    assert json.loads(compared.stdout)["calibration"] == JUDGE_ONLY
    # An input no judge graded carries no mark.
    (tmp_path / "plain.csv").write_text("case_id,trial,passed\nq1,0,1\nq2,0,0\n")
    plain = json.loads(runner.invoke(app, ["score", str(tmp_path / "plain.csv"), "-f", "json"]).stdout)
    assert "calibration" not in plain and "judge_noise" not in plain


@pytest.mark.slow
def test_compare_with_labels_gives_the_paired_difference_by_human_standards(tmp_path: Path) -> None:
    banks = _judged(tmp_path, {"base": 1.0, "cand": 0.8})
    _labels(tmp_path / "labels.csv", banks)
    args = [
        "compare",
        str(tmp_path / "base"),
        str(tmp_path / "cand"),
        "--human",
        str(tmp_path / "labels.csv"),
    ]
    result = runner.invoke(app, [*args, "-f", "json"])
    assert result.exit_code == 0, result.output
    (found,) = json.loads(result.stdout)["human"]["comparisons"]
    expected = ppi_paired_interval(
        banks["cand"]["judge"], _human(banks["cand"]), banks["base"]["judge"], _human(banks["base"])
    )
    got = found["corrected"]
    assert (got["estimate"], got["low"], got["high"]) == pytest.approx(
        (expected.estimate, expected.low, expected.high), abs=1e-12
    )
    truth = banks["cand"]["truth"][:LABELLED].mean(axis=1) - banks["base"]["truth"][:LABELLED].mean(axis=1)
    assert found["human_only"]["estimate"] == pytest.approx(truth.mean(), abs=1e-12)
    assert found["labelled_items"] == LABELLED and found["shared_items"] == ITEMS
    # Two runs of one target need a labels file each.
    _judged(tmp_path / "same", {"m": 1.0})
    _judged(tmp_path / "again", {"m": 0.9}, seed=2)
    _labels(tmp_path / "one.csv", {"m": {"truth": np.ones((ITEMS, TRIALS))}})
    same = [str(tmp_path / "same" / "m"), str(tmp_path / "again" / "m")]
    refused = runner.invoke(app, ["compare", *same, "--human", str(tmp_path / "one.csv")])
    assert refused.exit_code == 2 and "give --human twice" in refused.stderr
    twice = runner.invoke(
        app, ["compare", *same, "--human", str(tmp_path / "one.csv"), "--human", str(tmp_path / "one.csv")]
    )
    assert twice.exit_code == 0, twice.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "case_id,trial,passed\nq000,0,maybe\n",
            "labels.csv line 2: field 'passed' must be true or false (1/0, pass/fail); got 'maybe'",
        ),
        ("case_id,trial,passed\nq000,-1,true\n", "labels.csv line 2: field 'trial' must be a trial index"),
        (
            "case_id,trial,passed\n,0,true\n",
            "labels.csv line 2: field 'case_id' must be a case id (not empty); got ''",
        ),
        (
            "case,passed\nq000,true\n",
            "labels.csv line 1: the header must name the columns case_id and passed",
        ),
        (
            "case_id,trial,passed\nq000,0,true\nq000,0,false\n",
            "labels.csv line 3: case 'q000' is labelled already on line 2",
        ),
        (
            "case_id,trial,passed\nq000,,true\nq000,1,false\n",
            "labels.csv line 3: case 'q000' is labelled already on line 2",
        ),
        (
            "case_id,trial,passed\nnope,0,true\n",
            "labels.csv line 2: field 'case_id' must name a case of the trials; got 'nope'",
        ),
        (
            "case_id,trial,passed\nq000,9,true\n",
            "labels.csv line 2: field 'trial' must name a trial of case 'q000' (0, 1, 2, 3); got 9",
        ),
        (
            "case_id,trial,target,passed\nq000,0,zz,true\n",
            "labels.csv line 2: field 'target' must name a target of the trials (m); got 'zz'",
        ),
    ],
)
def test_bad_label_files_get_one_line_and_exit_2(tmp_path: Path, content: str, message: str) -> None:
    _judged(tmp_path, {"m": 1.0})
    (tmp_path / "labels.csv").write_text(content)
    result = runner.invoke(app, ["score", str(tmp_path / "m"), "--human", str(tmp_path / "labels.csv")])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_labels_naming_no_target_are_refused_when_the_trials_hold_several(tmp_path: Path) -> None:
    banks = _judged(tmp_path, {"a": 1.0, "b": 0.9})
    _labels(tmp_path / "labels.csv", {"a": banks["a"]}, with_target=False)
    result = runner.invoke(app, ["score", str(tmp_path / "all"), "--human", str(tmp_path / "labels.csv")])
    assert result.exit_code == 2
    assert "line 2: field 'target' must name the target when the trials hold several targets" in result.stderr


def test_plan_budget_splits_calls_between_trials_and_judge_repeats(tmp_path: Path) -> None:
    from trialscore.results.judge_split import judge_splits
    from trialscore.results.judged import trial_records
    from trialscore.stats._judge_noise import plan_judge_budget

    _judged(tmp_path, {"m": 1.0})
    result = runner.invoke(
        app, ["plan", "--pilot", str(tmp_path / "m"), "--budget", "3000", "--judge-cost", "0.5", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    (plan,) = json.loads(result.stdout)["plans"]
    (split,) = judge_splits(trial_records(tmp_path / "m")[1])
    expected = plan_judge_budget(split.variance, 3000, judge_cost=0.5)
    assert (plan["trials"], plan["repeats"], plan["se"]) == (expected.trials, expected.repeats, expected.se)
    assert plan["calls"] <= 3000
    (tmp_path / "plain.csv").write_text("case_id,trial,passed\nq1,0,1\n")
    refused = runner.invoke(app, ["plan", "--pilot", str(tmp_path / "plain.csv"), "--budget", "100"])
    assert refused.exit_code == 2 and "--budget reads a run of the runner" in refused.stderr
    neither = runner.invoke(app, ["plan", "--pass-rate", "0.5"])
    assert neither.exit_code == 2 and "give --delta" in neither.stderr
