"""docs/extending.md's recipes run as written: each recipe's files are written to a folder, its entry
points installed as a real distribution's metadata (a ``.dist-info`` folder on ``PYTHONPATH``, found by
``importlib.metadata`` as an installed package's), and its commands run in processes of their own: a
``python`` line in a fresh interpreter, a ``trialscore`` line as ``python -m trialscore`` forked from one
Python that imported trialscore's command line once (tests/forks.py; tests/test_cli.py starts the installed
script afresh), the plugins loaded by each command as by one started afresh."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forks import Forks, ForkServers

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DOC = (ROOT / "docs" / "extending.md").read_text()


def sections() -> dict[str, str]:
    """Each recipe's text by its heading."""
    parts = re.split(r"^## ", DOC, flags=re.M)[1:]
    return {part.split("\n", 1)[0].strip(): part for part in parts}


def blocks(section: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block of a recipe."""
    return re.findall(r"```(\w+)\n(.*?)```", section, re.S)


def materialise(section: str, folder: Path) -> list[str]:
    """Write the recipe's named files and its entry points; return its command lines."""
    commands: list[str] = []
    entry_points: list[str] = []
    for language, body in blocks(section):
        first, _, rest = body.partition("\n")
        if language == "sh":
            commands += [line.strip() for line in body.splitlines() if line.strip()]
        elif language == "toml":
            entry_points.append(rest)
        elif first.startswith("# ") and "." in first:
            name = first[2:].strip()
            (folder / name).write_text(body if language == "python" else rest)
    if entry_points:
        dist = folder / "recipe-0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: recipe\nVersion: 0.1\n")
        # pyproject's [project.entry-points."group"] table, as the built distribution's entry_points.txt
        text = "\n".join(entry_points).replace("[project.entry-points.", "[").replace('"', "")
        (dist / "entry_points.txt").write_text(text)
    return commands


@pytest.fixture(scope="module")
def trialscore(fork_servers: ForkServers) -> Forks:
    """Runs ``trialscore`` lines, each a process of its own (tests/forks.py), within 120 s.  The server
    imports the command line alone, never the runner (whose graders and targets load the plugins)."""
    return fork_servers.get(120)


def run(trialscore: Forks, command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """The recipe's line ``command`` run in ``folder``, as installed: the folder on ``PYTHONPATH``."""
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(folder),
        "COLUMNS": "120",
    }
    argv = command.split()
    if argv[0] == "trialscore":  # the environment and the import path a fresh start would have
        prelude = f"import os, sys; os.environ.update({env!r}); sys.path.insert(1, {str(folder)!r})"
        done = trialscore.run(*argv[1:], cwd=folder, prelude=prelude)
        return subprocess.CompletedProcess(argv, done.code, done.stdout, done.stderr)
    if argv[0] == "python":
        argv[0] = sys.executable
    return subprocess.run(
        argv, cwd=folder, env={**os.environ, **env}, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["A metric", "A grader type", "A target type", "A log format"])
def test_every_recipe_runs_as_written(trialscore: Forks, tmp_path: Path, recipe: str) -> None:
    commands = materialise(sections()[recipe], tmp_path)
    assert commands, recipe
    outputs = []
    for command in commands:
        done = run(trialscore, command, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr
        outputs.append(done.stdout)
    if recipe == "A metric":
        assert outputs[0].strip() == "0.3333"
    if recipe == "A grader type":  # the plugin's grader judged the cases: loud passes, quiet fails
        cases = (tmp_path / "loud-out" / "cases.jsonl").read_text()
        assert '"eval_id": "loud"' in cases and '"verdict": "pass"' in cases and '"verdict": "fail"' in cases
    if recipe == "A target type":
        trials = (tmp_path / "mirror-out" / "trials.jsonl").read_text()
        assert trials.count('"verdict":"pass"') == 6
    if recipe == "A log format":
        assert "pass@2" in outputs[0] and "rows: 4 read, 4 used" in outputs[0]


@pytest.mark.slow
def test_a_plugin_that_cannot_be_imported_is_one_line_naming_it(trialscore: Forks, tmp_path: Path) -> None:
    materialise(sections()["A grader type"], tmp_path)
    (tmp_path / "shout_grader.py").write_text("raise RuntimeError('broken on purpose')\n")
    done = run(trialscore, "trialscore validate suite.yaml", tmp_path)
    assert done.returncode == 2, done.stderr
    assert (
        "plugin 'shout' (shout_grader, entry point group 'trialscore.graders') cannot be loaded"
        in done.stderr
    )
    assert "RuntimeError: broken on purpose" in done.stderr and "Traceback" not in done.stderr
