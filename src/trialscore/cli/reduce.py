"""``trialscore reduce``: trials of any size to a counts table, the unit of exchange."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from trialscore._words import plural
from trialscore.cli._app import app
from trialscore.cli._options import (
    JSON_VERSION,
    ByOpt,
    FilesArg,
    FormatOpt,
    OutputFormat,
    ReadOptions,
    bad_input,
    inputs_of,
    reading_options,
    split,
    warn_skipped_rows,
)
from trialscore.cli._render import Report, Section, render

__all__ = ["reduce"]


class EngineOption(str, Enum):
    """Where the reduction runs."""

    duckdb = "duckdb"
    ray = "ray"


def _bytes(size: int) -> str:
    """A byte count for people: ``12.3 MB``."""
    value = float(size)
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} bytes"  # pragma: no cover


@app.command()
@reading_options()
def reduce(
    files: FilesArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="The counts table to write (Parquet).")],
    by: ByOpt = None,
    engine: Annotated[
        EngineOption,
        typer.Option("--engine", help="duckdb (this machine) or ray (Ray Data; Parquet inputs)."),
    ] = EngineOption.duckdb,
    address: Annotated[
        str | None,
        typer.Option("--address", help="The Ray cluster to join with --engine ray (default: a local Ray)."),
    ] = None,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Reduce trials to a counts table: one row per (target, suite, category, case) with its trials,
    passes, errored trials and sums of graded scores. Every reading command takes the table as it
    takes the trials, with the same numbers; tables merge (reduce them again, or read them together).

    Inputs: files, folders, globs ('run=*/model=*/*.parquet'), s3:// URLs, or counts tables.

    Example: trialscore reduce 'logs/*.parquet' --out counts.parquet
    """
    with bad_input():
        from trialscore.results import progress
        from trialscore.results.reduce import reduce_trials

        with progress.shown():
            done = reduce_trials(
                [path for path in inputs_of(files) if isinstance(path, (str, Path))],
                out,
                by=split(by),
                columns=read.columns(),
                skip_invalid=read.skip_invalid,
                allow_repeated_trials=read.allow_repeated_trials,
                input_format=read.input_format,
                engine=engine.value,
                address=address,
            )
    warn_skipped_rows(done.rows_skipped, None)
    payload: dict[str, Any] = {"command": "reduce", "version": JSON_VERSION, **done.to_dict()}
    rows: list[list[object]] = [
        ["rows read", done.rows_read],
        ["rows skipped", done.rows_skipped],
        ["rows errored", done.rows_errored],
        ["bytes read", _bytes(done.bytes_read)],
        ["groups", done.groups],
        ["rows written", done.rows_written],
    ]
    notes = [*done.notes, *done.partial]
    section = Section(["", ""], rows, title=f"counts table {done.out}", notes=notes)
    summary = (
        f"read {plural(done.rows_read, 'row')} ({_bytes(done.bytes_read)}); "
        f"wrote {plural(done.groups, 'group')}, "
        f"{plural(done.rows_written, 'row')} (group, case) to {done.out} with engine {done.engine}"
    )
    render(Report(payload, [section], footer=[summary]), output)
