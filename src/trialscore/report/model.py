"""The report's content: every number of the page, computed by the library functions the commands use.

Nothing statistical is computed here: the headline metrics come from
:func:`trialscore.results.scorecard.score_group` (what ``score`` prints), per-case intervals
from :func:`trialscore.stats.proportion_interval` (Wilson), curves from
:func:`trialscore.pass_curve` with :func:`trialscore.results.scorecard.metric_interval` bands,
paired verdicts from :func:`trialscore.stats.compare_paired` (what ``compare`` uses) and trends
from :func:`trialscore.compat.tracking.track_category` (what ``track`` uses).  This module
groups trials into those calls and lays the results out for the template.

Case states and flips against a baseline (a case's state is ``pass`` when every graded trial
passed, ``fail`` when none did, ``flaky`` in between, ``none`` with no graded trial):

==============  ============================================================
``regressed``   now ``fail``, before ``pass`` or ``flaky``
``became flaky`` now ``flaky``, before ``pass``
``improved``    now ``pass`` after ``fail`` or ``flaky``, or ``flaky`` after ``fail``
``lower``       ``flaky`` in both runs, its pass rate lower now (``higher``: higher)
``stable``      the same state and the same pass rate in both runs
``new``         only in this run (``removed``: only in the baseline)
==============  ============================================================

Each case also shows ``delta``, its pass rate now minus before, and the cases that changed are
listed by it, the largest fall first: a flip says how a case's state moved, the delta how far
(``0.9 -> 0.6`` is ``lower`` by -0.3, never ``stable``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from trialscore._words import plural
from trialscore.errors import EvaluationError
from trialscore.report._numbers import money, number, percent, run_start, signed
from trialscore.report._svg import Series, line_chart
from trialscore.report.drawer import Drawer, asked
from trialscore.report.runs import CaseTrials, RunData
from trialscore.results.counts import ErrorPolicy, GroupCounts

__all__ = ["ReportSettings", "build_model", "case_state", "flip"]


@dataclass(frozen=True)
class ReportSettings:
    """What the report groups by and how: ``by`` is ``target`` or ``category``."""

    by: str = "target"
    level: float = 0.95
    errors: ErrorPolicy = "exclude"
    alpha: float = 0.05
    dates: tuple[date, ...] | None = None


def _counted(case: CaseTrials, errors: ErrorPolicy) -> str:
    """``passed/n`` of a case under the error policy."""
    return f"{case.passed}/{case.graded + (case.errored if errors == 'fail' else 0)}"


def _rate(case: CaseTrials, errors: ErrorPolicy) -> float | None:
    """The case's pass rate under the error policy (None with no trial counted)."""
    n = case.graded + (case.errored if errors == "fail" else 0)
    return case.passed / n if n else None


def case_state(case: CaseTrials, errors: ErrorPolicy = "exclude") -> str:
    """``pass``, ``fail``, ``flaky`` or ``none`` (no graded trial) of a case under the error policy.

    >>> case_state(CaseTrials("m", None, "a", "ppe")), case_state(CaseTrials("m", None, "a", "ppe"), "fail")
    ('pass', 'flaky')
    """
    n = case.graded + (case.errored if errors == "fail" else 0)
    if n == 0:
        return "none"
    if case.passed == n:
        return "pass"
    return "fail" if case.passed == 0 else "flaky"


_FLIPS = {
    ("pass", "fail"): "regressed",
    ("flaky", "fail"): "regressed",
    ("pass", "flaky"): "became flaky",
    ("fail", "pass"): "improved",
    ("flaky", "pass"): "improved",
    ("fail", "flaky"): "improved",
}


def flip(before: str | None, now: str | None, delta: float | None = 0.0) -> str:
    """The flip of a case from its baseline state to its state now, ``delta`` its pass rate now minus
    before (see the module docstring).

    >>> flip("pass", "fail"), flip("pass", "flaky"), flip("fail", "flaky")
    ('regressed', 'became flaky', 'improved')
    >>> flip("flaky", "flaky"), flip("flaky", "flaky", -0.3), flip("flaky", "flaky", 0.1), flip(None, "pass")
    ('stable', 'lower', 'higher', 'new')
    """
    if before is None:
        return "new"
    if now is None:
        return "removed"
    moved = _FLIPS.get((before, now))
    if moved is not None:
        return moved
    if delta:
        return "lower" if delta < 0 else "higher"
    return "stable"


def _group_name(case: CaseTrials, by: str) -> str | None:
    if by == _TARGET_CATEGORY:  # a trend per target and category: targets are never pooled
        return f"{case.target or '—'} · {case.category or '—'}"
    return case.target if by == "target" else case.category


#: The grouping of the trends when the runs hold several targets.
_TARGET_CATEGORY = "target+category"


class _Grouper:
    """Per-group counts of a run (one item per (target, case)) in the layout ``score`` scores.

    Each (run, grouping) is counted once: the headline, curves, paired verdicts and trends share it.
    """

    def __init__(self, errors: ErrorPolicy) -> None:
        self.errors = errors
        self._counted: dict[tuple[int, str], tuple[RunData, dict[str, GroupCounts]]] = {}

    def __call__(self, run: RunData, by: str) -> dict[str, GroupCounts]:
        """``{group name: counts}`` of ``run`` grouped ``by`` target or category, by name."""
        key = (id(run), by)
        if key not in self._counted:
            self._counted[key] = (run, self._count(run.cases, by))  # the run is kept: its id stays its own
        return self._counted[key][1]

    def _count(self, cases: Sequence[CaseTrials], by: str) -> dict[str, GroupCounts]:
        members: dict[str, list[int]] = {}
        for index, case in enumerate(cases):
            members.setdefault(_group_name(case, by) or "—", []).append(index)
        passed = np.array([case.passed for case in cases], dtype=np.int64)
        errored = np.array([case.errored for case in cases], dtype=np.int64)
        graded = np.array([len(case.verdicts) for case in cases], dtype=np.int64) - errored
        items = [
            case.case_id if by != "category" else f"{case.target or ''}\x1f{case.case_id}" for case in cases
        ]
        out = {}
        for name in sorted(members):
            chosen = members[name]
            ids = [items[index] for index in chosen]
            out[name] = GroupCounts(
                ((by, name),),
                np.array(ids, dtype=object),
                graded[chosen],
                passed[chosen],
                errored[chosen],
                self.errors,
            )
        return out


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


def _common_k(groups: dict[str, GroupCounts]) -> int:
    """The largest k every group allows: the fewest scored trials of any case in any group (1 at least)."""
    return max(1, min((group.bank().min_trials for group in groups.values() if group.items), default=1))


def _headline(groups: dict[str, GroupCounts], settings: ReportSettings) -> list[dict[str, Any]]:
    """Each group's score card: pass@1, pass@k and pass^k at one k for every group (the largest all of
    them have, so the cards compare like with like), as ``score`` gives them."""
    from trialscore.results.scorecard import metric_specs, score_group

    top = _common_k(groups)
    ks = [1] if top <= 1 else [1, top]
    specs = metric_specs(["pass@k", "pass^k"], ks)
    cards = []
    for name, group in groups.items():
        card = score_group(group, specs, "auto", settings.level, 10_000, 0, max(ks))
        metrics = [
            {"label": m.spec.label, **(_interval_view(m.interval) if m.interval else {}), "reason": m.reason}
            for m in card.metrics
        ]
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
    return cards


def _curves(groups: dict[str, GroupCounts], settings: ReportSettings) -> list[dict[str, Any]]:
    """pass@k and pass^k for k = 1..N per group, with the interval ``score`` gives at each k as the band."""
    from trialscore.core.estimators import pass_curve
    from trialscore.results.scorecard import MetricSpec, metric_interval

    charts = []
    for name, group in groups.items():
        if not group.items:
            continue
        bank = group.bank()
        states = bank.states()
        top = bank.min_trials
        curve = pass_curve(bank, top)
        series = []
        table = []
        for metric, values in (("pass@k", curve.pass_at_k), ("pass^k", curve.pass_hat_k)):
            bands = [
                metric_interval(bank, MetricSpec(metric, k), level=settings.level, states=states)
                for k in range(1, top + 1)
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
                "svg": line_chart(
                    series, [str(k) for k in range(1, top + 1)], f"pass@k and pass^k, {name}", "k"
                ),
                "ks": list(range(1, top + 1)),
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
    return charts


def _case_rows(
    run: RunData, baseline: RunData | None, settings: ReportSettings
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[tuple[str | None, str], str]]:
    """One row per case (the table) and its trials (the drawer's JSON); the flip of each case."""
    from trialscore.stats import proportion_interval

    before: dict[tuple[str | None, str], tuple[str, CaseTrials]] = {}
    if baseline is not None:
        before = {
            (case.target, case.case_id): (case_state(case, settings.errors), case) for case in baseline.cases
        }
    flips = {}
    rows = []
    intervals: dict[tuple[int, int], Any] = {}  # one interval per (passed, n): cases share few
    drawer = Drawer(run.trials)
    details: list[Any] = []
    questions: list[Any] = []
    for index, case in enumerate(run.cases):
        state = case_state(case, settings.errors)
        n = case.graded + (case.errored if settings.errors == "fail" else 0)
        interval = None
        if n:
            interval = intervals.get((case.passed, n))
            if interval is None:
                interval = intervals[case.passed, n] = proportion_interval(
                    case.passed, n, settings.level, "wilson"
                )
        key = (case.target, case.case_id)
        rate = case.passed / n if n else None
        then, then_case = before.get(key, (None, None))
        then_rate = None if then_case is None else _rate(then_case, settings.errors)
        delta = None if rate is None or then_rate is None else rate - then_rate
        change = flip(then, state, delta) if baseline is not None else ""
        flips[key] = change
        rows.append(
            {
                "i": index,
                "target": case.target or "",
                "case": case.case_id,
                "category": case.category or "",
                "strip": case.verdicts,
                "passed": case.passed,
                "n": n,
                "errored": case.errored,
                "rate": rate,
                "rate_text": percent(rate),
                "low": None if interval is None else interval.low,
                "interval": ""
                if interval is None
                else f"[{percent(interval.low)}, {percent(interval.high)}]",
                "width": 0.0 if interval is None else interval.high - interval.low,
                "flakiness": 100 * min(case.passed, n - case.passed) / n if n else 0.0,
                "cost": case.cost,
                "cost_text": money(case.cost),
                "state": state,
                "flip": change,
                "before": "" if then_case is None else _counted(then_case, settings.errors),
                "delta": delta,
                "delta_text": "—" if delta is None else signed(delta),
            }
        )
        details.append(drawer.case(case) if case.detailed else None)
        questions.append(asked(case, run.asked))
    data = {"trials": details, "graders": list(drawer.graders), "asked": questions}
    return rows, data, flips


def _comparisons(
    run: RunData, baseline: RunData, settings: ReportSettings, by: str, groups: _Grouper
) -> list[dict[str, Any]]:
    """The paired verdict of pass@1 (the mean per-case pass rate) per group, as ``compare`` tests it."""
    from trialscore.stats import compare_paired

    now, before = groups(run, by), groups(baseline, by)
    out = []
    for name in sorted(set(now) & set(before)):
        a, b = before[name], now[name]
        if a.items < 2 or b.items < 2:
            out.append({"name": name, "verdict": "not tested", "rule": "fewer than 2 scored cases"})
            continue
        bank_a, bank_b = a.bank(), b.bank()
        try:
            result = compare_paired(
                bank_a,
                bank_b,
                "avg",
                ids_baseline=a.item[a.n > 0].tolist(),
                ids_candidate=b.item[b.n > 0].tolist(),
                alpha=settings.alpha,
                permutations=0,
            )
        except EvaluationError as exc:
            out.append({"name": name, "verdict": "not tested", "rule": str(exc)})
            continue
        out.append(
            {
                "name": name,
                "baseline": number(result.baseline),
                "candidate": number(result.candidate),
                "delta": signed(result.delta, 3),
                "interval": f"[{signed(result.interval.low, 3)}, {signed(result.interval.high, 3)}]"
                + (" (clipped to [-1, 1])" if result.interval.clipped_to else ""),
                "p": number(result.p_value),
                "mde": "none: too few cases to test" if result.mde is None else number(result.mde),
                "cases": str(result.paired_items),
                "verdict": result.verdict,
                "rule": result.rule,
            }
        )
    return out


def _errors(run: RunData) -> list[dict[str, Any]]:
    """Errored trials grouped by their message (first line), most frequent first, with the cases hit."""
    grouped: dict[str, dict[str, None]] = {}
    counts: dict[str, int] = {}
    for case in run.cases:
        if not case.errored:
            continue
        label = case.case_id if case.target is None else f"{case.case_id} ({case.target})"
        messages: list[str | None] = [None] * case.errored
        if case.detailed and case.trials is not None:
            errors = case.trials.error[case.start : case.stop]
            messages = [errors[index] for index, letter in enumerate(case.verdicts) if letter == "e"]
        for message in messages:
            text = (
                (message or "").strip().splitlines()[0] if (message or "").strip() else "(no error message)"
            )
            grouped.setdefault(text, {})[label] = None
            counts[text] = counts.get(text, 0) + 1
    order = sorted(grouped, key=lambda text: (-counts[text], text))
    return [
        {
            "message": text,
            "count": counts[text],
            "cases": list(grouped[text])[:20],
            "more": max(0, len(grouped[text]) - 20),
        }
        for text in order
    ]


def _run_date(run: RunData, index: int, settings: ReportSettings) -> date | None:
    if settings.dates is not None:
        return settings.dates[index]
    if run.started is None:
        return None
    try:
        return date.fromisoformat(run.started[:10])
    except ValueError:
        return None


def _trends(runs: Sequence[RunData], settings: ReportSettings, groups: _Grouper) -> dict[str, Any] | None:
    """pass@1 per category over the dated runs, with the trend ``track`` tests (latest vs the one before);
    per target and category when the runs hold several targets, per suite too when they span suites."""
    from trialscore.compat.tracking import track_category

    if len(runs) < 2:
        return None
    dates = [_run_date(run, index, settings) for index, run in enumerate(runs)]
    if any(when is None for when in dates):
        return {
            "note": "trends need a date per run: give each run's date, or runs whose trials record started_at"
        }
    targets = {case.target for run in runs for case in run.cases}
    by = _TARGET_CATEGORY if len(targets) > 1 else "category"
    suites = {run.suite for run in runs}
    history: dict[str, list[tuple[date, Any]]] = {}
    for run, when in zip(runs, dates, strict=True):
        assert when is not None
        prefix = f"{run.suite or '—'} · " if len(suites) > 1 else ""  # suites are never pooled either
        for name, group in groups(run, by).items():
            if group.items:
                history.setdefault(prefix + name, []).append((when, group.bank()))
    ticks = sorted({when.isoformat() for when in dates if when is not None})
    rows, series = [], []
    for name, points in sorted(history.items()):
        snapshot = track_category(name, points, ks=[1], alpha=settings.alpha)
        by_day = {when.isoformat(): float(bank.c.sum() / bank.n.sum()) for when, bank in points}
        series.append(Series(name, [by_day.get(tick) for tick in ticks]))
        comparison = snapshot.comparison
        rows.append(
            {
                "name": name,
                "points": [number(by_day.get(tick)) for tick in ticks],
                "trend": snapshot.trend,
                "delta": "—" if comparison is None else signed(comparison.delta, 3),
                "p": "—" if comparison is None else number(comparison.p_value),
                "rule": snapshot.rule,
            }
        )
    return {
        "ticks": ticks,
        "rows": rows,
        "svg": line_chart(series, ticks, "pass@1 per category over runs", "run date"),
    }


def _totals(run: RunData) -> dict[str, Any]:
    trials = sum(len(case.verdicts) for case in run.cases)
    costs = [] if run.trials is None else run.trials.cost.tolist()
    known = [cost for cost in costs if not math.isnan(cost)]
    return {
        "cases": len(run.cases),
        "trials": trials,
        "errored": sum(case.errored for case in run.cases),
        "cost": money(float(sum(known))) if known else "unknown",
        "cost_unknown": trials - len(known),
        "targets": sorted({case.target for case in run.cases if case.target is not None}),
        "categories": sorted({case.category for case in run.cases if case.category is not None}),
    }


def build_model(
    runs: Sequence[RunData], baseline: RunData | None = None, settings: ReportSettings | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The page (for the template) and the data (embedded as JSON) of a report on ``runs[-1]``.

    The last run is the one reported; earlier runs are its history (the trends section).
    """
    settings = settings or ReportSettings()
    if not runs:
        raise EvaluationError("a report needs at least one run; got none")
    if settings.by not in ("target", "category"):
        raise EvaluationError(f"by must be 'target' or 'category'; got {settings.by!r}")
    if settings.dates is not None and len(settings.dates) != len(runs):
        raise EvaluationError(
            f"dates must give one date per run; got {len(settings.dates)} for {len(runs)} runs"
        )
    run = runs[-1]
    grouper = _Grouper(settings.errors)
    groups = grouper(run, settings.by)
    rows, data, flips = _case_rows(run, baseline, settings)
    flaky = sorted(
        (row for row in rows if row["state"] == "flaky"), key=lambda r: (-r["width"], r["case"], r["target"])
    )
    page: dict[str, Any] = {
        "title": f"trialscore report: {run.suite or run.label}",
        "run": run,
        "started": run_start(run.started),
        "runs": runs,
        "baseline": baseline,
        "settings": settings,
        "totals": _totals(run),
        "headline": _headline(groups, settings),
        "headline_k": _common_k(groups),
        "cases": rows,
        "categories": sorted({row["category"] for row in rows}),
        "flaky": flaky[:50],
        "flaky_total": len(flaky),
        "curves": _curves(groups, settings),
        "errors": _errors(run),
        "trends": _trends(runs, settings, grouper),
        "against": None,
    }
    if baseline is not None:
        counts: dict[str, int] = {}
        for change in flips.values():
            counts[change] = counts.get(change, 0) + 1
        now_keys = set(flips)
        removed = [case for case in baseline.cases if (case.target, case.case_id) not in now_keys]
        counts["removed"] = len(removed)
        changed = [row for row in rows if row["flip"] not in ("stable", "new")]
        changed.sort(key=lambda r: (r["delta"] if r["delta"] is not None else 0.0, r["target"], r["case"]))
        page["against"] = {
            "counts": [
                (name, counts.get(name, 0))
                for name in (
                    "regressed",
                    "became flaky",
                    "lower",
                    "higher",
                    "improved",
                    "stable",
                    "new",
                    "removed",
                )
            ],
            "changed": changed[:100],
            "changed_total": len(changed),
            "by": [
                (by, _comparisons(run, baseline, settings, by, grouper))
                for by in ("target", "category")
                if any(_group_name(case, by) for case in run.cases)
            ],
        }
    return page, data
