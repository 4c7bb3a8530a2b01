"""``rank --pareto``: the cost-success front of the models, with intervals and P(on the front).

Each model's pass rate, cost per task and cost per success with intervals, whether it is on the
observed cost-success front, and the probability from a bootstrap over items that it is
(:func:`~trialscore.stats.cost_success_front`).  Trials of unknown cost are left out of the
figures, counted and named; a model with no trial of known cost is named and left off the front
(an unknown cost is never taken as free).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trialscore._words import plural
from trialscore.cli._options import JSON_VERSION
from trialscore.cli._per_success import carried, unknown_line
from trialscore.cli._render import Report, Section, bounds
from trialscore.cli.score import rows_line
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.results.counts import ItemCounts
    from trialscore.results.per_success import GroupTrials
    from trialscore.stats import FrontPoint

__all__ = ["front_report"]


def _row(point: FrontPoint) -> list[object]:
    """A model's row of the front's table (figures with their intervals)."""
    return [
        point.target,
        bounds(point.pass_rate),
        bounds(point.cost_per_task),
        bounds(point.cost_per_success),
        point.on_front,
        f"{point.front_probability:.3f}",
    ]


def _flat(points: list[FrontPoint], unpriced: dict[str, int]) -> Section:
    """The front as CSV: one row per model, each figure's estimate and bounds in columns of their own."""
    header = ["model"]
    for figure in ("pass_rate", "cost_per_task", "cost_per_success"):
        header += [figure, f"{figure}_low", f"{figure}_high"]
    header += ["on_front", "p_on_front", "unknown_cost_trials"]
    rows: list[list[object]] = []
    for point in points:
        row: list[object] = [point.target]
        for interval in (point.pass_rate, point.cost_per_task, point.cost_per_success):
            row += [None] * 3 if interval is None else [interval.estimate, interval.low, interval.high]
        rows.append([*row, point.on_front, point.front_probability, point.unknown_cost_trials])
    rows += [[label, *([None] * 11), trials] for label, trials in unpriced.items()]
    return Section(header, rows)


def front_report(
    counts: ItemCounts,
    models: list[GroupTrials],
    groups_by: list[str],
    level: float,
    resamples: int,
    seed: int,
) -> Report:
    """The cost-success front of ``models`` (read as ``counts``, grouped by ``groups_by``): each
    model's figures with intervals and its probability of being on it."""
    from trialscore.results.per_success import totals_of
    from trialscore.stats import cost_success_front

    totals = {model.label: totals_of(model, "cost") for model in models}
    priced = [label for label, own in totals.items() if int(own.trials.sum()) > 0]
    carried(models, "cost", "rank --pareto")
    if len(priced) < 2:
        raise EvaluationError(
            f"rank --pareto needs at least 2 models with a known cost to draw a front; only {priced[0]} has "
            f"one (no trial of the others has a known cost, and an unknown cost is never taken as free)"
        )
    unpriced = [label for label in totals if label not in priced]
    priced_totals = {label: totals[label] for label in priced}
    front = cost_success_front(priced_totals, level=level, replicates=resamples, seed=seed)
    by_label = {model.label: model for model in models}
    points = sorted(front.points, key=lambda point: (point.cost_per_task.estimate, -point.pass_rate.estimate))
    unknown = {
        label: unknown_line(label, "cost", totals[label].unknown_positions, by_label[label])
        for label in priced
        if totals[label].unknown_trials
    }
    entries = [
        {
            "model": dict(by_label[point.target].counts.key),
            "label": point.target,
            "pass_rate": point.pass_rate.to_dict(),
            "cost_per_task": point.cost_per_task.to_dict(),
            "cost_per_success": None if point.cost_per_success is None else point.cost_per_success.to_dict(),
            "on_front": point.on_front,
            "p_on_front": point.front_probability,
            "unknown_cost_trials": totals[point.target].unknown_trials,
            "unknown_cost": by_label[point.target].named(totals[point.target].unknown_positions),
        }
        for point in points
    ]
    payload: dict[str, Any] = {
        "command": "rank",
        "version": JSON_VERSION,
        "by": groups_by,
        "pareto": {
            "level": level,
            "resamples": resamples,
            "seed": seed,
            "method": front.method,
            "front": [point.target for point in points if point.on_front],
        },
        "items": front.items,
        "items_not_shared": front.items_dropped,
        "models": entries,
        "cost_unknown": [
            {"label": label, "model": dict(by_label[label].counts.key), "trials": len(by_label[label].items)}
            for label in unpriced
        ],
        "rows": counts.stats.to_dict(),
    }
    header = [
        "model",
        "pass rate",
        "cost per task (USD)",
        "cost per success (USD)",
        "on front",
        "P(on front)",
    ]
    rows = [_row(point) for point in points]
    rows += [[label, None, "unknown", "unknown", None, "not placed"] for label in unpriced]
    first = points[0]
    notes = [
        f"{plural(front.items, 'shared item')} with a known cost ({front.items_dropped} not held by every "
        "model left out); models by cost per task, cheapest first",
        f"pass rate: {level * 100:g}% {first.pass_rate.method} intervals; cost per task and per success: "
        f"{level * 100:g}% {first.cost_per_task.method} intervals",
        "on front: no other model has a pass rate at least as high and a cost per task at most as low, "
        "one of them strictly",
        front.method,
        *unknown.values(),
        *(
            f"{label}: cost unknown for every one of its {plural(len(by_label[label].items), 'trial')}: not "
            "placed on the front (never taken as free)"
            for label in unpriced
        ),
    ]
    section = Section(header, rows, title="the cost-success front", notes=notes)
    return Report(
        payload,
        [section],
        footer=[rows_line(payload["rows"])],
        flat=_flat(points, {label: len(by_label[label].items) for label in unpriced}),
    )
