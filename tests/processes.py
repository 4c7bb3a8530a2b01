"""Processes seen through ``/proc`` (Linux): whether one still runs, and its parent."""

from __future__ import annotations

from pathlib import Path

__all__ = ["alive", "parent"]


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (which may hold spaces): state, parent, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False


def parent(pid: int) -> int:
    """The process id of ``pid``'s parent."""
    return int(_stat(pid)[1])
