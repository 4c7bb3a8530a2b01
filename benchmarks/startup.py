"""Startup benchmark: a fresh ``trialscore score`` process on a small file vs ``python -c "import numpy"``.

Writes a 200-row trial file (20 cases x 10 trials, 0/1 outcomes, one target) and times fresh
processes of:

* the floor: ``python -c "import numpy"`` (interpreter start and NumPy);
* the libraries every command needs: ``python -c "import numpy, duckdb, typer, rich"`` (Pydantic is
  not among them: Typer 0.29 would import it to coerce each value, ``cli/_coercion`` does that
  without it);
* the same with the modules Typer itself loads to run a command (``typer.main``, ``rich.console``);
* the same with a DuckDB database started (every reading starts one);
* ``trialscore score``'s module imported (the libraries and trialscore's modules it loads), and the
  same with Typer parsing ``score FILE --k 1`` while the command itself does nothing: the two
  differences are what trialscore's modules and Typer's argument handling cost before a row is read;
* ``trialscore --help``;
* ``trialscore score FILE --k 1`` (0/1 outcomes, pass@1: the Wilson interval needs no SciPy);
* ``trialscore score FILE`` (default k = 1 and 10: pass@10 per item is not 0/1, its interval
  uses Student's t, which loads ``scipy.special``);
* the pytest plugin: ``python -c "import pytest"`` against ``python -c "import pytest,
  trialscore.pytest_plugin"`` (pytest loads the plugin in every session of an environment where
  trialscore is installed, with or without a ``trials`` mark): the difference is what the plugin
  adds to every pytest run.

Prints each time (best of ``--repeat`` interleaved rounds: every command once a round, so that
all meet the same load of a shared machine) and its ratio to the floor, and for ``score`` the
median of the rounds' ratios.  Targets (issue 22): ``score`` at most 4x the floor;
the plugin at most 30 ms over pytest's own import.

Each command runs once before the rounds, with bytecode writing on (``PYTHONDONTWRITEBYTECODE``
removed from the environment), so trialscore's modules are timed from their cached bytecode as
NumPy's are: an installed package has it, and compiling ~80 modules from source on every start
would be timed otherwise.

Run: ``python benchmarks/startup.py [--repeat 7]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: ``trialscore score``'s module imported (the libraries and trialscore's modules it loads) and a
#: DuckDB database started, as every reading does: no argument parsed, no file read.
_IMPORTED = "import duckdb, trialscore.cli.score; duckdb.connect()"
#: The same, then Typer builds the command and parses ``score FILE --k 1`` (each value coerced by
#: ``cli/_coercion``) with the command's own work a no-op: what ``trialscore score`` costs before
#: trialscore reads a row.
_PARSED = """
import functools, sys
import duckdb, trialscore.cli.score
from trialscore.cli import _app
duckdb.connect()
info = next(i for i in _app.app.registered_commands if i.callback.__module__ == "trialscore.cli.score")
info.callback = functools.wraps(info.callback)(lambda *args, **kwargs: None)
sys.argv = ["trialscore", "score", sys.argv[1], "--k", "1"]
_app.main()
"""


def _rounds(commands: dict[str, list[str]], repeat: int) -> dict[str, list[float]]:
    """Each command's wall time in ``repeat`` interleaved rounds (every command once a round, so that
    all meet the same load of a shared machine), after one untimed run of each."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for command in commands.values():
        subprocess.run(command, check=True, capture_output=True, env=env)  # writes the bytecode caches
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=env)
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    script = str(Path(sys.executable).with_name("trialscore"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trials.jsonl"
        rows = [
            {"case_id": f"c{case:02d}", "trial": trial, "target": "m", "passed": (case * 7 + trial) % 3 != 0}
            for case in range(20)
            for trial in range(10)
        ]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        cases = {
            'python -c "import numpy"': [sys.executable, "-c", "import numpy"],
            "import numpy, duckdb, typer, rich": [sys.executable, "-c", "import numpy, duckdb, typer, rich"],
            "... and the modules Typer loads to run a command": [
                sys.executable,
                "-c",
                "import numpy, duckdb, typer, rich, typer.main, rich.console",
            ],
            "... and a DuckDB database started": [
                sys.executable,
                "-c",
                "import numpy, duckdb, typer, rich, typer.main, rich.console; duckdb.connect()",
            ],
            "... and Pydantic (as Typer's own coercion would import it)": [
                sys.executable,
                "-c",
                "import numpy, duckdb, typer, rich, typer.main, rich.console, typer._adapters; "
                "duckdb.connect()",
            ],
            "... and trialscore's score command imported": [sys.executable, "-c", _IMPORTED],
            "... and Typer parsing score's arguments": [sys.executable, "-c", _PARSED, str(path)],
            "trialscore --help": [script, "--help"],
            "trialscore score FILE --k 1": [script, "score", str(path), "--k", "1"],
            "trialscore score FILE": [script, "score", str(path)],
            "python -c 'import pytest'": [sys.executable, "-c", "import pytest"],
            "... and trialscore.pytest_plugin": [
                sys.executable,
                "-c",
                "import pytest, trialscore.pytest_plugin",
            ],
        }
        rounds = _rounds(cases, args.repeat)
    times = {name: min(values) for name, values in rounds.items()}
    floor = times['python -c "import numpy"']
    print(f"best of {args.repeat} interleaved rounds of fresh processes; ratio to python -c 'import numpy'")
    for name, seconds in times.items():
        print(f"  {name:<46} {seconds * 1000:7.0f} ms  {seconds / floor:5.2f}x")
    for name in ("trialscore score FILE --k 1", "trialscore score FILE"):
        paired = sorted(a / b for a, b in zip(rounds[name], rounds['python -c "import numpy"'], strict=True))
        print(f"{name}: median round {paired[len(paired) // 2]:.2f}x the floor (target: at most 4x)")
    plugin = times["... and trialscore.pytest_plugin"] - times["python -c 'import pytest'"]
    print(f"the pytest plugin adds {plugin * 1000:.0f} ms to every pytest start (target: at most 30 ms)")


if __name__ == "__main__":
    main()
