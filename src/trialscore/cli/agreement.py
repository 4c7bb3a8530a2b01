"""``trialscore agreement``: how far judges agree with one another and with themselves, with intervals."""

from __future__ import annotations

import math
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trialscore.cli._app import app
from trialscore.cli._options import (
    JSON_VERSION,
    FilesArg,
    FormatOpt,
    LevelOpt,
    OutputFormat,
    ReadOptions,
    SeedOpt,
    bad_input,
    reading_options,
)
from trialscore.cli._render import Report, Section, render
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.results.judged import GradeSet
    from trialscore.stats._agreement import Agreement, AgreementInterval

__all__ = ["agreement"]

#: The figures of one agreement, in the order they are shown, with their names in the table.
FIGURES = {
    "percent_agreement": "percent agreement",
    "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
    "pabak": "PABAK",
    "prevalence_index": "prevalence index",
}


class GradeOption(str, Enum):
    """Which value of each grade is compared."""

    passed = "passed"
    score = "score"


class ScaleOption(str, Enum):
    """Krippendorff's level of measurement."""

    nominal = "nominal"
    ordinal = "ordinal"
    interval = "interval"


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _interval(interval: AgreementInterval | None) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "estimate": _number(interval.estimate),
        "low": _number(interval.low),
        "high": _number(interval.high),
        "level": interval.level,
    }


def _payload(result: Agreement) -> dict[str, Any]:
    """One agreement as JSON: every figure ``{estimate, low, high, level}`` (null where undefined)."""
    return {
        "coders": [str(coder) for coder in result.coders],
        "items": result.items,
        "units": result.units,
        "complete_units": result.complete_units,
        "unpaired_units": result.unpaired_units,
        "categories": result.categories,
        "scale": result.scale,
        "method": result.method,
        "percent_agreement": _interval(result.percent_agreement),
        "cohen_kappa": [
            {
                "first": str(pair.first),
                "second": str(pair.second),
                "units": pair.units,
                "estimate": _number(pair.estimate),
                "low": _number(pair.low),
                "high": _number(pair.high),
                "level": pair.level,
            }
            for pair in result.cohen_kappa
        ],
        "fleiss_kappa": _interval(result.fleiss_kappa),
        "krippendorff_alpha": _interval(result.krippendorff_alpha),
        "pabak": _interval(result.pabak),
        "prevalence_index": _interval(result.prevalence_index),
    }


def _section(title: str, result: Agreement) -> Section:
    rows: list[list[object]] = []
    for key, name in FIGURES.items():
        figure = getattr(result, key)
        if figure is None:
            continue
        if key == "krippendorff_alpha":
            name = f"{name} ({result.scale})"
        rows.append([name, *(_number(v) for v in (figure.estimate, figure.low, figure.high))])
        if key == "percent_agreement":
            for pair in result.cohen_kappa:
                label = f"Cohen's kappa {pair.first} vs {pair.second}"
                rows.append([label, *(_number(v) for v in (pair.estimate, pair.low, pair.high))])
    lead = (
        f"{len(result.coders)} coders ({', '.join(map(str, result.coders))}), {result.units} graded outputs "
        f"on {result.items} items"
    )
    level = result.percent_agreement.level
    notes = [f"{level:.0%} intervals: {result.method}"]
    if result.complete_units < result.units:
        notes.append(f"Fleiss' kappa on the {result.complete_units} outputs every coder graded")
    if result.unpaired_units:
        notes.append(f"{result.unpaired_units} outputs with a single grade left out (no pair to agree)")
    return Section(["figure", "estimate", "low", "high"], rows, title=title, lead=lead, notes=notes)


def _set_report(found: GradeSet, options: dict[str, Any]) -> tuple[dict[str, Any], list[Section]]:
    from trialscore.stats._agreement import judge_agreement

    result = judge_agreement(found.table, **options)
    sections = []
    name = f"{found.name} ({found.source})"
    if result.inter is not None:
        sections.append(_section(f"{name}: inter-judge, each judge's first call", result.inter))
    for judge, own in result.intra.items():
        sections.append(_section(f"{name}: intra-judge {judge}, its repeated calls on the same output", own))
    payload = {
        **found.to_dict(),
        "inter": None if result.inter is None else _payload(result.inter),
        "intra": {str(judge): _payload(own) for judge, own in result.intra.items()},
    }
    return payload, sections


@app.command()
@reading_options(clusters=False)
def agreement(
    files: FilesArg,
    judge_col: Annotated[
        str, typer.Option("--judge-col", help="A long table's column naming the judge of each grade.")
    ] = "judge",
    repeat_col: Annotated[
        str | None,
        typer.Option("--repeat-col", help="A long table's column numbering a judge's repeated calls."),
    ] = None,
    grade: Annotated[
        GradeOption,
        typer.Option("--grade", help="Compare each grade's verdict (passed) or its score (0..1)."),
    ] = GradeOption.passed,
    scale: Annotated[
        ScaleOption,
        typer.Option("--scale", help="Krippendorff's alpha for nominal, ordinal or interval grades."),
    ] = ScaleOption.nominal,
    level: LevelOpt = 0.95,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples (of items).")] = 2000,
    seed: SeedOpt = 0,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Agreement of judges, each figure with a bootstrap interval over items: between judges and
    within each judge's repeated calls.

    Reads the runner's judge calls (an llm_judge with judges or repeats), several scorers of one
    trial (inspect_ai, promptfoo, deepeval), or a long table: case_id, trial, a judge column, an
    optional repeat column, and passed or score.

    Example: trialscore agreement run-folder/ --format json
    """
    with bad_input():
        from trialscore.cli._options import stored_or_given
        from trialscore.results.judged import read_grades

        inputs = stored_or_given(files, read)
        sets = read_grades(
            inputs,
            judge_col=judge_col,
            repeat_col=repeat_col,
            grade=grade.value,
            columns=read.columns(),
            skip_invalid=read.skip_invalid,
            input_format=read.input_format,
        )
        options = {"scale": scale.value, "level": level, "resamples": resamples, "seed": seed}
        reports = [_set_report(found, options) for found in sets]
        if not any(own for _, own in reports):
            names = ", ".join(
                f"{found.name} (judges {', '.join(map(str, found.table.judges))})" for found in sets
            )
            raise EvaluationError(
                f"{names}: one judge and one call per output: agreement needs two judges or repeated calls"
            )
    payload: dict[str, Any] = {
        "command": "agreement",
        "version": JSON_VERSION,
        "grade": grade.value,
        "scale": scale.value,
        "level": level,
        "resamples": resamples,
        "seed": seed,
        "sets": [set_payload for set_payload, _ in reports],
        "note": "agreement is not accuracy: judges that agree can share a bias (score --human measures it)",
    }
    sections = [section for _, own in reports for section in own]
    render(Report(payload, sections, footer=[payload["note"]]), output)
