"""Shared by the reader tests: per-item counts as a dict, ``score -f json`` run in-process, and the
peak memory of a child process that reads a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.cli_runner import CliRunner
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


_READ = """
import resource, sys
from trialscore.results.readers import read_counts
counts = read_counts([sys.argv[1]], by=tuple(filter(None, sys.argv[2].split(","))))
print(counts.stats.rows_read, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def reading_peak(path: Path, by: tuple[str, ...] = ()) -> tuple[int, float]:
    """(rows read, peak RSS in MB) of a fresh Python that reads ``path`` with ``read_counts`` (``by``)."""
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(path), ",".join(by)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows, peak = done.stdout.split()
    return int(rows), int(peak) / 1024
