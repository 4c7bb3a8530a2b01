"""Typer's ``CliRunner`` that builds the Click command of the application once, not at every call.

``typer.testing.CliRunner.invoke`` builds the Click command from the Typer application afresh at each
call (every command's parameters from its signature and type hints: about 30 ms for ``trialscore``'s
fifteen commands), which is most of the cost of a short command run in-process.  The ``trialscore``
script builds it once per process; :class:`CliRunner` does the same for a test process: one command
per application, invoked as often as the tests ask, in typer's own isolation (its output width, its
streams, its exit codes).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any
from unittest import mock

import typer.testing
from typer import Typer
from typer.main import get_command

__all__ = ["CliRunner"]

#: The Click command of a Typer application, built at its first call.
_command = functools.cache(get_command)


class CliRunner(typer.testing.CliRunner):
    """``typer.testing.CliRunner`` invoking each application's command built once."""

    def invoke(
        self, app: Typer, args: str | Sequence[str] | None = None, **kwargs: Any
    ) -> typer.testing.Result:
        """As ``typer.testing.CliRunner.invoke``, with ``app``'s command built at the first call only."""
        command = _command(app)
        with mock.patch.object(typer.testing, "_get_command", lambda _app: command):
            return super().invoke(app, args, **kwargs)
