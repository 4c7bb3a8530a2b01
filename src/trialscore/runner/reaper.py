"""Ending every process a program started: its group, its tree, and what left both.

A ``command`` target or grader runs in a session and process group of its own, so one
``killpg`` ends it and the children that stayed in its group.  A descendant that called
``setsid`` (or ``setpgid``) has left the group; one whose parent exited has left the tree too.
So, when a program's call ends (it exited, timed out, or the run was interrupted):

1. **The tree.** Its descendants still linked by parentage (``/proc/PID/task/*/children``) are
   stopped (``SIGSTOP``, so none forks while the tree is walked), walked again, and killed.
2. **The orphans.** On Linux a process that runs suites for a living (``trialscore run`` and its
   worker processes) makes itself the *child subreaper* of what it starts
   (``prctl(PR_SET_CHILD_SUBREAPER)``, :func:`enable_subreaper`): a descendant whose parent
   exits is re-parented to it instead of to init.  A host process that runs a suite through the
   Python API (a notebook, a test session) is left as it is, since a subreaper adopts every
   orphan below it, the host's own included; it may call :func:`enable_subreaper` itself.
   Every program gets a tag of its own in its environment
   (``TRIALSCORE_PROCESS_TAG``), which its descendants inherit; the runner's children carrying
   the ended program's tag are killed (with their trees) and reaped.

What remains possible: without ``/proc`` and the subreaper (macOS, BSD, Windows), only the
group and the tree; and a descendant that leaves the tree *and* clears its environment before
the program ends is re-parented to the runner but not recognised as the program's (it is killed
when it is found in the tree of another ended program, else it outlives the run).  A cgroup per
program would close that gap where one may be created; it is not used.

A subreaper also inherits the zombies of orphans that exit on their own; they are reaped when a
program ends: those of its group or session, and session leaders (``setsid``) the runner did not
start itself, while no program is being started (so a program's own exit status is never taken
from the event loop that waits for it).

In a process of its own (a subreaper adopts every orphan below it, and this one must not be a
test session's or a notebook's):

>>> import subprocess, sys
>>> code = "from trialscore.runner.reaper import enable_subreaper; print(enable_subreaper())"
>>> said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
>>> said.strip() in ("True", "False")
True
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["TAG_ENV", "enable_subreaper", "end_program", "forget", "new_tag", "started"]

#: The environment variable that marks a program's descendants as its own.
TAG_ENV = "TRIALSCORE_PROCESS_TAG"
_PR_SET_CHILD_SUBREAPER = 36
_TAGS = itertools.count()
_subreaper: bool | None = None
#: The programs started and not yet ended (their exit status belongs to the event loop), and how many
#: are being started right now (not yet in that set).
_running: set[int] = set()
_starting = 0
#: Rounds of killing re-parented orphans (a killed orphan's own children are re-parented in turn).
_ROUNDS = 8


def enable_subreaper() -> bool:
    """Make this process the child subreaper of its descendants (Linux); True when it is.

    Done once per process; the setting is inherited by nothing and changes nothing for a
    process that starts no program.
    """
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            import ctypes

            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def new_tag() -> str:
    """A tag no other program of this process has: ``PID-N``."""
    return f"{os.getpid()}-{next(_TAGS)}"


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (every thread's), from ``/proc``; empty where there is none."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                out.extend(int(part) for part in (task / "children").read_text().split())
    return out


def _tree(pid: int) -> list[int]:
    """Every descendant of ``pid`` still linked to it by parentage, parents before children."""
    found, frontier = [], [pid]
    while frontier:
        children = [child for parent in frontier for child in _children(parent)]
        found.extend(children)
        frontier = children
    return found


def _signal(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _kill_tree(pid: int) -> None:
    """Stop ``pid``'s tree (no new forks), then kill every process of it, ``pid`` last."""
    stopped = _tree(pid)
    _signal(stopped, signal.SIGSTOP)
    everyone = list(dict.fromkeys([*stopped, *_tree(pid)]))
    _signal(everyone, signal.SIGKILL)


@contextlib.contextmanager
def started() -> Iterator[Callable[[int], None]]:
    """Around starting a program: call the value with its pid once it runs (see :func:`end_program`)."""
    global _starting
    _starting += 1
    try:
        yield _running.add
    finally:
        _starting -= 1


def _stat(pid: int) -> tuple[str, int, int] | None:
    """``(state, process group, session)`` of ``pid`` (a zombie too), or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[2]), int(fields[3])


def _reap_zombies(pid: int) -> None:
    """Reap the zombies the subreaper inherited from the program ``pid`` (see the module docstring)."""
    for child in _children(os.getpid()):
        if child in _running:
            continue
        stat = _stat(child)
        if stat is None or stat[0] != "Z":
            continue
        _, group, session = stat
        if group == pid or session == pid or (session == child and _starting == 0):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, os.WNOHANG)


def _tagged(pid: int, tag: str) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{TAG_ENV}={tag}".encode() in environ.split(b"\0")


def end_program(pid: int, tag: str, *, reaped: bool) -> None:
    """Kill what is left of the program ``pid`` started with ``tag``: its group, its tree (unless it
    was ``reaped``: its pid may be another process's by now), and the runner's re-parented children
    carrying its tag (each reaped).  The program itself is left for its waiter to reap.

    The group is killed by id even after the program was reaped: a process group id is not given to
    a new process while a member of the group lives.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if not reaped:
        _kill_tree(pid)
    if not _subreaper:
        return
    me = os.getpid()
    for _ in range(_ROUNDS):
        orphans = [child for child in _children(me) if child != pid and _tagged(child, tag)]
        if not orphans:
            break
        for orphan in orphans:
            _kill_tree(orphan)
            _signal([orphan], signal.SIGKILL)
        for orphan in orphans:  # ours since it was re-parented: nobody else waits for it
            with contextlib.suppress(ChildProcessError):
                os.waitpid(orphan, 0)
    _reap_zombies(pid)


def forget(pid: int) -> None:
    """The program ``pid`` was reaped by its waiter: it is no longer the event loop's to wait for."""
    _running.discard(pid)
