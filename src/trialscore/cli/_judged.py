"""What the commands about judges share: inputs named by path or by stored run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trialscore.cli._options import ReadOptions
    from trialscore.results.readers import RecordSource

__all__ = ["resolved"]


def resolved(files: Sequence[Path], read: ReadOptions) -> list[Path | RecordSource]:
    """``files`` with every name that is no path read from the run store (a run id, latest, latest~N)."""
    if all(path.exists() for path in files):
        return list(files)
    from trialscore.runner.history import resolve_inputs

    return list(resolve_inputs(files, read.store, read.suite))
