"""Shared by the reader tests: per-item counts as a dict, and ``score -f json`` run in-process."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from trialscore.cli import app

runner = CliRunner()


def by_item(counts: Any) -> dict[tuple[Any, ...], tuple[int, int, int]]:
    """``(group values..., item) -> (n, c, errored)`` for every item of every group."""
    return {
        (*(value for _, value in group.key), item): (int(n), int(c), int(e))
        for group in counts.groups()
        for item, n, c, e in zip(group.item, group.n, group.c, group.errored, strict=True)
    }


def score_json(*args: str) -> dict[str, Any]:
    """``trialscore score ARGS -f json``, asserted to exit 0, parsed."""
    result = runner.invoke(app, ["score", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def pass1(report: dict[str, Any]) -> dict[str, float]:
    """pass@1 per group label of a ``score -f json`` report."""
    return {
        group["label"]: next(m for m in group["metrics"] if m["label"] == "pass@1")["estimate"]
        for group in report["groups"]
    }
