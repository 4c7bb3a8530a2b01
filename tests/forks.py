"""``trialscore`` commands, each a process of its own forked from one Python that imported trialscore once.

A command started afresh spends most of its half CPU-second importing; tests that run many commands
as processes (for their exit code, their output, their memory) run them here instead.
:data:`SERVER` (``python -c SERVER MODULE...``) imports trialscore's command line and the ``MODULE``
s (helpers, never a command module: each command registers itself alone, as when started afresh),
then reads commands on stdin, one JSON line each: ``[arguments, merge, folder, prelude]``.  It runs
each as ``python -m trialscore ARGUMENTS`` in a fork of itself, in ``folder`` (null: its own), after
running the Python code ``prelude`` (test-only patches), stdin empty, stdout and stderr to files of
their own (one file with ``merge``, as ``2>&1``), and answers each with a JSON line: ``[exit code,
peak memory in KiB, stdout, stderr]``.  The peak is the fork's ``ru_maxrss`` plus the server's file-backed
resident memory (its shared libraries), which a fork does not count until it touches it but a
process started afresh does: so it is no less than the command takes started afresh.
:class:`Forks` drives a server from a test.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["HELPERS", "RUNNER", "SERVER", "Done", "Forks", "request", "server_command"]

#: What every command imports after trialscore's command line: the shared options, the renderer and
#: the readers (none registers a command).
HELPERS = (
    "trialscore.cli._gates",
    "trialscore.cli._judged",
    "trialscore.cli._options",
    "trialscore.cli._per_success",
    "trialscore.cli._render",
    "trialscore.results.readers",
)
#: What ``trialscore run`` imports besides.
RUNNER = ("trialscore.runner.orchestrator",)

SERVER = """
import gc, importlib, json, os, runpy, sys, tempfile
import trialscore.cli
for name in sys.argv[1:]:
    importlib.import_module(name)
gc.freeze()  # what was imported stays shared with each fork, not copied as a collection walks it
with open("/proc/self/status") as status:
    mapped = next(int(line.split()[1]) for line in status if line.startswith("RssFile:"))
for line in sys.stdin:
    args, merge, folder, prelude = json.loads(line)
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out.fileno(), 1)
        os.dup2((out if merge else err).fileno(), 2)
        if folder is not None:
            os.chdir(folder)
        exec(prelude, {"__name__": "prelude"})
        sys.argv = ["trialscore", *args]
        runpy.run_module("trialscore", run_name="__main__", alter_sys=True)
        sys.exit()
    _, status, usage = os.wait4(pid, 0)
    texts = []
    for file in (out, err):
        file.seek(0)
        texts.append(file.read().decode(errors="replace"))
        file.close()
    print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss + mapped, *texts]), flush=True)
"""


def server_command(modules: tuple[str, ...] = HELPERS) -> list[str]:
    """The command line that starts a server importing ``modules`` first."""
    return [sys.executable, "-c", SERVER, *modules]


def request(args: list[str], merge: bool = False, cwd: Path | None = None, prelude: str = "") -> str:
    """The line asking a server to run ``trialscore ARGS`` (see the module)."""
    return json.dumps([args, merge, None if cwd is None else str(cwd), prelude]) + "\n"


@dataclass(frozen=True)
class Done:
    """What a command did: its exit code, stdout, stderr and peak memory (MB; see the module)."""

    code: int
    stdout: str
    stderr: str
    peak_mb: float


class Forks:
    """A server run by a test: each :meth:`run` a command, a hang (over ``timeout`` seconds) a failure
    that ends the server and the command (a new server starts for the next command)."""

    def __init__(self, timeout: float, modules: tuple[str, ...] = HELPERS) -> None:
        self.timeout, self.modules = timeout, modules
        self.process: subprocess.Popen[str] | None = None

    def run(self, *args: str, cwd: Path | None = None, prelude: str = "") -> Done:
        """``trialscore ARGS`` in a process of its own, in the folder ``cwd``, after ``prelude`` (Python)."""
        if self.process is None:
            self.process = subprocess.Popen(
                server_command(self.modules),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,  # a hung command is ended with it
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(request(list(args), cwd=cwd, prelude=prelude))
        self.process.stdin.flush()
        if not select.select([self.process.stdout], [], [], self.timeout)[0]:
            self.close(kill=True)
            pytest.fail(f"hung: trialscore {' '.join(args)} ran over {self.timeout} s")
        code, peak_kb, stdout, stderr = json.loads(self.process.stdout.readline())
        return Done(code, stdout, stderr, peak_kb / 1024)

    def close(self, kill: bool = False) -> None:
        """End the server (with ``kill``, at once, and the command it runs)."""
        if self.process is not None:
            if kill:
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate(timeout=60)
            self.process = None
