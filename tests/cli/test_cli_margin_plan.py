"""``plan --non-inferior MARGIN``: the library's plans from assumed rates, pilots and paired pilots, and the
cost-per-success plan "no more expensive than", in the command's words."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT
from trialscore.results import read_counts
from trialscore.results.per_success import FIELDS, group_trials, totals_of
from trialscore.stats import plan_cost_non_inferiority, plan_non_inferiority

runner = CliRunner()


def plan(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["plan", *args], env={"COLUMNS": "200", "NO_COLOR": "1"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def pilot_files(tmp_path: Path, items: int = 60, trials: int = 3) -> tuple[Path, Path]:
    """A baseline and a cheaper candidate on the same items: shared difficulty and cost level."""
    rng = np.random.default_rng(0)
    rates, level = rng.beta(4, 2, items), rng.normal(0.0, 0.5, items)
    paths = []
    for name, scale in (("base", 1.0), ("cand", 0.8)):
        rows = [
            {
                "case_id": f"q{i}",
                "trial": t,
                "passed": bool(rng.random() < rates[i]),
                "cost_usd": float(np.exp(level[i] + rng.normal()) * scale),
                "category": "even" if i % 2 == 0 else "odd",
            }
            for i in range(items)
            for t in range(trials)
        ]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
        paths.append(path)
    return paths[0], paths[1]


def test_assumed_pass_rate_is_the_library_plan() -> None:
    code, out, err = plan("--non-inferior", "0.1", "--pass-rate", "0.7", "--trials", "3", "-f", "json")
    assert code == 0, err
    expected = plan_non_inferiority(0.1, pass_rate=0.7, trials=3)
    assert json.loads(out)["plan"] == pytest.approx(expected.to_dict())
    code, out, _ = plan("--non-inferior", "0.1", "--pass-rate", "0.7", "--items", "30", "--alpha", "0.025")
    assert code == 0
    assert f"{plan_non_inferiority(0.1, pass_rate=0.7, items=30, alpha=0.025).trials} " in out
    assert "one-sided paired t-test of H0: delta <= -0.1 at level 0.025" in out
    assert "then: trialscore compare BASELINE CANDIDATE --non-inferior 0.1 --alpha 0.025" in out


def test_a_pilot_plans_each_group(tmp_path: Path) -> None:
    base, cand = pilot_files(tmp_path)
    code, out, err = plan("--non-inferior", "0.1", "--pilot", str(base), "--by", "category", "-f", "json")
    assert code == 0, err
    body = json.loads(out)
    groups = {group.label: group for group in read_counts([base], by=["category"]).groups()}
    assert [entry["label"] for entry in body["plans"]] == ["category=even", "category=odd"]
    for entry in body["plans"]:
        expected = plan_non_inferiority(0.1, pilot=groups[entry["label"]].bank())
        assert entry["items"] == expected.items and entry["achieved_power"] == pytest.approx(
            expected.achieved_power
        )
    code, out, err = plan("--non-inferior", "0.1", "--pilot", str(base), "--pilot-candidate", str(cand))
    assert code == 0, err
    assert "paired pilot of 60 items" in out


@pytest.mark.slow
def test_cost_per_success_plans_from_a_paired_pilot(tmp_path: Path) -> None:
    base, cand = pilot_files(tmp_path)
    args = ["--non-inferior", "0.2", "--metric", "cost-per-success", "--pilot", str(base)]
    code, out, err = plan(*args, "--pilot-candidate", str(cand), "-f", "json")
    assert code == 0, err
    (a,), (b,) = (list(group_trials(read_counts([path], detail=FIELDS))) for path in (base, cand))
    expected = plan_cost_non_inferiority(
        0.2, pilot=totals_of(a, "cost"), pilot_candidate=totals_of(b, "cost")
    )
    assert json.loads(out)["plan"] == pytest.approx(expected.to_dict())
    code, out, _ = plan(*args, "--pilot-candidate", str(cand), "--expected", "0.9")
    assert code == 0 and "when it is truly 0.9 times as expensive" in out
    assert "--non-inferior 0.2 --metric cost-per-success --alpha 0.05" in out
    code, _, err = plan(*args)
    assert (
        code == EXIT_BAD_INPUT
        and "plans from a paired pilot: give --pilot BASELINE and --pilot-candidate" in err
    )


def test_bad_combinations_are_one_line_each(tmp_path: Path) -> None:
    base, _ = pilot_files(tmp_path, items=10)
    for args, words in [
        (["--pass-rate", "0.7", "--delta", "0.1"], "drop --delta, --between and --direction"),
        (["--pass-rate", "0.7", "--pilot", str(base)], "give exactly one of --pass-rate"),
        (["--pass-rate", "0.7", "--metric", "pass@k"], "plans the pass rate (avg) or a per-success metric"),
        (["--pass-rate", "0.7", "--expected", "-0.1"], "--expected + --non-inferior MARGIN must be > 0"),
        (["--pass-rate", "0.7", "--by", "category"], "--by reads a pilot file"),
    ]:
        code, out, err = plan("--non-inferior", "0.1", *args)
        assert code == EXIT_BAD_INPUT and words in err and "Traceback" not in err + out, (args, err)
    code, _, err = plan("--delta", "0.1", "--pass-rate", "0.7", "--expected", "0.1")
    assert code == EXIT_BAD_INPUT and "--expected and --metric go with --non-inferior MARGIN" in err
