"""The ``trialscore`` command line (Typer + Rich), one module per command.

Commands: ``run`` and ``validate`` (the trial runner), ``score`` (metrics with intervals per
group), ``compare`` (paired comparison, a CI gate), ``agreement`` (how far judges agree, with
intervals), ``label`` (a page to label a random sample by hand), ``rank`` (models ranked with
intervals and the probability each beats the next), ``plan`` (items and trials needed), ``track``
(trends per task category), ``runs`` (the run store as history), ``report`` (one offline HTML
report), ``schema`` (the trial-record JSON schema) and ``demo``.

Shared options are declared once in :mod:`trialscore.cli._options` (the reading options
are one :class:`~trialscore.cli._options.ReadOptions`); every command prints through the
one renderer of :mod:`trialscore.cli._render`.

Exit codes: 0 success, 1 a gate failed (``compare --fail-on regression``), 2 bad usage or
bad input (the message goes to stderr), 3 a run none of whose trials could be graded, 74 the
run store cannot be written, 130 an interrupted run.  ``--format json`` output is stable and documented
in docs/cli.md.  Heavy modules (DuckDB, SciPy) are imported inside the commands that need
them, so ``--help`` stays fast, and the ``trialscore`` script (:func:`main`) imports and builds
only the command it runs: ``trialscore score FILE`` never loads ``run``, ``report`` or ``rank``.
``trialscore.cli.app``, the whole application, loads every command on first use (PEP 562).
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any

from trialscore.cli import _app

__all__ = ["COMMAND_MODULES", "app", "main"]

#: The command modules, in the order ``trialscore --help`` lists them (``runs``, a group of commands,
#: last: Typer lists groups after commands).
COMMAND_MODULES = (
    "run",
    "validate",
    "demo",
    "score",
    "compare",
    "agreement",
    "label",
    "rank",
    "plan",
    "track",
    "report",
    "reduce",
    "formats",
    "schema",
    "runs",
)


def _load(names: tuple[str, ...]) -> None:
    """Import the command modules ``names`` (each registers its command), then put the registered
    commands in :data:`COMMAND_MODULES` order: a module imports others' helpers, so the order in
    which they register is not the order they are listed in."""
    for name in names:
        import_module(f"{__name__}.{name}")
    order = {f"{__name__}.{name}": index for index, name in enumerate(COMMAND_MODULES)}
    # a command registered from elsewhere (a user's own module) keeps its place after them
    _app.app.registered_commands.sort(key=lambda info: order.get(info.callback.__module__, len(order)))


def main() -> None:
    """Entry point of the ``trialscore`` script: the command named first on the command line, alone,
    or every command (``--help``, ``--version``, a misspelt name: Typer lists them or suggests one)."""
    named = sys.argv[1] if len(sys.argv) > 1 else ""
    _load((named,) if named in COMMAND_MODULES else COMMAND_MODULES)
    _app.main()


def __getattr__(name: str) -> Any:
    """``app``: the Typer application with every command loaded."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _load(COMMAND_MODULES)
    globals()["app"] = _app.app
    return _app.app
