"""The command lines of README.md and docs/cli.md run as written, in a workspace holding the files they name.

Every ``sh`` block of README.md and docs/cli.md is extracted line by line; each command runs
as a shell would run it (its words split, ``runs/*.jsonl`` globbed) inside a temporary folder
with ``suite.yaml`` (the bundled demo suite), two more runs of it (``base.jsonl``,
``candidate.jsonl``, ``week1.jsonl``, ``week2.jsonl``, ``runs/``) and the folders the
documents' own ``run`` lines write.  The only substitution is the placeholder ``RUN_ID``,
replaced by the id of the latest run.  Every line must exit 0.

The lines run in process, through Typer's runner (tests/test_cli.py runs the installed script
and ``python -m trialscore`` as subprocesses).
"""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
import traceback
from pathlib import Path

import pytest
from click.testing import Result

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.examples import demo_suite_path

ROOT = Path(__file__).resolve().parents[2]


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


def _trialscore(command: str, cwd: Path) -> Result:
    """The ``trialscore`` line ``command`` run in ``cwd`` as a shell would (words split, globs
    expanded there, sorted; a glob matching nothing stays as written), 120 columns wide."""
    words = shlex.split(command)
    assert words[0] == "trialscore", command
    args = [match for word in words[1:] for match in sorted(glob.glob(word, root_dir=cwd)) or [word]]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        return CliRunner().invoke(app, args, env={"COLUMNS": "120"})


def _said(command: str, result: Result) -> str:
    """What a failed line printed, and the exception it raised, for the failure message."""
    raised = result.exception
    trace = (
        ""
        if raised is None or isinstance(raised, SystemExit)
        else "".join(traceback.format_exception(raised))
    )
    return f"{command}\n{result.output[-4000:]}\n{trace}"


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
        command = f"trialscore run {name}.yaml --out out-{name}"
        result = _trialscore(command, root)
        assert result.exit_code == 0, _said(command, result)
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


@pytest.mark.slow  # about 30 commands, runs included: in CI, not in the quick loop
@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_documented_command_runs_as_written(workspace: Path, document: str) -> None:
    run_id = None
    for command in commands(document):
        if "RUN_ID" in command:
            assert run_id is not None, f"{document} resumes a run before it starts one"
            command = command.replace("RUN_ID", run_id)
        result = _trialscore(command, workspace)
        assert result.exit_code == 0, _said(command, result)
        assert "Traceback" not in result.stderr, _said(command, result)
        out = re.search(r"--out (\S+)", command)
        if command.startswith("trialscore run ") and out:
            run_id = json.loads((workspace / out.group(1) / "summary.json").read_text())["run_id"]
