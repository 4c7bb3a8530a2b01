"""``compare``'s other questions: a change in cost per success, and "is the candidate no worse?".

Each function returns one group's comparison as ``compare`` prints it (``baseline_score``,
``candidate_score``, ``delta``, ``interval``, ``p_value``, ``verdict``, ``rule``, ``notes``):

* :func:`ratio_comparison`: a metric of trial values (``cost-per-success``...): the paired ratio
  candidate / baseline (:func:`~trialscore.stats.compare_per_success`), or with a margin the test
  "no more expensive than" (:func:`~trialscore.stats.cost_non_inferiority`); ``delta`` is the ratio;
* :func:`non_inferior_comparison`: a metric of counts with a margin
  (:func:`~trialscore.stats.non_inferiority`).

With a margin the verdict is ``non-inferior``, ``inferior`` or ``inconclusive``, and the body
states the margin, the test and its one-sided level; ``compare --non-inferior`` passes its gate
only when every group judged is ``non-inferior``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trialscore._words import plural
from trialscore.cli._per_success import unknown_line

if TYPE_CHECKING:
    from trialscore.results.counts import GroupCounts
    from trialscore.results.per_success import GroupTrials
    from trialscore.results.scorecard import MetricSpec
    from trialscore.stats import NonInferiority

__all__ = ["gate_line", "non_inferior_comparison", "ratio_comparison"]


def _margin_body(result: NonInferiority) -> dict[str, Any]:
    return {
        "design": "non-inferiority",
        "delta": result.estimate,
        "interval": result.interval.to_dict(),
        "p_value": None,
        "verdict": result.verdict,
        "rule": result.rule,
        "notes": list(result.notes),
        "paired_items": result.paired_items,
        "non_inferiority": {
            "margin": result.margin,
            "bound": result.bound,
            "test": result.test,
            "alpha": result.alpha,
            "one_sided_level": 1 - result.alpha,
            "passed": result.passed,
        },
    }


def ratio_comparison(
    base: GroupTrials, cand: GroupTrials, spec: MetricSpec, alpha: float, margin: float | None
) -> dict[str, Any]:
    """One group's comparison of a metric of trial values: the paired ratio candidate / baseline."""
    from trialscore.results.per_success import quantity_of, totals_of
    from trialscore.stats import compare_per_success, cost_non_inferiority, paired_ratio

    quantity = quantity_of(spec.metric)
    totals_a, totals_b = totals_of(base, quantity), totals_of(cand, quantity)
    unknown = [
        unknown_line(run, quantity, totals.unknown_positions, group)
        for run, totals, group in (("baseline", totals_a, base), ("candidate", totals_b, cand))
        if totals.unknown_trials
    ]
    common = {"metric": spec.label, "design": "paired ratio"}
    if margin is not None:
        result = cost_non_inferiority(totals_a, totals_b, margin, alpha=alpha, quantity=quantity)
        figures = paired_ratio(totals_a, totals_b, 1 - 2 * alpha, quantity)
        body = _margin_body(result)
        body["notes"] += unknown
        return {
            **body,
            "metric": spec.label,
            "baseline_score": figures.baseline,
            "candidate_score": figures.candidate,
        }
    paired = compare_per_success(totals_a, totals_b, alpha, quantity)
    return {
        **common,
        "baseline_score": paired.baseline,
        "candidate_score": paired.candidate,
        "delta": paired.ratio,
        "interval": paired.interval.to_dict(),
        "p_value": None,
        "verdict": paired.verdict,
        "rule": paired.rule,
        "notes": [
            *paired.notes,
            *unknown,
            f"delta is the ratio candidate / baseline of {quantity} per success",
        ],
        "paired_items": paired.paired_items,
    }


def non_inferior_comparison(
    base: GroupCounts, cand: GroupCounts, spec: MetricSpec, alpha: float, margin: float
) -> dict[str, Any]:
    """One group's non-inferiority verdict on a metric of counts, paired by item."""
    from trialscore.stats import non_inferiority

    result = non_inferiority(
        base.bank(),
        cand.bank(),
        margin,
        spec.metric.name,
        spec.k,
        spec.tau,
        ids_baseline=base.item[base.n > 0].tolist(),
        ids_candidate=cand.item[cand.n > 0].tolist(),
        alpha=alpha,
    )
    comparison = result.comparison
    assert comparison is not None
    body = _margin_body(result)
    body.update(
        metric=spec.label,
        baseline_score=comparison.baseline,
        candidate_score=comparison.candidate,
        only_in_baseline=comparison.to_dict().get("only_in_baseline"),
        only_in_candidate=comparison.to_dict().get("only_in_candidate"),
    )
    return body


def gate_line(comparisons: list[dict[str, Any]], untested: list[str]) -> tuple[bool, str]:
    """Whether the non-inferiority gate passes (every group judged, and non-inferior), and its line: a
    group that could not be tested is not shown non-inferior."""
    if not comparisons:
        return False, "COULD NOT JUDGE (no group could be tested)"
    failed = [c["label"] for c in comparisons if c["verdict"] != "non-inferior"] + list(untested)
    judged = f"{plural(len(comparisons), 'group')} judged" + (
        f", {len(untested)} not tested" if untested else ""
    )
    if failed:
        return False, f"FAILED (not shown non-inferior: {', '.join(failed)}; {judged})"
    return True, f"passed (every group non-inferior; {judged})"
