"""The curves panel: pass@k and pass^k for k = 1..N per group (:func:`trialscore.pass_curve`), with the
band of the interval ``score`` gives at each k; N is the fewest scored trials of any case of the group.

Beyond 20 trials the curve is drawn at 20 values of k from 1 to N, spaced evenly on a log scale
(:func:`curve_ks`), each with its interval.
"""

from __future__ import annotations

from typing import Any

from trialscore._words import plural
from trialscore.report._numbers import number
from trialscore.report._svg import Series, line_chart
from trialscore.report.context import ReportContext
from trialscore.report.panel import Built, Panel

__all__ = ["PANEL", "curve_ks"]

#: The most values of k a curve is drawn at.
_POINTS = 20


def curve_ks(top: int) -> list[int]:
    """The values of k a curve is drawn at: every k up to 20, else 20 log-spaced from 1 to ``top``.

    >>> curve_ks(5), curve_ks(154)[:6], curve_ks(154)[-1], len(curve_ks(154))
    ([1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6], 154, 20)
    """
    if top <= _POINTS:
        return list(range(1, top + 1))
    ks = {1, top}
    ratio = top ** (1 / (_POINTS - 1))
    step = 0
    while len(ks) < _POINTS:  # log-spaced values, the small ones (which round alike) filled in order
        step += 1
        ks.add(min(top, max(round(ratio**step), len(ks))))
    return sorted(ks)


def build(context: ReportContext) -> Built:
    """One chart and table of values per group."""
    from trialscore.core.estimators import pass_curve
    from trialscore.results.scorecard import MetricSpec, metric_interval

    settings = context.settings
    charts: list[dict[str, Any]] = []
    for name, group in context.groups.items():
        if not group.items:
            continue
        bank = group.bank()
        states = bank.states()
        top = bank.min_trials
        ks = curve_ks(top)
        curve = pass_curve(bank, top)
        series = []
        table = []
        for metric, every in (("pass@k", curve.pass_at_k), ("pass^k", curve.pass_hat_k)):
            values = [every[k - 1] for k in ks]
            bands = [
                metric_interval(bank, MetricSpec(metric, k), level=settings.level, states=states) for k in ks
            ]
            series.append(
                Series(metric, [float(v) for v in values], [b.low for b in bands], [b.high for b in bands])
            )
            table.append(
                [
                    metric,
                    *(
                        f"{number(float(v))} [{number(b.low)}, {number(b.high)}]"
                        for v, b in zip(values, bands, strict=True)
                    ),
                ]
            )
        ragged = int((bank.n > top).sum())
        charts.append(
            {
                "name": name,
                "svg": line_chart(series, [str(k) for k in ks], f"pass@k and pass^k, {name}", "k"),
                "ks": ks,
                "table": table,
                "note": (
                    f"k stops at {top}, the fewest scored trials of any case; {plural(ragged, 'case')} "
                    f"{'has' if ragged == 1 else 'have'} more"
                    if ragged
                    else f"every case has {top} scored trials"
                ),
                "rule": (
                    f"band: {settings.level * 100:g}% interval at each k "
                    f"({bands[0].method if bands else 'none'}), as trialscore score computes it"
                ),
            }
        )
    return Built({"by": settings.by, "charts": charts})


PANEL = Panel("curves", "Curves", "curves.html.j2", build)
