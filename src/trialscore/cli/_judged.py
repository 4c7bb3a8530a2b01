"""What ``score`` and ``compare`` add for judged trials: the judge-only mark, human labels, judge noise.

* Judged inputs (the runner's trials with ``llm_judge`` calls) without human labels: every figure
  carries :data:`~trialscore.results.judged.JUDGE_ONLY`, in the table, JSON and step summary.
* ``--human LABELS``: the prediction-powered figures of each target, human-only and judge-only
  beside them and the judge's measured bias (:mod:`trialscore.results.calibration`); for
  ``compare``, the paired difference of the two runs by human standards.
* Judge repeats: the item / trial / judge split beside the item / trial split
  (:mod:`trialscore.results.judge_split`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.cli._options import stored_or_given
from trialscore.cli._render import Report, Section
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.cli._options import ReadOptions
    from trialscore.results.calibration import CalibratedFigure, Calibration, PairCalibration
    from trialscore.results.counts import ItemCounts
    from trialscore.results.judge_split import JudgeSplit
    from trialscore.results.labels import HumanLabels, LabelledBanks
    from trialscore.stats._intervals import Interval

__all__ = ["Extras", "compare_extras", "score_extras"]


@dataclass
class Extras:
    """What a command adds: JSON keys, sections after its own, lines for its footer."""

    payload: dict[str, Any] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)


def _interval(interval: Interval | None) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "estimate": interval.estimate,
        "low": interval.low,
        "high": interval.high,
        "level": interval.level,
        "method": interval.method,
        "n": interval.n,
    }


def _row(metric: str, kind: str, interval: Interval | None, n: object = None) -> list[object]:
    if interval is None:
        return [metric, kind, None, None, None, n]
    return [metric, kind, interval.estimate, interval.low, interval.high, interval.n]


def _group_rows(counts: ItemCounts) -> dict[tuple[Any, ...], list[int]]:
    """Row indices of each group key, in the counts' order."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for row in range(counts.item.size):
        key = tuple(values[row] for values in counts.group_values)
        groups.setdefault(key, []).append(row)
    return groups


def _label_of(by: Sequence[str], key: tuple[Any, ...]) -> str:
    return (
        ", ".join(f"{name}={'—' if value is None else value}" for name, value in zip(by, key, strict=True))
        or "all"
    )


def _known(*read: ItemCounts) -> dict[str | None, set[str]]:
    """The case ids of each target the counts hold."""
    known: dict[str | None, set[str]] = {}
    for counts in read:
        target_at = counts.by.index("target") if "target" in counts.by else None
        for row, item in enumerate(counts.item.tolist()):
            target = None if target_at is None else counts.group_values[target_at][row]
            known.setdefault(target, set()).add(str(item))
    return known


def _banks(counts: ItemCounts, labels: HumanLabels) -> list[tuple[str, dict[str, Any], LabelledBanks]]:
    """Each group's judge verdicts and human labels (labels matched by the group's target)."""
    from trialscore.results.labels import label_banks

    trials = counts.trials
    assert trials is not None
    target_at = counts.by.index("target") if "target" in counts.by else None
    known = _known(counts)
    out = []
    for key, rows in _group_rows(counts).items():
        target = None if target_at is None else key[target_at]
        spans = [(int(trials.starts[r]), int(trials.starts[r + 1])) for r in rows]
        banks = label_banks(
            labels,
            target,
            [counts.item[r] for r in rows],
            [trials.trial[a:b] for a, b in spans],
            [trials.verdicts[a:b] for a, b in spans],
            several_targets=len(known) > 1,
        )
        out.append((_label_of(counts.by, key), dict(zip(counts.by, key, strict=True)), banks))
    return out


def _figure_payload(figure: CalibratedFigure | PairCalibration) -> dict[str, Any]:
    body = {
        "metric": figure.metric,
        "labelled_items": figure.labelled_items,
        "corrected": _interval(figure.corrected),
        "human_only": _interval(figure.human_only),
        "judge_only": _interval(figure.judge_only),
        "reason": figure.reason,
    }
    bias = getattr(figure, "bias", None)
    if hasattr(figure, "bias"):
        body["bias"] = _interval(bias)
    return body


def _calibration_section(
    label: str, result: Calibration, banks: LabelledBanks, path: str, errors: str
) -> Section:
    from trialscore.stats._conventions import convention_line

    rows: list[list[object]] = []
    for figure in result.figures:
        rows.append(_row(figure.metric, "corrected (ppi++)", figure.corrected, figure.labelled_items))
        rows.append(_row(figure.metric, "human-only", figure.human_only))
        rows.append(_row(figure.metric, "judge-only", figure.judge_only))
        rows.append(_row(figure.metric, "judge bias (judge - human)", figure.bias))
    rates = ", ".join(
        part
        for part in (
            None if result.tpr is None else f"passes {result.tpr:.0%} of labelled passes",
            None if result.tnr is None else f"fails {result.tnr:.0%} of labelled fails",
        )
        if part
    )
    lead = (
        f"{result.labelled_items} of {result.items} items labelled ({result.labelled_trials} trials, "
        f"{path}); the judge agrees with the labels on {result.agreement:.1%} of labelled trials ({rates})"
    )
    notes = [f"{f.metric}: {f.reason}" for f in result.figures if f.reason]
    methods = {f.corrected.method for f in result.figures if f.corrected is not None}
    notes += [f"corrected: {method}" for method in sorted(methods)]
    if any(figure.metric.startswith("pass^") for figure in result.figures):
        notes.append(convention_line("unbiased", errors))
    notes.append(
        "the labelled items must be a random sample of the items (trialscore label draws one): "
        "the corrected interval rests on it; the unit is the item"
    )
    notes += list(banks.notes)
    return Section(
        ["metric", "figure", "estimate", "low", "high", "n"],
        rows,
        title=f"human labels: {label}",
        lead=lead,
        notes=notes,
    )


def _human_score(
    files: Sequence[Path], by: Sequence[str], read: ReadOptions, human: Path, ks: Sequence[int], level: float
) -> Extras:
    from trialscore.cli._options import read_together
    from trialscore.results.calibration import calibrate
    from trialscore.results.labels import read_labels, unknown_cases

    labels = read_labels(human)
    (counts,) = read_together([list(files)], by, read, detail=())
    unknown_cases(labels, _known(counts))
    extras = Extras()
    groups = []
    for label, key, banks in _banks(counts, labels):
        if banks.labels_used == 0:
            extras.footer.append(
                f"human labels: {label}: no label lands on its trials (judge-only figures above)"
            )
            continue
        result = calibrate(banks.judge, banks.human, ks, level)
        groups.append(
            {
                "group": key,
                "label": label,
                "items": result.items,
                "labelled_items": result.labelled_items,
                "labelled_trials": result.labelled_trials,
                "agreement": result.agreement,
                "tpr": result.tpr,
                "tnr": result.tnr,
                "figures": [_figure_payload(f) for f in result.figures],
                "notes": list(banks.notes),
            }
        )
        extras.sections.append(_calibration_section(label, result, banks, labels.path, counts.errors))
    if not groups:
        raise EvaluationError(f"{labels.path}: no label lands on a judged trial of the inputs")
    from trialscore.stats._conventions import convention

    stated = {"pass_hat_k_convention": convention("unbiased", counts.errors)}
    extras.payload["human"] = {"labels": labels.path, "by": list(counts.by), "groups": groups, **stated}
    return extras


def _split_section(split: JudgeSplit) -> Section:
    v = split.variance
    total = max(v.item, 0.0) + max(v.trial, 0.0) + max(v.judge, 0.0)

    def share(part: float) -> float | None:
        return max(part, 0.0) / total if total > 0 else None

    rows: list[list[object]] = [
        ["one call's verdict", "item", v.item, share(v.item)],
        ["one call's verdict", "trial", v.trial, share(v.trial)],
        ["one call's verdict", "judge (call to call)", v.judge, share(v.judge)],
    ]
    if split.trials is not None:
        t = split.trials
        rows += [
            [
                "the trial's verdict",
                "item (between)",
                t.between,
                t.between / t.total if t.total > 0 else None,
            ],
            ["the trial's verdict", "trial (noise of the mean)", t.trial_noise, t.trial_noise_share],
        ]
    target = "" if split.target is None else f", target {split.target}"
    notes = [
        f"{v.items} items, {v.mean_trials:.3g} trials and {v.mean_repeats:.3g} calls a trial on average; "
        "nested method of moments (an estimate below 0 reads as 0)",
        "judge repeats shrink only the judge part: Var(mean) = (item + trial/K + judge/(K R)) / M; "
        "trialscore plan --pilot RUN --budget CALLS picks K and R",
    ]
    if split.left_out_trials or split.left_out_items:
        notes.append(
            f"left out: {split.left_out_trials} trials with fewer than 2 answered calls, "
            f"{split.left_out_items} items with fewer than 2 such trials"
        )
    return Section(
        ["grade", "component", "variance", "share"],
        rows,
        title=f"judge noise: grader {split.grader}, judge {split.judge}{target}",
        notes=notes,
    )


def _one_verdict(read: ReadOptions, labelled: bool) -> None:
    """Human labels judge the trial, not each grader: --human refuses --per-grader."""
    if labelled and read.per_grader:
        raise EvaluationError(
            "--human labels a trial's verdict, not each grader's: drop --per-grader (or score per grader "
            "without --human)"
        )


def score_extras(
    files: Sequence[Path],
    by: Sequence[str],
    read: ReadOptions,
    human: Path | None,
    ks: Sequence[int],
    level: float,
) -> Extras:
    """What ``score`` adds: the human-label figures, or the judge-only mark; the judge noise split."""
    from trialscore.results.judged import JUDGE_ONLY, judged_inputs, trial_records

    _one_verdict(read, human is not None)
    inputs = stored_or_given(files, read)
    extras = _human_score(files, by, read, human, ks, level) if human is not None else Extras()
    if not judged_inputs(inputs):
        return extras
    if human is None:
        extras.payload["calibration"] = JUDGE_ONLY
        extras.footer.append(
            f"{JUDGE_ONLY} (score --human LABELS corrects it; trialscore label draws the sample)"
        )
    from trialscore.results.judge_split import judge_splits

    records = [record for source in inputs for record in (trial_records(source) or ("", []))[1]]
    splits = judge_splits(records)
    extras.payload["judge_noise"] = [
        {
            "grader": s.grader,
            "target": s.target,
            "judge": s.judge,
            "variance": s.variance.to_dict(),
            "trials": None
            if s.trials is None
            else {"between": s.trials.between, "trial_noise": s.trials.trial_noise},
            "left_out_trials": s.left_out_trials,
            "left_out_items": s.left_out_items,
        }
        for s in splits
    ]
    extras.sections += [_split_section(split) for split in splits]
    return extras


def compare_extras(
    baseline: Path,
    candidate: Path,
    by: Sequence[str],
    read: ReadOptions,
    humans: Sequence[Path],
    metric: str,
    k: int | None,
    level: float,
) -> Extras:
    """What ``compare`` adds: the judge-only mark, or with labels the paired difference by human standards."""
    from trialscore.results.judged import JUDGE_ONLY, judged_inputs

    if not humans:
        extras = Extras()
        if judged_inputs(stored_or_given([baseline, candidate], read)):
            extras.payload["calibration"] = JUDGE_ONLY
            extras.footer.append(f"{JUDGE_ONLY} (compare --human LABELS corrects it)")
        return extras
    _one_verdict(read, True)
    if len(humans) > 2:
        raise EvaluationError(f"--human takes one labels file, or one for each run; got {len(humans)}")
    from trialscore.cli._options import read_together
    from trialscore.results.calibration import calibrate_pair
    from trialscore.results.labels import read_labels, unknown_cases

    name = {"avg": "pass@1", "pass@1": "pass@1", "pass@k": "pass@k", "pass^k": "pass^k"}.get(metric)
    if name is None:
        raise EvaluationError(f"--human corrects pass@1 (avg), pass@k and pass^k; got --metric {metric}")
    size = 1 if name == "pass@1" else (k or 1)
    labels = [read_labels(path) for path in humans]
    first, second = read_together([[baseline], [candidate]], by, read, detail=())
    for found in labels:
        unknown_cases(
            found,
            _known(first, second) if len(labels) == 1 else _known(first if found is labels[0] else second),
        )
    base, cand = dict(_keyed(first, labels[0], by)), dict(_keyed(second, labels[-1], by))
    if len(labels) == 1 and _targets(first) & _targets(second):
        shared_targets = ", ".join(sorted(str(t) for t in _targets(first) & _targets(second)))
        raise EvaluationError(
            f"baseline and candidate both hold target {shared_targets}: one labels file cannot tell their "
            "outputs apart; give --human twice (the baseline's labels, then the candidate's)"
        )
    extras = Extras()
    rows, comparisons = [], []
    for key, a in base.items():
        b = cand.get(key)
        if b is None:
            continue
        shared = [item for item in a.items if item in set(b.items)]
        ia = [a.items.index(item) for item in shared]
        ib = [b.items.index(item) for item in shared]
        width = max(a.judge.shape[1], b.judge.shape[1])

        result = calibrate_pair(  # candidate - baseline, as compare's delta
            _taken(b.judge, ib, width),
            _taken(b.human, ib, width),
            _taken(a.judge, ia, width),
            _taken(a.human, ia, width),
            name,
            size,
            level,
        )
        label = _label_of(tuple(key_name for key_name, _ in key), tuple(value for _, value in key))
        comparisons.append(
            {
                "group": dict(key),
                "label": label,
                "shared_items": result.shared_items,
                **_figure_payload(result),
            }
        )
        for kind, interval in (
            ("corrected (ppi++)", result.corrected),
            ("human-only", result.human_only),
            ("judge-only", result.judge_only),
        ):
            rows.append(
                [
                    label,
                    result.metric,
                    kind,
                    *([None] * 3 if interval is None else (interval.estimate, interval.low, interval.high)),
                    result.labelled_items if kind.startswith("corrected") else None,
                ]
            )
        if result.reason:
            extras.footer.append(f"human labels: {label}: {result.reason}")
    if not comparisons:
        raise EvaluationError("--human: baseline and candidate share no group with judged trials")
    extras.payload["human"] = {"labels": [found.path for found in labels], "comparisons": comparisons}
    extras.sections.append(
        Section(
            ["group", "metric", "figure", "delta", "low", "high", "labelled items"],
            rows,
            title="human labels: candidate - baseline by human standards",
            notes=[
                "prediction-powered paired difference with the item as the unit, on the items both runs "
                "hold; the labelled items must be a random sample"
            ],
        )
    )
    return extras


def _taken(array: Any, rows: list[int], width: int) -> Any:
    """``array[rows]`` widened to ``width`` trials (NaN: no trial)."""
    import numpy as np

    out = np.full((len(rows), width), np.nan)
    out[:, : array.shape[1]] = array[rows]
    return out


def _targets(counts: ItemCounts) -> set[Any]:
    if "target" not in counts.by:
        return {None}
    return set(counts.group_values[counts.by.index("target")].tolist())


def _keyed(
    counts: ItemCounts, labels: HumanLabels, by: Sequence[str]
) -> list[tuple[tuple[tuple[str, Any], ...], LabelledBanks]]:
    """Each group's banks by the key that pairs it with the other run's: its group key, without the
    target when the run holds one target and ``by`` does not name it (two models compared)."""
    drop = "target" not in by and len(_targets(counts)) == 1
    return [
        (tuple((name, value) for name, value in key.items() if not (drop and name == "target")), banks)
        for _, key, banks in _banks(counts, labels)
    ]


def budget_report(
    pilot: Path, read: ReadOptions, budget: float, judge_cost: float, items: int | None
) -> Report:
    """``plan --budget``: for each judge of a pilot run with repeats, the (trials, judge calls) whose
    interval is narrowest for ``budget`` model plus judge calls."""
    from trialscore.results.judge_split import judge_splits
    from trialscore.results.judged import trial_records
    from trialscore.stats._judge_noise import plan_judge_budget

    (source,) = stored_or_given([pilot], read)
    found = trial_records(source)
    if found is None:
        raise EvaluationError(
            f"--pilot {pilot}: --budget reads a run of the runner (its trials with judge calls)"
        )
    splits = judge_splits(found[1])
    if not splits:
        raise EvaluationError(
            f"--pilot {pilot}: no judge called twice on the same output; --budget needs a pilot whose "
            "llm_judge has repeats >= 2 (2 answered calls on 2 trials of 2 items at least)"
        )
    rows, plans = [], []
    for split in splits:
        plan = plan_judge_budget(split.variance, budget, items, judge_cost=judge_cost)
        label = f"{split.grader} · {split.judge}" + ("" if split.target is None else f" · {split.target}")
        rows.append([label, plan.trials, plan.repeats, plan.calls, plan.se, plan.width])
        plans.append({"grader": split.grader, "judge": split.judge, "target": split.target, **plan.to_dict()})
    notes = [
        "a trial costs one model call and R judge calls of --judge-cost model calls each; every affordable "
        "R is tried with the most trials it affords; SE = sqrt((item + trial/K + judge/(K R)) / M) from the "
        "pilot's item / trial / judge split",
    ]
    first = plans[0]
    title = (
        f"plan: {first['budget']:g} calls on {first['items']} items, judge call = {judge_cost:g} model calls"
    )
    payload = {"command": "plan", "version": 1, "budget": budget, "judge_cost": judge_cost, "plans": plans}
    return Report(
        payload,
        [Section(["judge", "trials", "judge calls", "calls", "SE", "width"], rows, title=title, notes=notes)],
    )
