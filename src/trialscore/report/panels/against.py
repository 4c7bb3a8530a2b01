"""The baseline panel: each case's flip, the cases that changed with a word diff of the outputs of those
whose verdict flipped, and the paired verdict of pass@1 per target and per category.

The paired verdict is :func:`trialscore.stats.compare_paired` on the per-case pass rates of the
cases in both runs (what ``trialscore compare --metric avg`` does, without the sign-flip p-value).
The diff of a flipped case (:data:`~trialscore.report.context.VERDICT_FLIPS`) is the word diff
(:func:`~trialscore.report.worddiff.word_diff`) of the baseline's most common output of the case
and this run's (ties: the earliest trial's), computed when the report is built.
"""

from __future__ import annotations

from typing import Any

from trialscore.errors import EvaluationError
from trialscore.report._numbers import number, signed
from trialscore.report.context import VERDICT_FLIPS, ReportContext, group_name
from trialscore.report.panel import Built, Panel
from trialscore.report.runs import CaseTrials, RunData
from trialscore.report.worddiff import word_diff

__all__ = ["PANEL", "most_common_output"]

_FLIP_ORDER = ("regressed", "became flaky", "lower", "higher", "improved", "stable", "new", "removed")
#: The changed cases listed (the cases table sorts them all by their delta).
_LISTED = 100


def most_common_output(case: CaseTrials) -> tuple[str, int, int] | None:
    """The case's most common output (ties: the earliest trial's): its (kept) text, its count and the
    number of trials with an output; None when no trial has one (or the run was read without them)."""
    trials = case.trials
    if trials is None:
        return None
    counts: dict[tuple[str, int], int] = {}
    for index in range(case.start, case.stop):
        text = trials.output[index]
        if text is not None:
            key = (text, trials.output_chars[index])
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return None
    text, _ = max(counts, key=counts.__getitem__)  # the first of the most frequent
    return text, max(counts.values()), sum(counts.values())


def _diffs(context: ReportContext) -> dict[str, Any]:
    """Row index -> the word diff of a flipped case's most common outputs (baseline, then now)."""
    out: dict[str, Any] = {}
    for row, case in zip(context.rows, context.run.cases, strict=True):
        if row["flip"] not in VERDICT_FLIPS:
            continue
        then = context.before[(case.target, case.case_id)]
        before, now = most_common_output(then), most_common_output(case)
        if before is None or now is None:
            continue
        out[str(row["i"])] = {
            "before": [before[1], before[2]],
            "now": [now[1], now[2]],
            "ops": word_diff(before[0], now[0]),
        }
    return out


def _comparisons(context: ReportContext, baseline: RunData, by: str) -> list[dict[str, Any]]:
    """The paired verdict of pass@1 (the mean per-case pass rate) per group, as ``compare`` tests it."""
    from trialscore.stats import compare_paired

    now, before = context.grouper(context.run, by), context.grouper(baseline, by)
    out = []
    for name in sorted(set(now) & set(before)):
        a, b = before[name], now[name]
        if a.items < 2 or b.items < 2:
            out.append({"name": name, "verdict": "not tested", "rule": "fewer than 2 scored cases"})
            continue
        try:
            result = compare_paired(
                a.bank(),
                b.bank(),
                "avg",
                ids_baseline=a.item[a.n > 0].tolist(),
                ids_candidate=b.item[b.n > 0].tolist(),
                alpha=context.settings.alpha,
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


def build(context: ReportContext) -> Built | None:
    """The flips, the changed cases and the paired verdicts (None without a baseline)."""
    baseline = context.baseline
    if baseline is None:
        return None
    rows = context.rows
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["flip"]] = counts.get(row["flip"], 0) + 1
    now_keys = {(case.target, case.case_id) for case in context.run.cases}
    counts["removed"] = sum((case.target, case.case_id) not in now_keys for case in baseline.cases)
    changed = [row for row in rows if row["flip"] not in ("stable", "new")]
    changed.sort(key=lambda r: (r["delta"] if r["delta"] is not None else 0.0, r["target"], r["case"]))
    diffs = _diffs(context)
    by = [
        (name, _comparisons(context, baseline, name))
        for name in ("target", "category")
        if any(group_name(case, name) for case in context.run.cases)
    ]
    rules = list(dict.fromkeys(c["rule"] for _, found in by for c in found if "baseline" in c))
    view = {
        "name": baseline.run_id or baseline.label,
        "counts": [(name, counts.get(name, 0)) for name in _FLIP_ORDER],
        "changed": changed[:_LISTED],
        "changed_total": len(changed),
        "by": by,
        "rules": rules,
        "diffs": len(diffs),
    }
    return Built(view, {"diffs": diffs})


PANEL = Panel("against", "Against baseline", "against.html.j2", build, script="against.js")
