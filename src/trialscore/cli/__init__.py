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
them, so ``--help`` stays fast.
"""

from __future__ import annotations

from importlib import import_module

from trialscore.cli._app import app, main

__all__ = ["COMMAND_MODULES", "app", "main"]

#: The command modules, in the order ``trialscore --help`` lists them.
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
    "runs",
    "report",
    "reduce",
    "formats",
    "schema",
)

for _name in COMMAND_MODULES:
    import_module(f"{__name__}.{_name}")
