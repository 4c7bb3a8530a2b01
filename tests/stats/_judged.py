"""A judged eval in the two-level model: items with different pass rates, trials, a judge that errs.

Item pass rates come from the u-shaped (bimodal) population of ``_populations`` (Beta(0.6, 0.41)).
The human label of a trial is its true outcome; the judge passes a correct output with
probability ``tpr`` and fails a wrong one with probability ``tnr`` -- except on a random
``lenient`` share of items, where it fails a wrong one only with probability ``LENIENT_TNR`` (a
judge biased on some items, as real judges are).  Everything is kept as counts per item, for
many data sets at once: drawn as binomial counts (:func:`draw`), or trial by trial for a bank
that serves several trial counts, judges and targets at once (:func:`draw_bank`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tests.stats._populations import BETAS

A, B = BETAS["u-shaped"]
#: The judge's true-negative rate on the items it is lenient on.
LENIENT_TNR = 0.3
#: The two judges of the issue's grid: (TPR, TNR, share of items it is lenient on).
JUDGES = {"lenient": (0.95, 0.85, 0.3), "even": (0.9, 0.9, 0.0)}


@dataclass(frozen=True)
class Counts:
    """Per data set (rows) and item (columns): human passes, judge passes, judge passes of correct trials."""

    human: np.ndarray
    judge: np.ndarray
    agree_pass: np.ndarray
    trials: int


def draw(rng: np.random.Generator, reps: int, items: int, trials: int, judge: str) -> Counts:
    """``reps`` data sets of ``items`` items at one trial count and judge, drawn as binomial counts."""
    tpr, tnr, lenient = JUDGES[judge]
    rates = rng.beta(A, B, (reps, items))
    tnr_item = np.where(rng.random(rates.shape) < lenient, LENIENT_TNR, tnr)
    human = rng.binomial(trials, rates)
    agree = rng.binomial(human, tpr)
    return Counts(human, agree + rng.binomial(trials - human, 1.0 - tnr_item), agree, trials)


def draw_bank(
    rng: np.random.Generator, reps: int, items: int, trials: tuple[int, ...], scales: tuple[float, ...]
) -> dict[tuple[str, int, float], Counts]:
    """``reps`` data sets of ``items`` items judged by every judge: counts per trial count and target.

    A data set has ``max(trials)`` trials of each item for each target; ``scales`` multiply the
    item's rate for each target (all on the same items, the judge lenient on the same items).
    Key ``(judge, t, scale)`` counts the first ``t`` trials of each item.  Every trial is a
    uniform compared with its pass probability (float32 uniforms: a Bernoulli as ``u < p``), and
    the judges share the uniforms, so one bank serves every cell of the grid.
    """
    rates = rng.beta(A, B, (reps, items))
    share = rng.random(rates.shape)  # an item is lenient where this is below the judge's lenient share
    false_pass = {
        judge: np.where(share < lenient, 1.0 - LENIENT_TNR, 1.0 - tnr).astype(np.float32)
        for judge, (_, tnr, lenient) in JUDGES.items()
    }
    out: dict[tuple[str, int, float], Counts] = {}
    for scale in scales:
        rate = (scale * rates).astype(np.float32)
        human = np.zeros(rates.shape, np.int8)
        judged = {judge: (np.zeros_like(human), np.zeros_like(human)) for judge in JUDGES}
        for t in range(1, max(trials) + 1):
            passed = rng.random(rates.shape, dtype=np.float32) < rate
            verdict = rng.random(rates.shape, dtype=np.float32)
            human += passed
            for judge, (passes, agree) in judged.items():
                said = np.where(passed, verdict < JUDGES[judge][0], verdict < false_pass[judge])
                passes += said
                agree += said & passed
            if t in trials:
                counted = human.copy()
                for judge, (passes, agree) in judged.items():
                    out[judge, t, scale] = Counts(counted, passes.copy(), agree.copy(), t)
    return out


def beta_moment(k: int, scale: float = 1.0) -> float:
    """``E[(scale p)^k]`` for the population's ``p``."""
    return scale**k * math.prod((A + j) / (A + B + j) for j in range(k))


def truth(metric: str, k: int, scale: float = 1.0) -> float:
    """The population value of pass@1, pass@k or pass^k (``E[1 - (1 - s p)^k]`` by the binomial theorem)."""
    if metric == "pass@1":
        return beta_moment(1, scale)
    if metric == "pass^k":
        return beta_moment(k, scale)
    return -sum(math.comb(k, j) * (-1) ** j * beta_moment(j, scale) for j in range(1, k + 1))


def value_table(metric: str, k: int, trials: int) -> np.ndarray:
    """The metric's unbiased per-item value at each count ``0..trials`` (math.comb)."""
    c = range(trials + 1)
    if metric == "pass@1":
        return np.array([x / trials for x in c])
    if metric == "pass^k":
        return np.array([math.comb(x, k) / math.comb(trials, k) for x in c])
    return np.array([1 - math.comb(trials - x, k) / math.comb(trials, k) for x in c])


def trial_rows(counts: Counts, labelled: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trial rows of each data set: human and judge of the labelled items' trials, judge of the others'."""
    t = np.arange(counts.trials)
    human, judge, agree = (part[..., None] for part in (counts.human, counts.judge, counts.agree_pass))
    # Per item: ``agree`` trials pass both, then passes of the human only, then of the judge only.
    y = (t < human)[:, :labelled]
    f = ((t < agree) | ((t >= human) & (t < human + judge - agree)))[:, :labelled]
    u = (t < judge)[:, labelled:]
    reps = counts.human.shape[0]
    return (part.reshape(reps, -1).astype(np.float64) for part in (y, f, u))  # type: ignore[return-value]
