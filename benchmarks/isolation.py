"""``isolation: process``: what a call in a process of its own costs, against the floor of a bare fork.

A python target with ``isolation: process`` runs each call in a process forked from a forkserver
(runner/isolation.py).  This benchmark runs, in a fresh Python whose main script imports
trialscore's command line (as the ``trialscore`` console script does):

* ``call_in_process`` of a no-op callable, ``--calls`` calls one after another (each: the fork, the
  case and seed pickled across, the callable imported, the reply back, the process reaped);
* the floor: ``os.fork()`` of the same Python, a byte sent back through a pipe, ``waitpid``;
* a thread per call (``isolation: thread``, the default) for scale.

It prints each per-call time (best of ``--repeat`` rounds) and its ratio to the floor, and the CPU
time the call's process spends before the call begins (``RUSAGE_SELF`` there): what it imports on
its own.  Before the forkserver preloaded the case's modules and the command line, that was about
0.3 s a call.

Run: ``python benchmarks/isolation.py [--calls 200] [--repeat 3]``.  Linux (the forkserver).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

AGENT = """
import resource


def noop(case, seed):
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime
"""

CHILD = """
import sys
from trialscore.cli import main  # as trialscore's console script does

if __name__ == "__main__":
    import asyncio, json, os, time
    from pathlib import Path

    from trialscore.runner.isolation import call_in_process
    from trialscore.runner.offloop import in_daemon_thread
    from trialscore.runner.suite.schema import CaseSpec

    calls, folder = int(sys.argv[1]), Path(sys.argv[2])
    case = CaseSpec(id="c", input="x")

    async def isolated():
        spent = []
        start = time.perf_counter()
        for seed in range(calls):
            ok, value = await call_in_process("agent.py:noop", folder, "target 't'", (case, seed), {}, 60)
            assert ok, value
            spent.append(value)
        return (time.perf_counter() - start) / calls, max(spent)

    def forked():
        start = time.perf_counter()
        for _ in range(calls):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.write(write, b"x")
                os._exit(0)
            os.close(write)
            assert os.read(read, 1) == b"x"
            os.close(read)
            os.waitpid(pid, 0)
        return (time.perf_counter() - start) / calls

    async def threaded():
        start = time.perf_counter()
        for seed in range(calls):
            await in_daemon_thread(lambda: seed, timeout=60)
        return (time.perf_counter() - start) / calls

    asyncio.run(isolated())  # the forkserver started and warm
    process, before = asyncio.run(isolated())
    print(json.dumps({"process": process, "before_call": before, "fork": forked(),
                      "thread": asyncio.run(threaded())}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        raise SystemExit("isolation.py: the forkserver is Linux's")
    rounds = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "agent.py").write_text(AGENT)
        (folder / "child.py").write_text(CHILD)
        for _ in range(args.repeat):
            done = subprocess.run(
                [sys.executable, str(folder / "child.py"), str(args.calls), str(folder)],
                cwd=folder,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"the child failed:\n{done.stderr[-3000:]}")
            rounds.append(json.loads(done.stdout))
    best = {key: min(round_[key] for round_ in rounds) for key in rounds[0]}
    before_call = max(round_["before_call"] for round_ in rounds)  # the worst call of every round
    floor = best["fork"]
    print(f"{args.calls} calls one after another, best of {args.repeat} fresh processes")
    print(f"  os.fork + pipe + waitpid (floor)   {floor * 1000:7.2f} ms a call   1.00x")
    print(f"  isolation: process                 {best['process'] * 1000:7.2f} ms a call  "
          f"{best['process'] / floor:5.2f}x")  # fmt: skip
    print(f"  isolation: thread                  {best['thread'] * 1000:7.2f} ms a call  "
          f"{best['thread'] / floor:5.2f}x")  # fmt: skip
    print(f"CPU a call's process spends before the call (its own imports): at most "
          f"{before_call * 1000:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
