"""Shared by the distributed-run tests: a suite of a deterministic python agent that logs its calls
(and on request kills or stops its own worker process), and ways to read what a run did."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import yaml

from trialscore.results.records import TrialRecord
from trialscore.runner.distributed.options import Distribution
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.run_report import RunReport
from trialscore.runner.seeds import trial_seed
from trialscore.runner.suite import load_suite

SEED = 11

# A deterministic agent (its answer depends on the seed only) that logs every call, and on request
# kills or stops its own worker process the first time (or every time) a case is run.
AGENT = """
import os, signal, time

HERE = os.path.dirname(os.path.abspath(__file__))


def _log(name, text):
    with open(os.path.join(HERE, name), "a") as log:
        log.write(text + "\\n")


def _first(marker):
    try:
        os.close(os.open(os.path.join(HERE, marker), os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def answer(case, seed):
    start = time.time()
    _log("started.log", f"{os.getpid()} {case.id} {seed}")
    mode = case.metadata.get("mode")
    if mode == "die-once" and _first("died"):
        _log("died.log", f"{os.getpid()} {case.id} {seed}")  # which call died (two may start case-2 at once)
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "die-always":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang-once" and _first("hung"):
        _log("hung.log", f"{os.getpid()} {case.id} {seed}")
        os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(case.metadata.get("sleep", 0.01))
    _log("spans.log", f"{start} {time.time()}")
    return {"output": "yes" if seed % 3 else "no", "cost_usd": case.metadata.get("cost", 0.01)}
"""


def make_suite(
    tmp_path: Path,
    cases: int = 6,
    trials: int = 4,
    concurrency: int = 4,
    metadata: dict[int, dict[str, Any]] | None = None,
    target: dict[str, Any] | None = None,
    execution: dict[str, Any] | None = None,
) -> Path:
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT))
    metadata = metadata or {}
    document = {
        "name": "spread",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer", **(target or {})}],
        "cases": [
            {"id": f"case-{i}", "input": "q", "expected": "yes", "metadata": metadata.get(i, {})}
            for i in range(cases)
        ],
        "graders": [{"type": "exact"}],
        "execution": {
            "trials": {"count": trials},
            "concurrency": concurrency,
            "seed": SEED,
            **(execution or {}),
        },
    }
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    return suite


def run(suite: Path, store: Path, distributed: Distribution | None) -> RunReport:
    return execute_suite(load_suite(suite), RunOptions(store=store, progress=False, distributed=distributed))


def outcomes(records: tuple[TrialRecord, ...]) -> list[dict[str, Any]]:
    """Every field of the records but those that depend on time and on the run id, in trial order."""
    drop = {"started_at", "latency_s", "run_id"}
    rows = [{k: v for k, v in r.model_dump(mode="json").items() if k not in drop} for r in records]
    return sorted(rows, key=lambda row: (row["target"], row["case_id"], row["trial"]))


def stored(store: Path) -> list[tuple[str, int]]:
    """(case, trial) of every trial committed to ``store`` so far (none before the table exists)."""
    if not store.exists():
        return []
    with sqlite3.connect(store) as db:
        try:
            return db.execute("SELECT case_id, trial FROM trials").fetchall()
        except sqlite3.OperationalError:
            return []


def calls(tmp_path: Path, log: str = "started.log") -> list[tuple[int, str, int]]:
    """(pid, case, trial) of every call of the agent, in order (``died.log`` / ``hung.log``: the call that
    killed or stopped its worker)."""
    seeds = {(f"case-{i}", trial_seed(SEED, f"case-{i}", t)): t for i in range(50) for t in range(50)}
    return [
        (int(pid), case, seeds[(case, int(seed))])
        for pid, case, seed in (line.split() for line in (tmp_path / log).read_text().splitlines())
    ]
