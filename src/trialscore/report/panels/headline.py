"""The headline panel: per target (or category) pass@1, pass@k and pass^k with intervals, as ``score``
gives them, at one k for every group, side by side and one card per group.

The k is the largest every group allows: the fewest scored trials of any case of any group, so the
side-by-side table and the cards compare like with like.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trialscore._words import plural
from trialscore.report._numbers import number
from trialscore.report.context import ReportContext
from trialscore.report.panel import Built, Panel
from trialscore.results.counts import GroupCounts

__all__ = ["PANEL", "common_k"]


def _interval_view(interval: Any) -> dict[str, str]:
    return {"estimate": number(interval.estimate), "low": number(interval.low), "high": number(interval.high)}


def _interval_note(metrics: Sequence[Any]) -> str:
    """How the card's intervals were made, once (the numbers are in the table above it).

    ``95% wilson-eff intervals over 4 cases (effective number of cases: pass@1 20.9, pass@5 4.17)``.
    """
    intervals = [(m.spec.label, m.interval) for m in metrics if m.interval is not None]
    if not intervals:
        return ""
    methods = ", ".join(dict.fromkeys(f"{i.level * 100:g}% {i.method}" for _, i in intervals))
    note = f"{methods} intervals over {plural(intervals[0][1].n, 'case')}"
    effective = [f"{label} {i.n_effective:.3g}" for label, i in intervals if i.n_effective is not None]
    return note + (f" (effective number of cases: {', '.join(effective)})" if effective else "")


def common_k(groups: dict[str, GroupCounts]) -> int:
    """The largest k every group allows: the fewest scored trials of any case in any group (1 at least)."""
    return max(1, min((group.bank().min_trials for group in groups.values() if group.items), default=1))


def build(context: ReportContext) -> Built:
    """Each group's score card and the side-by-side table of every group at the same k."""
    from trialscore.results.scorecard import metric_specs, score_group
    from trialscore.stats._conventions import convention_line

    settings, groups = context.settings, context.groups
    top = common_k(groups)
    ks = [1] if top <= 1 else [1, top]
    specs = metric_specs(["pass@k", "pass^k"], ks)
    cards: list[dict[str, Any]] = []
    metric_rows: list[list[dict[str, Any]]] = []
    for name, group in groups.items():
        card = score_group(group, specs, "auto", settings.level, 10_000, 0, max(ks))
        metrics = [
            {"label": m.spec.label, **(_interval_view(m.interval) if m.interval else {}), "reason": m.reason}
            for m in card.metrics
        ]
        metric_rows.append(metrics)
        cards.append(
            {
                "name": name,
                "cases": card.items,
                "trials": card.trials,
                "errored": card.errored_trials,
                "flaky": card.flaky_items,
                "metrics": metrics,
                "intervals": _interval_note(card.metrics),
                "advice": [advice.message for advice in card.advice],
            }
        )
    labels = [metric["label"] for metric in metric_rows[0]] if metric_rows else []
    side = [[label, *(metrics[row] for metrics in metric_rows)] for row, label in enumerate(labels)]
    return Built(
        {
            "by": settings.by,
            "k": top,
            "cards": cards,
            "side": side if len(cards) > 1 else None,
            "convention": convention_line("unbiased", settings.errors),
        }
    )


PANEL = Panel("headline", "Headline", "headline.html.j2", build)
