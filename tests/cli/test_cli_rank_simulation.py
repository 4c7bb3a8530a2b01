"""Seeded simulation of ``trialscore rank --pareto`` (issue 28, item 2): P(on front) of each run as the
command computes it from the run's trial file (the core of :func:`~trialscore.stats.cost_success_front`
on the trials it reads, on resamples of the simulation's own); the first runs end to end too (trial
file written, read by the command, P(on front) taken from its JSON), checked equal to the core on the
command's resamples.

Two-level model: 200 items, item ``i`` with a pass rate ``p_i ~ Beta(4, 2)`` and a cost level
``w_i ~ N(0, 0.5^2)`` shared by every target; target ``t`` passes a trial of item ``i`` with probability
``logistic(logit(p_i) + a_t)`` and a trial costs ``exp(b_t + w_i + e)``, ``e ~ N(0, 1)`` (log-normal,
sigma 1); 3 trials per item and target, a few trials of unknown cost and a few errored.  Five
targets: three truly on the front, one close below it (a little worse and a little dearer than a
front target) and one far below it.  True pass rates are the population means (by quadrature over
Beta(4, 2)), true costs per task ``exp(b_t + 0.125 + 0.5)``.  Claim: targets truly on the front get
P(on front) of at least 0.9 in at least 90% of runs.  Run with ``-m slow -s`` to print the figures
quoted in docs/agents.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner
from scipy import integrate, stats
from scipy.special import expit, logit
from typer.main import get_command

from tests.stats._weights import resample_weights
from tests.stats.test_front_simulation import check_calibration
from trialscore.cli import app
from trialscore.stats._effort import ItemTotals, item_totals
from trialscore.stats._front import _BLOCK, _columns, _front_shares, _shared_rows, dominated
from trialscore.stats._resampling import item_weights

ITEMS = 200
TRIALS = 3
RUNS = 200
RESAMPLES = 1000
#: target -> (shift of the logit of its pass rate, log of its cost level)
TARGETS = {
    "cheap": (-1.0, np.log(0.05)),
    "middle": (0.0, np.log(0.2)),
    "strong": (1.0, np.log(1.0)),
    "near": (-0.2, np.log(0.24)),
    "far": (0.3, np.log(1.5)),
}
#: Shares of trials written with no cost, and errored (no outcome).
UNKNOWN_COST, ERRORED = 0.02, 0.01


def true_front() -> np.ndarray:
    beta = stats.beta(4, 2)
    rates = [
        integrate.quad(lambda p, a=a: float(expit(logit(p) + a)) * float(beta.pdf(p)), 0, 1)[0]
        for a, _ in TARGETS.values()
    ]
    costs = [np.exp(b + 0.125 + 0.5) for _, b in TARGETS.values()]
    return ~dominated(np.array([rates]), np.array([costs]))[0]


#: Each trial's item, and the trials in the order the command reads them (by id: "item-10" before "item-2").
ITEM = np.repeat(np.arange(ITEMS), TRIALS)
READ_ORDER = np.argsort(np.array([f"item-{i}" for i in ITEM]), kind="stable")
#: Runs that also go through the command (trial file written, read, JSON), checked equal to the direct front.
END_TO_END = 3

#: One run: per target, each trial's (passed, cost, cost unknown, errored).
Run = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


def draw_run(rng: np.random.Generator) -> Run:
    rate = rng.beta(4, 2, ITEMS)
    level = rng.normal(0.0, 0.5, ITEMS)
    run = {}
    for name, (a, b) in TARGETS.items():
        passed = rng.random(ITEM.size) < expit(logit(rate[ITEM]) + a)
        cost = np.exp(b + level[ITEM] + rng.normal(0.0, 1.0, ITEM.size))
        run[name] = (passed, cost, rng.random(ITEM.size) < UNKNOWN_COST, rng.random(ITEM.size) < ERRORED)
    return run


def write_run(run: Run, path: Path) -> Path:
    trial = np.tile(np.arange(TRIALS), ITEMS)
    lines = []
    for name, (passed, cost, unknown, errored) in run.items():
        # The lines json.dumps writes for these records, formatted directly (json writes a float as repr).
        outcome = np.where(errored, "null", np.where(passed, "true", "false"))
        verdict = np.where(errored, "error", np.where(passed, "pass", "fail"))
        lines.extend(
            f'{{"case_id": "item-{i}", "trial": {t}, "target": "{name}", "passed": {o}, '
            f'"verdict": "{v}", "cost_usd": {"null" if u else repr(c)}}}'
            for i, t, o, v, u, c in zip(
                ITEM.tolist(), trial.tolist(), outcome.tolist(), verdict.tolist(), unknown.tolist(),
                cost.tolist(), strict=True,
            )
        )  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def totals_of(run: Run) -> dict[str, ItemTotals]:
    """Each target's per-item totals as the command reads the run's file: errored trials left out,
    unknown costs NaN, items in the order it reads them."""
    totals = {}
    for name, (passed, cost, unknown, errored) in run.items():
        kept = READ_ORDER[~errored[READ_ORDER]]
        totals[name] = item_totals(ITEM[kept].tolist(), passed[kept], np.where(unknown, np.nan, cost)[kept])
    return totals


def front_of(totals: dict[str, ItemTotals], weights: Callable[[int], Iterable[np.ndarray]]) -> np.ndarray:
    """P(on front) of each target by cost_success_front's core, on ``weights(items)`` of the shared items."""
    rows, _ = _shared_rows(totals)
    rates, costs, tried = _columns(totals, rows)
    return _front_shares(rates, costs, tried, weights(rates.shape[0]))


def command_front(run: Run, seed: int, path: Path, command: click.Command) -> np.ndarray:
    """P(on front) of each target from ``rank --pareto``'s JSON on the run's trial file."""
    write_run(run, path)
    args = ["rank", str(path), "--pareto", "--resamples", str(RESAMPLES), "--seed", str(seed), "-f", "json"]
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 0, result.output
    models = {entry["model"]["target"]: entry for entry in json.loads(result.stdout)["models"]}
    assert not json.loads(result.stdout)["cost_unknown"]
    return np.array([models[name]["p_on_front"] for name in TARGETS])


@pytest.mark.slow
def test_rank_pareto_gives_targets_truly_on_the_front_at_least_0_9_in_90_percent_of_runs(
    tmp_path: Path,
) -> None:
    on = true_front()
    assert on.tolist() == [True, True, True, False, False]
    rng = np.random.default_rng(2028)
    command = get_command(app)  # the command line as the trialscore script runs it, built once for every run
    resampling = np.random.default_rng(2029)
    probabilities = []
    for seed in range(RUNS):
        run = draw_run(rng)
        totals = totals_of(run)
        probabilities.append(front_of(totals, lambda items: [resample_weights(resampling, RESAMPLES, items)]))
        if seed < END_TO_END:  # the command gives what the core gives on the command's own resamples
            own = front_of(totals, lambda items, seed=seed: item_weights(items, RESAMPLES, seed, _BLOCK))
            from_command = command_front(run, seed, tmp_path / "trials.jsonl", command)
            assert from_command.tolist() == own.tolist(), seed
    check_calibration(np.array(probabilities), on, list(TARGETS))
