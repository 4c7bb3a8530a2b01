"""The test suite's CPU time, every process it starts counted (issue 22: at most 200 CPU-seconds).

``time make test`` (or ``/usr/bin/time pytest``) counts a process's CPU only when its parent waits
for it.  Processes a test starts that outlive their parent are handed to the system's first
process, which waits for them instead, and their CPU is never seen: Spark's JVM, Ray's workers,
Chromium's helpers, the workers of a killed controller.  A *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``) is handed those orphans and waits for them, but it still misses
a process whose parent ignores ``SIGCHLD``: the kernel reaps such a child itself and adds its CPU to
no one.  Ray's raylet does that to the worker processes it starts (Ray's actors, Ray Data's
footer readers): measured on the two Ray test files, the subreaper saw 5.2 CPU-s of the 15.8 the
kernel's process accounting recorded.

So the suite runs in a control group of its own when this machine lets one be made (cgroup v2, or
v1's ``cpuacct``; usually as root), and the group's CPU counter, which every process in it adds
to whoever reaps it, is the figure.  The three figures printed:

* what ``time`` sees: the suite's process and the processes it waited for;
* the subreaper's: every process handed to a wait;
* the control group's: every process that ran (``unavailable`` without a control group).

Run from the repository: ``python benchmarks/suite_cpu.py [PYTEST ARGUMENTS]`` (default the suite
as ``make test`` runs it: ``-n auto --dist loadfile``).  Linux only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

#: ``prctl`` option: orphaned descendants are re-parented to this process, not to the first one.
PR_SET_CHILD_SUBREAPER = 36
DEFAULT = ["-n", "auto", "--dist", "loadfile", "-q", "-p", "no:cacheprovider"]


def _mounts() -> Iterator[tuple[str, str, set[str]]]:
    """(mount point, file system type, options) of every mount."""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, point, kind, options, *_ = line.split()
        yield point, kind, set(options.split(","))


def _own_groups() -> dict[str, str]:
    """This process's control group in each hierarchy: ``""`` for v2, else the v1 controllers."""
    groups = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _usage(group: Path) -> float:
    """CPU-seconds of every process that ran in ``group``."""
    stat = group / "cpu.stat"
    if stat.exists():  # v2: usage_usec
        fields = dict(line.split() for line in stat.read_text().splitlines())
        return int(fields["usage_usec"]) / 1e6
    return int((group / "cpuacct.usage").read_text()) / 1e9  # v1: nanoseconds


def _new_group() -> Path | None:
    """A new control group beside this process's own, or ``None`` when none can be made here."""
    own = _own_groups()
    for point, kind, options in _mounts():
        if kind != "cgroup2" and not (kind == "cgroup" and "cpuacct" in options):
            continue
        path = own.get("" if kind == "cgroup2" else "cpuacct")
        if path is None:
            continue
        group = Path(point) / path.lstrip("/") / f"trialscore-suite-{os.getpid()}"
        try:
            group.mkdir()
        except OSError:
            continue
        return group
    return None


def main() -> None:
    if not sys.platform.startswith("linux"):
        raise SystemExit("suite_cpu.py: needs Linux (a child subreaper)")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"suite_cpu.py: prctl failed: {os.strerror(ctypes.get_errno())}")
    command = [sys.executable, "-m", "pytest", *(sys.argv[1:] or DEFAULT)]
    group = _new_group()

    def join() -> None:  # in the suite's process, before it runs pytest: all it starts is counted
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    start = time.monotonic()
    try:
        suite = subprocess.Popen(command, preexec_fn=join)
    except subprocess.SubprocessError:  # the group refused the process: count without it
        if group is not None:
            group.rmdir()
        group = None
        suite = subprocess.Popen(command)
    seen, code = 0.0, None
    while True:  # wait for every process handed to us as it ends (a zombie left would look alive)
        try:
            pid, status, usage = os.wait4(-1, 0)
        except ChildProcessError:
            break
        if pid == suite.pid:
            code, seen = os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime
    suite.returncode = code  # reaped here, not by Popen (which would otherwise warn it still runs)
    wall = time.monotonic() - start
    grouped = None
    if group is not None:
        grouped = _usage(group)
        with contextlib.suppress(OSError):  # empty once every process in it has ended
            group.rmdir()
    every = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = every.ru_utime + every.ru_stime
    counted = "unavailable (no control group could be made)" if grouped is None else f"{grouped:.1f} s"
    print(f"wall {wall:.0f} s; CPU seen by time: {seen:.1f} s; CPU of the processes the subreaper "
          f"waited for: {total:.1f} s (user {every.ru_utime:.1f}, system {every.ru_stime:.1f}); "
          f"CPU of every process (control group): {counted}; target: at most 200 s")  # fmt: skip
    raise SystemExit(code)


if __name__ == "__main__":
    main()
