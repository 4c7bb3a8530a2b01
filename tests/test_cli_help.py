"""Help and version: every option name is printed whole at any terminal width."""

from __future__ import annotations

import pytest

import trialscore
from tests.cli_runner import CliRunner
from trialscore.cli import COMMAND_MODULES, app

COMMANDS = ["score", "compare", "rank", "plan", "track", "run", "validate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_never_cuts_an_option_name_at_80_columns(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    if command in ("score", "compare", "rank", "plan"):
        assert "--allow-repeated-trials" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"trialscore {trialscore.__version__}"


def test_help_lists_the_commands_in_their_documented_order() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    lines = result.output.split("Commands:", 1)[1].splitlines()
    names = [line.split()[0] for line in lines if line.startswith("  ")]
    assert names == list(COMMAND_MODULES), names
