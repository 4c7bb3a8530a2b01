"""The judges panel: how far the judges agree, how often a judge flips, and its bias against labels.

Shown when the reported run is the runner's and an ``llm_judge`` graded it (its grader results
list the judge calls).  Everything comes from the library the commands use:

* agreement, per ``llm_judge`` grader: inter-judge (each judge's first call) and intra-judge
  (each judge's repeated calls on the same output) percent agreement, Krippendorff's alpha and
  Cohen's / Fleiss' kappa with their bootstrap intervals over items
  (:func:`~trialscore.stats.judge_agreement`, as ``trialscore agreement`` prints);
* the flip rate per case: among a case's trials whose judge answered at least twice, the share
  on which one judge's calls on the same frozen output disagree (the cases that flip most first);
* with human labels (``report --human``), the judge's bias per target: pass@1 by the judge minus
  by the labels on the labelled items, with its interval
  (:func:`~trialscore.results.calibration.calibrate`), and the pass rate corrected by them.

Without labels the panel says "judge-only: not calibrated against human labels".

>>> from trialscore.results.readers import RecordSource
>>> from trialscore.results.records import GraderResult, JudgeGrade, TrialRecord
>>> def record(i, t):
...     said = [(i + t + r) % 4 != 0 for r in range(2)]
...     calls = tuple(JudgeGrade(judge="gpt", repeat=r, score=float(p), passed=p) for r, p in enumerate(said))
...     grade = GraderResult(name="judge", score=float(said[0]), passed=said[0], calls=calls)
...     return TrialRecord(case_id=f"q{i}", trial=t, passed=said[0], verdict="pass" if said[0] else "fail",
...                        grader_results=(grade,))
>>> panel = judges_panel(RecordSource("run r", [record(i, t) for i in range(8) for t in range(3)]))
>>> panel["calibration"], panel["flips"][0]["case"], panel["flips"][0]["flipped"]
('judge-only: not calibrated against human labels', 'q2', 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.report.panel import Built, Panel

if TYPE_CHECKING:
    from trialscore.report.context import ReportContext
    from trialscore.results.readers import RecordSource
    from trialscore.results.records import TrialRecord
    from trialscore.stats._agreement import Agreement, AgreementInterval, PairKappa

__all__ = ["PANEL", "judges_panel"]

#: The cases the flip table lists, most flips first.
FLIP_ROWS = 20


def _figures(result: Agreement) -> list[dict[str, Any]]:
    """The rows of one agreement: each figure with its interval (None where undefined)."""
    rows: list[tuple[str, AgreementInterval | PairKappa]] = [("percent agreement", result.percent_agreement)]
    rows += [(f"Cohen's kappa {pair.first} vs {pair.second}", pair) for pair in result.cohen_kappa]
    rows += [
        ("Fleiss' kappa", result.fleiss_kappa),
        (f"Krippendorff's alpha ({result.scale})", result.krippendorff_alpha),
        ("PABAK", result.pabak),
    ]
    out = []
    for name, figure in rows:
        values = [figure.estimate, figure.low, figure.high]
        if all(value == value for value in values):  # NaN: undefined (one category only)
            out.append({"name": name, "estimate": values[0], "low": values[1], "high": values[2]})
    return out


def _flips(records: Sequence[TrialRecord]) -> tuple[list[dict[str, Any]], int]:
    """Per (target, case): trials with a judge answering twice, and those on which its calls disagree."""
    seen: dict[tuple[str | None, str], list[int]] = {}
    for record in records:
        for result in record.grader_results:
            answered: dict[str, set[bool]] = {}
            counted: dict[str, int] = {}
            for call in result.calls or ():
                if call.passed is not None:
                    answered.setdefault(call.judge, set()).add(call.passed)
                    counted[call.judge] = counted.get(call.judge, 0) + 1
            repeated = [judge for judge, n in counted.items() if n >= 2]
            if repeated:
                tally = seen.setdefault((record.target, record.case_id), [0, 0])
                tally[0] += 1
                tally[1] += int(any(len(answered[judge]) > 1 for judge in repeated))
    order = sorted(seen, key=lambda key: (-seen[key][1] / seen[key][0], -seen[key][1], str(key[0]), key[1]))
    rows = [
        {
            "target": key[0],
            "case": key[1],
            "trials": seen[key][0],
            "flipped": seen[key][1],
            "rate": seen[key][1] / seen[key][0],
        }
        for key in order[:FLIP_ROWS]
    ]
    return rows, len(order)


def _bias(records: Sequence[TrialRecord], human: str | Path, level: float) -> list[dict[str, Any]]:
    """Per target: the judge's pass@1 bias against the labels and the corrected pass@1."""
    from trialscore.results.calibration import calibrate
    from trialscore.results.labels import label_banks, read_labels, unknown_cases

    labels = read_labels(human)
    by_target: dict[str | None, dict[str, list[TrialRecord]]] = {}
    for record in records:
        by_target.setdefault(record.target, {}).setdefault(record.case_id, []).append(record)
    unknown_cases(labels, {target: set(cases) for target, cases in by_target.items()})
    out = []
    for target, cases in by_target.items():
        items = sorted(cases)
        ordered = [sorted(cases[item], key=lambda r: r.trial) for item in items]
        banks = label_banks(
            labels,
            target,
            items,
            [[r.trial for r in own] for own in ordered],
            [
                "".join("e" if r.passed is None else ("p" if r.passed else "f") for r in own)
                for own in ordered
            ],
            several_targets=len(by_target) > 1,
        )
        if banks.labels_used == 0:
            continue
        result = calibrate(banks.judge, banks.human, (), level)
        (figure,) = result.figures
        out.append(
            {
                "target": target,
                "labelled_items": result.labelled_items,
                "items": result.items,
                "agreement": result.agreement,
                "bias": None if figure.bias is None else figure.bias.to_dict(),
                "corrected": None if figure.corrected is None else figure.corrected.to_dict(),
                "judge_only": None if figure.judge_only is None else figure.judge_only.to_dict(),
            }
        )
    return out


def judges_panel(
    source: str | Path | RecordSource | object, human: str | Path | None = None, level: float = 0.95
) -> dict[str, Any] | None:
    """The panel's model for the run ``source`` (a path or stored run), or None when no judge graded it.

    ``human`` is a labels file (:mod:`trialscore.results.labels`): the judge's bias against it.
    """
    from trialscore.results.judged import (
        JUDGE_ONLY,
        has_judge_calls,
        judged_inputs,
        record_grades,
        trial_records,
    )
    from trialscore.results.readers import RecordSource
    from trialscore.stats._agreement import judge_agreement

    if not isinstance(source, (str, Path, RecordSource)) or not judged_inputs([source]):
        return None
    found = trial_records(source)
    if found is None or not has_judge_calls(found[1]):
        return None
    records = found[1]
    sets = []
    for grades in record_grades(records):
        try:
            result = judge_agreement(grades.table, level=level, resamples=1000)
        except ValueError:  # too few items for an interval: the panel leaves agreement out
            continue
        sets.append(
            {
                "name": grades.name,
                "judges": [str(judge) for judge in grades.table.judges],
                "items": len(grades.table.items),
                "inter": None if result.inter is None else _figures(result.inter),
                "intra": [(str(judge), _figures(own)) for judge, own in result.intra.items()],
            }
        )
    flips, flip_cases = _flips(records)
    bias = _bias(records, human, level) if human is not None else []
    return {
        "calibration": JUDGE_ONLY if not bias else f"calibrated against human labels ({human})",
        "level": level,
        "sets": sets,
        "flips": flips,
        "flip_cases": flip_cases,
        "bias": bias,
    }


def _no_judge_calls(context: ReportContext) -> bool:
    """Whether the reported run's trial detail already says that no ``llm_judge`` graded the judged
    run: that run is the file the detail was read from, every line of it a trial read, and no trial's
    grader results name ``"calls"`` (then the panel need not read the file again)."""
    run, judged = context.run, context.judged
    trials = run.trials
    return (
        isinstance(judged, (str, Path))
        and isinstance(run.source, Path)
        and run.source == Path(judged)
        and run.rows_skipped == 0
        and trials is not None
        and "graders" in trials.fields
        and not trials.judge_calls
    )


def build(context: ReportContext) -> Built | None:
    """The panel of the context's judged run (None when no ``llm_judge`` graded it)."""
    if context.judged is None or _no_judge_calls(context):
        return None
    found = judges_panel(context.judged, context.human, context.settings.level)
    return None if found is None else Built(found)


PANEL = Panel("judges", "Judges", "judges.html.j2", build)
