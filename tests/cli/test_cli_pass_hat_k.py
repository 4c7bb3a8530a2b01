"""Every output that shows pass^k says which one it is: ``score --pass-hat-k unbiased|plugin`` with
``--errors exclude|fail``, ``compare``, and the run's summary, table and gates.

tau2-bench#497 asks which of two documented conventions produced tau2-bench's published pass^k.
The two numbers it is about: tau2-bench's v1.0.1 release notes publish, for the same trajectories,
grok-4-1-fast's pass^4 as 5.21 and then 5.15 (gemini-2-5-pro's as 1.08 and then 1.03), the drop
"from that convention alignment": infrastructure errors were first *excluded* (tau2-bench's
``compute_metrics``: errored simulations dropped, a task whose every trial errored leaves the mean)
and then *counted as failed trials* (the leaderboard since v1.0.1).  With the unbiased estimator
C(c,k)/C(n,k) of both, 5/96 = 5.21% and 5/97 = 5.15% (1/93 = 1.08%, 1/97 = 1.03%): 97 tasks of 4
trials, 5 (or 1) always solved, 1 (or 4) whose every trial was an infrastructure error, the rest
solved 2 of 4 (C(2,4) = 0).  The fixtures are tau2-bench Results files with those counts, written by
tests/results/fixtures/tau-bench/make_fixtures.py in tau2-bench's own format and read by the
tau2-bench reader; ``score --errors exclude`` gives the first number and ``--errors fail`` the
second, each saying which convention it is.  The plug-in (c/n)^k of seed 000 is a third number on
the same file.
"""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.results._tau import tau2_497_file, tau_fixtures
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT

UNBIASED = "pass^k: unbiased C(c,k)/C(n,k) per item (Yao et al. 2024), mean over items"
PLUGIN = "pass^k: plug-in (c/n)^k per item (seed 000's passToTheK), mean over items"
EXCLUDED = "errored trials left out of n; items whose every trial errored left out of the mean"
FAILED = "errored trials counted as failed trials"

runner = CliRunner()


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def unwrapped(text: str) -> str:
    """A table's output with its notes unwrapped (lines joined, runs of spaces as one)."""
    return " ".join(text.split())


def pass_hat_4(path: Path, *args: str) -> dict[str, object]:
    code, out, err = cli("score", str(path), "--metric", "pass^k", "--k", "4", *args, "-f", "json")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    (metric,) = group["metrics"]
    return dict(metric)


@pytest.mark.parametrize(
    ("model", "solved", "all_errored", "excluded", "failed"),
    [("grok-4-1-fast", 5, 1, "5.21", "5.15"), ("gemini-2-5-pro", 1, 4, "1.08", "1.03")],
)
@pytest.mark.slow
def test_score_gives_both_published_numbers_of_tau2_bench_497_and_says_which(
    tmp_path: Path, model: str, solved: int, all_errored: int, excluded: str, failed: str
) -> None:
    path = tau2_497_file(tmp_path, model, solved, all_errored)
    dropped, counted = pass_hat_4(path, "--errors", "exclude"), pass_hat_4(path, "--errors", "fail")
    assert f"{100 * dropped['estimate']:.2f}" == excluded  # type: ignore[operator]
    assert f"{100 * counted['estimate']:.2f}" == failed  # type: ignore[operator]
    assert dropped["estimate"] == pytest.approx(float(Fraction(solved, 97 - all_errored)), rel=1e-12)
    assert counted["estimate"] == pytest.approx(float(Fraction(solved, 97)), rel=1e-12)
    assert dropped["convention"] == {
        "estimator": "unbiased",
        "formula": UNBIASED.removeprefix("pass^k: "),
        "errors": "exclude",
        "errored_trials": EXCLUDED,
    }
    assert counted["convention"]["errors"] == "fail"  # type: ignore[index]
    assert counted["convention"]["errored_trials"] == FAILED  # type: ignore[index]
    code, table, _ = cli("score", str(path), "--metric", "pass^k", "--k", "4", "--errors", "fail")
    assert code == 0 and f"{UNBIASED}; {FAILED}" in unwrapped(table)
    assert f"{all_errored} item{'s' if all_errored > 1 else ''} with every trial errored" in table


@pytest.mark.slow
def test_the_plugin_convention_is_a_third_number_on_the_same_file(tmp_path: Path) -> None:
    path = tau2_497_file(tmp_path, "grok-4-1-fast", 5, 1)
    plugin = pass_hat_4(path, "--errors", "fail", "--pass-hat-k", "plugin")
    # (2/4)^4 = 1/16 for each of the 91 tasks solved 2 of 4, where C(2,4)/C(4,4) = 0; 0 for the errored task
    assert plugin["estimate"] == pytest.approx(float((5 + Fraction(91, 16)) / 97), rel=1e-12)
    assert plugin["label"] == "pass^4 (plug-in)" and plugin["convention"]["estimator"] == "plugin"  # type: ignore[index]
    code, table, _ = cli("score", str(path), "--metric", "pass^k", "--k", "4", "--pass-hat-k", "plugin")
    assert code == 0 and "pass^4 (plug-in)" in table and f"{PLUGIN}; {EXCLUDED}" in unwrapped(table)


def test_tau_bench_display_metrics_through_score_is_the_fail_convention(tmp_path: Path) -> None:
    """tau-bench's run.py scores a run that raised 0 and averages C(c,k)/C(n,k) over tasks."""
    rewards = {0: [1.0, 1.0, 1.0], 1: [1.0, None, 1.0], 2: [0.0, 1.0, 1.0], 3: [None, None, None]}
    path = tmp_path / "tool-calling-gpt-4o-0.0_range_0-4_user-gpt-4o-llm_1122203000.json"
    path.write_text(json.dumps(tau_fixtures().tau_bench_run(rewards)))
    c = [sum(1 for r in runs if r == 1.0) for runs in rewards.values()]
    code, out, err = cli(
        "score", str(path), "--metric", "pass^k", "--k", "1,2,3", "--errors", "fail", "-f", "json"
    )
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    for k, metric in zip((1, 2, 3), group["metrics"], strict=True):
        display = sum(Fraction(comb(ci, k), comb(3, k)) for ci in c) / len(c)
        assert metric["estimate"] == pytest.approx(float(display), rel=1e-12)
        assert metric["convention"]["errors"] == "fail"


@pytest.mark.slow
def test_every_format_states_the_convention(tmp_path: Path) -> None:
    path = tau2_497_file(tmp_path, "grok-4-1-fast", 5, 1)
    args = ["score", str(path), "--metric", "pass@k,pass^k", "--k", "1,2", "--errors", "fail"]
    code, markdown, _ = cli(*args, "-f", "markdown")
    assert code == 0 and f"- {UNBIASED}; {FAILED}" in markdown
    code, text, _ = cli(*args, "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {row["convention"] for row in rows if row["metric"] == "pass^k"} == {f"{UNBIASED}; {FAILED}"}
    assert {row["convention"] for row in rows if row["metric"] == "pass@k"} == {""}
    summary = tmp_path / "step-summary.md"
    code, _, _ = cli(*args, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 0 and f"{UNBIASED}; {FAILED}" in summary.read_text()
    code, out, _ = cli(*args, "-f", "json")
    metrics = json.loads(out)["groups"][0]["metrics"]
    assert [("convention" in m) for m in metrics] == [False, False, True, True]  # pass^k only


@pytest.mark.slow
def test_plugin_intervals_and_what_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(
        "case_id,trial,passed\n"
        + "".join(f"q{i},{t},{int((i + t) % 3 != 0)}\n" for i in range(9) for t in range(3))
    )
    wide = pass_hat_4(path, "--pass-hat-k", "plugin")  # k = 4 > 3 trials: the plug-in is defined
    assert wide["estimate"] == pytest.approx(float(Fraction(2, 3) ** 4), rel=1e-12)
    assert 0 < wide["interval"]["low"] < wide["estimate"] < wide["interval"]["high"] < 1  # type: ignore[index]
    same = pass_hat_4(path, "--pass-hat-k", "plugin", "--ci", "bootstrap")  # every item 2 of 3: no spread
    assert same["interval"] == {**wide["interval"], "method": "wilson-eff (the bootstrap had no spread)"}  # type: ignore[dict-item]
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(
        "case_id,trial,passed\n"
        + "".join(f"q{i},{t},{int(t < i % 4)}\n" for i in range(12) for t in range(3))
    )
    boot = pass_hat_4(mixed, "--pass-hat-k", "plugin", "--ci", "bootstrap")
    expected = sum(Fraction(min(i % 4, 3), 3) ** 4 for i in range(12)) / 12
    assert boot["estimate"] == pytest.approx(float(expected), rel=1e-12)
    assert boot["interval"]["method"].startswith("bootstrap percentile")  # type: ignore[index]
    code, _, err = cli("score", str(path), "--metric", "pass^k", "--k", "4")
    assert code == EXIT_BAD_INPUT and "pass^4 cannot be computed in any group" in err
    code, _, err = cli(
        "score", str(path), "--metric", "pass^k", "--k", "2", "--pass-hat-k", "plugin", "--ci", "wilson"
    )
    assert code == EXIT_BAD_INPUT and "--ci wilson is not offered for it" in err
    code, _, err = cli("score", str(path), "--pass-hat-k", "biased")
    assert code == 2 and "biased" in err


@pytest.mark.slow
def test_compare_and_the_run_state_their_convention(tmp_path: Path) -> None:
    path = tau2_497_file(tmp_path, "grok-4-1-fast", 5, 1)
    code, out, _ = cli("compare", str(path), str(path), "--metric", "pass^k", "--k", "4", "-f", "json")
    assert code == 0 and json.loads(out)["comparisons"][0]["convention"]["errored_trials"] == EXCLUDED
    code, out, _ = cli("compare", str(path), str(path), "--metric", "pass^k", "--k", "4", "--errors", "fail")
    assert code == 0 and f"{UNBIASED}; {FAILED}" in unwrapped(out)
    code, out, _ = cli("compare", str(path), str(path), "--metric", "pass@k", "--k", "4", "-f", "json")
    assert "convention" not in json.loads(out)["comparisons"][0]
    store, folder = tmp_path / "store.sqlite", tmp_path / "run"
    code, out, err = cli(
        "run",
        "--demo",
        "--out",
        str(folder),
        "--store",
        str(store),
        "--no-progress",
        "--fail-under",
        "pass^3=0.1",
    )
    assert code == 0, err
    assert (
        unwrapped(out).count(f"{UNBIASED}; {EXCLUDED}") == 2
    )  # under the run's metrics, and under its gates
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["conventions"]["pass_hat_k"]["estimator"] == "unbiased"
    assert summary["conventions"]["pass_to_the_k"]["estimator"] == "plugin"
    for target in summary["targets"].values():
        assert target["metrics"]["pass_hat_k"]["convention"]["errors"] == "exclude"
