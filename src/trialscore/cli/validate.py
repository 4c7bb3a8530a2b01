"""``trialscore validate``: check a suite file without running it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from trialscore._words import plural
from trialscore.cli._app import EXIT_BAD_INPUT, app, console, errors
from trialscore.cli._options import error_text
from trialscore.errors import EvaluationError

__all__ = ["validate"]


@app.command()
def validate(suite: Annotated[Path, typer.Argument(help="The suite YAML file.")]) -> None:
    """Check a suite file without running it: schema, references, thresholds.

    Example: trialscore validate suite.yaml
    """
    try:
        from trialscore.runner.suite import load_suite  # imports the plugins: one that fails is bad input

        loaded = load_suite(suite)
    except EvaluationError as exc:
        errors.print(f"[red]error:[/red] {escape(error_text(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    trials = sum(loaded.settings_for(case).trials for case in loaded.cases) * len(loaded.evaluated_targets)
    console.print(
        f"{suite}: valid suite {loaded.name!r}: {plural(len(loaded.cases), 'case')}, "
        f"{plural(len(loaded.evaluated_targets), 'evaluated target')}, {plural(trials, 'trial')} planned",
        soft_wrap=True,
    )
