"""The command lines of README.md and docs/cli.md run as written, in a workspace holding the files they name.

Every ``sh`` block of README.md and docs/cli.md is extracted line by line; each command runs
in a shell (so ``runs/*.jsonl`` globs) inside a temporary folder with ``suite.yaml`` (the
bundled demo suite), two more runs of it (``base.jsonl``, ``candidate.jsonl``,
``week1.jsonl``, ``week2.jsonl``, ``runs/``) and the folders the documents' own ``run``
lines write.  The only substitution is the placeholder ``RUN_ID``, replaced by the id of the
latest run.  Every line must exit 0.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trialscore.examples import demo_suite_path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


DOCUMENTS = ("README.md", "docs/cli.md")


def commands(document: str) -> list[str]:
    """The ``trialscore`` command lines of the document's ``sh`` blocks, comments removed.

    (``make demo`` and ``make test``, the set-up lines, are what CI itself runs.)
    """
    text = (ROOT / document).read_text()
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        lines += [line.split("#", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line.startswith("trialscore ")]


def _sh(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "120"}
    return subprocess.run(
        command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _retarget(source: Path, target: str, destination: Path) -> None:
    lines = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        record["target"] = target
        lines.append(json.dumps(record))
    destination.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readme")
    shutil.copy(demo_suite_path(), root / "suite.yaml")
    for seed, name in ((11, "base"), (12, "candidate")):
        suite = (root / "suite.yaml").read_text().replace("seed: 2024", f"seed: {seed}")
        (root / f"{name}.yaml").write_text(suite)
        result = _sh(f"trialscore run {name}.yaml --out out-{name}", root)
        assert result.returncode == 0, result.stderr
        shutil.copy(root / f"out-{name}" / "trials.jsonl", root / f"{name}.jsonl")
    shutil.copy(root / "base.jsonl", root / "week1.jsonl")
    shutil.copy(root / "candidate.jsonl", root / "week2.jsonl")
    (root / "runs").mkdir()
    _retarget(root / "base.jsonl", "agent-a", root / "runs" / "a.jsonl")
    _retarget(root / "candidate.jsonl", "agent-b", root / "runs" / "b.jsonl")
    return root


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_documents_show_commands(document: str) -> None:
    lines = commands(document)
    assert len(lines) >= 8


@pytest.mark.slow  # about 30 fresh processes, runs included: in CI, not in the quick loop
@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_documented_command_runs_as_written(workspace: Path, document: str) -> None:
    run_id = None
    for command in commands(document):
        if "RUN_ID" in command:
            assert run_id is not None, f"{document} resumes a run before it starts one"
            command = command.replace("RUN_ID", run_id)
        result = _sh(command, workspace)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr, command
        out = re.search(r"--out (\S+)", command)
        if command.startswith("trialscore run ") and out:
            run_id = json.loads((workspace / out.group(1) / "summary.json").read_text())["run_id"]
