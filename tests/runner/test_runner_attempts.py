"""A retried attempt gets its own seed and TRIALSCORE_ATTEMPT; the trial record keeps the trial's seed."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.seeds import attempt_seed, trial_seed
from trialscore.runner.suite import load_suite

# A seeded agent that fails transiently (exit 75) unless its seed is divisible by 3.  With the
# trial's seed on every retry it would fail identically each time; with a seed per attempt it
# gets through.  Every call is logged.
AGENT = """
import json, os, sys
seed, attempt = int(os.environ["TRIALSCORE_SEED"]), int(os.environ["TRIALSCORE_ATTEMPT"])
with open(sys.argv[1], "a") as log:
    case, trial = os.environ["TRIALSCORE_CASE_ID"], int(os.environ["TRIALSCORE_TRIAL"])
    log.write(json.dumps({"case": case, "trial": trial, "seed": seed, "attempt": attempt}) + "\\n")
if seed % 3:
    sys.exit(75)
print("ok")
"""


@pytest.mark.slow
def test_each_retry_of_a_command_target_gets_a_seed_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    log = tmp_path / "calls.jsonl"
    document = {
        "name": "retries",
        "targets": [{"name": "a", "type": "command", "argv": [sys.executable, "agent.py", str(log)]}],
        "graders": [{"type": "exact", "value": "ok"}],
        "cases": [{"id": f"c{i}", "input": "x"} for i in range(4)],
        "execution": {"trials": {"count": 5}, "retries": 12, "backoff_s": 0, "seed": 5, "concurrency": 4},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document))
    report = execute_suite(
        load_suite(path), RunOptions(store=tmp_path / "s.sqlite", progress=False), Console(file=io.StringIO())
    )
    # 12 retries at a 1/3 chance each: a trial errors with probability (2/3)^13 < 0.5%; seeded, it does not
    assert all(record.verdict == "pass" for record in report.records), [r.error for r in report.records]
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    retried = 0
    for record in report.records:
        mine = sorted(
            (c for c in calls if (c["case"], c["trial"]) == (record.case_id, record.trial)),
            key=lambda c: c["attempt"],
        )
        assert [c["attempt"] for c in mine] == list(range(len(mine)))
        assert record.seed == trial_seed(5, record.case_id, record.trial) == mine[0]["seed"]
        assert [c["seed"] for c in mine] == [attempt_seed(record.seed, c["attempt"]) for c in mine]
        assert len({c["seed"] for c in mine}) == len(mine)  # no two attempts share a seed
        retried += len(mine) > 1
    assert retried > 0  # some trials needed retries (their trial seed is not divisible by 3)


def test_a_python_target_taking_attempt_is_given_it(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(
        textwrap.dedent(
            """
            from trialscore.errors import TransientTargetError

            def answer(case, seed, attempt=0):
                if attempt < 2:
                    raise TransientTargetError(f"busy (attempt {attempt}, seed {seed})")
                return f"{attempt}"
            """
        )
    )
    document = {
        "name": "py",
        "targets": [{"name": "p", "type": "python", "callable": "agent.py:answer"}],
        "graders": [{"type": "exact", "value": "2"}],
        "cases": [{"id": "c", "input": "x"}],
        "execution": {"trials": {"count": 3}, "retries": 3, "backoff_s": 0},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document))
    report = execute_suite(
        load_suite(path), RunOptions(store=tmp_path / "s.sqlite", progress=False), Console(file=io.StringIO())
    )
    assert [record.output for record in report.records] == ["2", "2", "2"]
    assert all(record.passed for record in report.records)
