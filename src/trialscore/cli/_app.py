"""The ``trialscore`` Typer application, its consoles and the root options (``--version``)."""

from __future__ import annotations

from typing import Annotated

import typer

from trialscore.cli._coercion import Commands
from trialscore.terminal import stderr_console, stdout_console

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CANT_CREATE",
    "EXIT_GATE_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_GRADED",
    "EXIT_NOT_JUDGED",
    "EXIT_STORE_FAILED",
    "app",
    "console",
    "errors",
    "main",
]

#: Exit status when a gate failed (``compare --fail-on regression``).
EXIT_GATE_FAILED = 1
#: Exit status for bad usage or bad input (a malformed suite, an unknown run id, an unset key variable).
EXIT_BAD_INPUT = 2
#: Exit status of a gate that could not judge: a run none of whose trials could be graded (every trial
#: errored), a bar no group had the trials for, a comparison no group of which could be tested.
EXIT_NOT_JUDGED = 3
#: The same status, under the name a run that graded nothing gives it.
EXIT_NOTHING_GRADED = EXIT_NOT_JUDGED
#: Exit status when an output file (results, report, JUnit, step summary) cannot be written (a full disk):
#: ``EX_CANTCREAT`` of sysexits.h.  The previous file, or none, is left; never a cut one.
EXIT_CANT_CREATE = 73
#: Exit status when the run store cannot be written or read (a full disk): ``EX_IOERR`` of sysexits.h.
EXIT_STORE_FAILED = 74
#: Exit status of an interrupted run (128 + SIGINT).
EXIT_INTERRUPTED = 130


app = typer.Typer(
    cls=Commands,
    name="trialscore",
    help="Score non-deterministic evaluations: pass@k, pass^k, G-Pass@k, Bayes@N.",
    no_args_is_help=True,
    add_completion=False,
    # Plain help and usage errors: they wrap at any terminal width instead of cutting option names.
    rich_markup_mode=None,
)
#: Results (tables, JSON) go to standard output.
console = stdout_console()
#: Errors, warnings and progress go to standard error.
errors = stderr_console()


def _print_version(value: bool) -> None:
    if value:
        from trialscore import __version__

        typer.echo(f"trialscore {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Score non-deterministic evaluations: pass@k, pass^k, G-Pass@k, Bayes@N."""


#: True when this process is the ``trialscore`` command itself, not a host running the app in-process
#: (a test session, a notebook): only then may ``run`` make it the subreaper of what it starts.
owns_process = False


def main() -> None:
    """Entry point of the ``trialscore`` script."""
    global owns_process
    owns_process = True
    app()
