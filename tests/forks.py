"""``trialscore`` (or ``pytest``) commands, each a process of its own forked from one Python that
imported the program once.

A command started afresh spends most of its half CPU-second importing; tests that run many commands
as processes (for their exit code, their output, their memory) run them here instead.
:data:`SERVER` (``python -c SERVER PROGRAM MODULE...``) imports the ``MODULE`` s (for trialscore its
command line and helpers, never a command module: each command registers itself alone, as when started
afresh), then reads commands on stdin, one JSON line each: ``[arguments, merge, folder, prelude]``.  It
runs each as ``python -m PROGRAM ARGUMENTS`` in a fork of itself, in ``folder`` (null: its own), after
running the Python code ``prelude`` (test-only patches), stdin empty, stdout and stderr to files of
their own (one file with ``merge``, as ``2>&1``), and answers each with two JSON lines: the fork's
process id once it started, then ``[exit code, peak memory in KiB, stdout, stderr]`` once it ended.
The peak is the fork's ``ru_maxrss`` plus the server's file-backed resident memory (its shared
libraries), which a fork does not count until it touches it but a process started afresh does: so
it is no less than the command takes started afresh.  :class:`Forks` drives a server from a test;
:class:`ForkServers` keeps one server per program and imports for every test module of a process.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "HELPERS",
    "RUNNER",
    "SERVER",
    "Done",
    "ForkServers",
    "Forks",
    "answers",
    "request",
    "server_command",
]

#: What every command imports: trialscore's command line, the shared options, the renderer and the
#: readers (none registers a command).
HELPERS = (
    "trialscore.cli",
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
program = sys.argv[1]
for name in sys.argv[2:]:
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
        sys.argv = [program, *args]
        runpy.run_module(program, run_name="__main__", alter_sys=True)
        sys.exit()
    print(pid, flush=True)
    _, status, usage = os.wait4(pid, 0)
    texts = []
    for file in (out, err):
        file.seek(0)
        texts.append(file.read().decode(errors="replace"))
        file.close()
    print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss + mapped, *texts]), flush=True)
"""


def server_command(modules: tuple[str, ...] = HELPERS, program: str = "trialscore") -> list[str]:
    """The command line that starts a server of ``python -m PROGRAM``, importing ``modules`` first."""
    return [sys.executable, "-c", SERVER, program, *modules]


def request(args: list[str], merge: bool = False, cwd: Path | None = None, prelude: str = "") -> str:
    """The line asking a server to run ``PROGRAM ARGS`` (see the module)."""
    return json.dumps([args, merge, None if cwd is None else str(cwd), prelude]) + "\n"


@dataclass(frozen=True)
class Done:
    """What a command did: its exit code, stdout, stderr and peak memory (MB; see the module)."""

    code: int
    stdout: str
    stderr: str
    peak_mb: float


def answers(output: str) -> list[Done]:
    """What each command did, from a server's whole output (a process id, then a result, a command)."""
    return [_done(line) for line in output.splitlines()[1::2]]


def _done(result: str) -> Done:
    """What a command did, from the server's line saying so."""
    code, peak_kb, stdout, stderr = json.loads(result)
    return Done(code, stdout, stderr, peak_kb / 1024)


class Forks:
    """A server run by a test: each :meth:`run` a command, a hang (over ``timeout`` seconds) a failure
    that ends the server and the command (a new server starts for the next command, as after a command
    started and never finished: a test that failed half way).  ``program`` is the module each command
    runs as ``python -m PROGRAM``; ``modules`` what the server imports for it."""

    def __init__(
        self, timeout: float, modules: tuple[str, ...] = HELPERS, program: str = "trialscore"
    ) -> None:
        self.timeout, self.modules, self.program = timeout, modules, program
        self.process: subprocess.Popen[bytes] | None = None
        self.args: tuple[str, ...] = ()  # of the command started last
        self.pending = b""  # read from the server, not yet answered
        self.running = False  # a command started, not finished

    def run(self, *args: str, cwd: Path | None = None, prelude: str = "") -> Done:
        """``PROGRAM ARGS`` in a process of its own, in the folder ``cwd``, after ``prelude`` (Python)."""
        self.start(*args, cwd=cwd, prelude=prelude)
        return self.finish()

    def start(self, *args: str, cwd: Path | None = None, prelude: str = "") -> int:
        """Start ``PROGRAM ARGS`` as :meth:`run` does; its process id (:meth:`finish` waits for it)."""
        if self.running:
            self.close()
        if self.process is None:
            self.process = subprocess.Popen(
                server_command(self.modules, self.program),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,  # a hung command is ended with it
            )
            self.pending = b""
        assert self.process.stdin is not None
        self.process.stdin.write(request(list(args), cwd=cwd, prelude=prelude).encode())
        self.process.stdin.flush()
        self.args, self.running = args, True
        return int(self._answer())

    def ended(self) -> bool:
        """Whether the command started last has ended."""
        assert self.process is not None and self.process.stdout is not None
        return b"\n" in self.pending or bool(select.select([self.process.stdout], [], [], 0)[0])

    def finish(self, timeout: float | None = None) -> Done:
        """What the command started last did, once it ended (within ``timeout`` seconds, if given
        instead of the server's)."""
        done = _done(self._answer(timeout))
        self.running = False
        return done

    def _answer(self, timeout: float | None = None) -> str:
        """The server's next line (read unbuffered, so that a line read is never waited for); none within
        ``timeout`` (or the server's) is a hang (see the class)."""
        assert self.process is not None and self.process.stdout is not None
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.process.stdout], [], [], left)[0]:
                self.close()
                pytest.fail(f"hung: {self.program} {' '.join(self.args)} ran over {timeout} s")
            chunk = os.read(self.process.stdout.fileno(), 2**20)
            assert chunk, f"the server of {self.program} {' '.join(self.args)} ended"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def close(self) -> None:
        """End the server (at once, with the command it runs, if one was not finished)."""
        if self.process is not None:
            if self.running:
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate(timeout=60)
            self.process, self.running = None, False


class ForkServers:
    """The servers of one test process, one per program and imports: the test modules that run the same
    program after the same imports share one server (started by the first command, ended by
    :meth:`close` at the session's end, or at a hang as :class:`Forks` says).  A server's state never
    changes (each command runs in a fork of it), so what one module ran cannot reach the next."""

    def __init__(self) -> None:
        self._servers: dict[tuple[str, tuple[str, ...]], Forks] = {}

    def get(self, timeout: float, modules: tuple[str, ...] = HELPERS, program: str = "trialscore") -> Forks:
        """The server of ``program`` after ``modules``; a command over ``timeout`` seconds (the asking
        module's own bound, kept until another module asks) is a hang."""
        forks = self._servers.setdefault((program, modules), Forks(timeout, modules, program))
        forks.timeout = timeout
        return forks

    def close(self) -> None:
        """End every server."""
        for forks in self._servers.values():
            forks.close()
