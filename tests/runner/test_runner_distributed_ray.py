"""The Ray backend on a local Ray (2 CPUs): the same output files as one process, and a Ray worker
process killed mid-run (a lost node, in small) loses and duplicates nothing.

One test, on the test process's shared local Ray (the ``local_ray`` fixture of tests/_ray.py:
starting Ray takes seconds), which the run joins and leaves running.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _distributed import calls, make_suite, run, stored

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.runner.distributed.options import Distribution


def trials_file(out: Path) -> list[dict[str, Any]]:
    drop = {"started_at", "latency_s", "run_id"}
    return [
        {key: value for key, value in json.loads(line).items() if key not in drop}
        for line in (out / "trials.jsonl").read_text().splitlines()
    ]


@pytest.mark.slow
def test_a_local_ray_run_equals_the_single_process_run_and_survives_a_killed_actor(
    tmp_path: Path, local_ray: ModuleType
) -> None:
    (tmp_path / "same").mkdir()
    (tmp_path / "kill").mkdir()
    suite = make_suite(tmp_path / "same", cases=6, trials=4, metadata={i: {"sleep": 0.05} for i in range(6)})
    runner = CliRunner()

    def cli(out: str, *extra: str) -> None:
        args = ["run", str(suite), "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / out)]
        result = runner.invoke(app, [*args, "--no-progress", *extra])
        assert result.exit_code == 0, result.output

    cli("single")
    cli("ray", "--backend", "ray", "--workers", "2")
    assert local_ray.is_initialized()  # the run joined this Ray and left it running
    assert trials_file(tmp_path / "ray") == trials_file(tmp_path / "single")
    assert (tmp_path / "ray" / "cases.jsonl").read_text() == (tmp_path / "single" / "cases.jsonl").read_text()
    ray_pids = {pid for pid, _, _ in calls(tmp_path / "same")} - {os.getpid()}
    assert len(ray_pids) == 2  # both actors ran trials

    killing = make_suite(tmp_path / "kill", cases=6, trials=4, metadata={3: {"mode": "die-once"}})
    report = run(killing, tmp_path / "k.sqlite", Distribution("ray", 2))
    assert report.completed and len(report.records) == 24
    keys = stored(tmp_path / "k.sqlite")
    assert len(keys) == len(set(keys)) == 24  # 0 lost, 0 duplicated
    assert all(record.verdict != "error" for record in report.records)
    ran = calls(tmp_path / "kill")
    ((dead, _, trial),) = calls(tmp_path / "kill", "died.log")  # two actors may start case-3 at once
    death = ran.index((dead, "case-3", trial))
    # ... re-run elsewhere, and the dead actor ran nothing once its trial was re-run (a call that
    # another thread of that actor logged between the death's log line and the kill is not a sign)
    rerun = next(i for i in range(death + 1, len(ran)) if ran[i][1:] == ("case-3", trial))
    assert ran[rerun][0] != dead
    assert dead not in {pid for pid, _, _ in ran[rerun:]}
