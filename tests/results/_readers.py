"""Shared by the reader tests: per-item counts as a dict, ``score -f json`` run in-process, and the
peak memory of child processes that read files."""

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


#: A fresh Python that imports the readers once, then reads each file in a fork of its own (a fork
#: starts from the same memory, so the forks' peaks differ by what their readings took).
_READS = """
import os, resource, sys
from trialscore.results.readers import read_counts
by = tuple(filter(None, sys.argv[1].split(",")))
for path in sys.argv[2:]:
    if os.fork() == 0:
        counts = read_counts([path], by=by)
        print(counts.stats.rows_read, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
        os._exit(0)
    _, status = os.wait()
    if status:
        sys.exit(f"reading {path} failed")
"""


def reading_peaks(*paths: Path, by: tuple[str, ...] = ()) -> list[tuple[int, float]]:
    """(rows read, peak RSS in MB) of each of ``paths`` read with ``read_counts`` (``by``) in a child
    process of its own: forks of one fresh Python that imported the readers."""
    done = subprocess.run(
        [sys.executable, "-c", _READS, ",".join(by), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = (line.split() for line in done.stdout.splitlines())
    return [(int(rows), int(peak) / 1024) for rows, peak in found]
