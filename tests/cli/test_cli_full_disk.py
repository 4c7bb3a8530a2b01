"""Output files over a full disk: the report, the counts table, the JUnit XML and the step summary are
written whole or not at all, with one line and exit status 73.

The disk is a real tmpfs filled to the last byte, in a mount namespace of the commands' own; in this
process, a file size limit (a real EFBIG part way through the write).
"""

from __future__ import annotations

import resource
import signal
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.media import can_mount, run_commands
from tests.report.conftest import write_trials
from trialscore.cli import app
from trialscore.cli._app import EXIT_CANT_CREATE

runner = CliRunner()

PREVIOUS = {
    "report.html": "<html>the previous report</html>\n",
    "junit.xml": "<testsuites name='previous'/>\n",
    "summary.md": "# an earlier step's summary\n\n",
    "counts.parquet": "an earlier counts table\n",
}


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def error_line(output: str) -> str:
    """The one ``error:`` line of a failed command (and no traceback)."""
    assert "Traceback" not in output, output
    found = [line for line in output.splitlines() if line.startswith("error: ")]
    assert len(found) == 1, output
    return found[0]


@pytest.fixture(scope="module")
def trials(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_trials(tmp_path_factory.mktemp("trials") / "trials.jsonl", 40, 5, seed=3)


@pytest.mark.slow
def test_report_junit_and_step_summary_over_a_full_tmpfs(tmp_path: Path, trials: Path) -> None:
    if not can_mount():
        pytest.skip("cannot mount a tmpfs here (see the file-size-limit test below)")
    disk, store, out = tmp_path / "disk", tmp_path / "store.sqlite", tmp_path / "out"
    disk.mkdir()
    setup = f"mount -t tmpfs -o size=256k tmpfs {disk}\n"
    setup += "".join(f"printf '%s' {_quote(text)} > {disk}/{name}\n" for name, text in PREVIOUS.items())
    setup += f"dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null || true\n"
    setup += f"if printf x > {disk}/probe 2>/dev/null; then echo 'the disk is not full' >&2; exit 99; fi\n"
    setup += f"rm {disk}/probe\n"
    setup += f"export GITHUB_STEP_SUMMARY={disk}/summary.md"  # every command appends to the full disk's
    demo = ["run", "--demo", "--store", str(store), "--no-progress", "--trials", "2"]
    commands = {
        "report": ["report", str(trials), "--out", str(disk / "report.html")],
        "counts": ["reduce", str(trials), "--out", str(disk / "counts.parquet")],
        "junit": [*demo, "--out", str(out / "a"), "--junit", str(disk / "junit.xml")],
        "score summary": ["score", str(trials), "-f", "json"],
        "run summary": [*demo, "--out", str(out / "b")],
    }
    after = "".join(f"cat {disk}/{name}; echo '@@'\n" for name in PREVIOUS) + f"ls -A {disk}"
    results = run_commands(commands, setup, namespace=True, after=after)
    for name in commands:
        status, text = results[name]
        assert status == EXIT_CANT_CREATE, (name, text)
        assert error_line(text).endswith("No space left on device"), text
    assert "report.html': cannot write the report:" in error_line(results["report"][1])
    assert "junit.xml': cannot write the JUnit XML (--junit):" in error_line(results["junit"][1])
    assert "counts.parquet': cannot write the counts table:" in error_line(results["counts"][1])
    for name in ("score summary", "run summary"):
        assert "cannot write the step summary (GITHUB_STEP_SUMMARY)" in error_line(results[name][1])
    *contents, listing = results["after"][1].split("@@\n")
    assert contents == list(PREVIOUS.values())  # each file holds what it held: not cut, not emptied
    assert sorted(listing.split()) == sorted([*PREVIOUS, "filler"])  # and no temporary file is left
    for folder in ("a", "b"):  # the runs completed: their results are whole on the writable disk
        assert len((out / folder / "trials.jsonl").read_text().splitlines()) == 26


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "name", "what", "limit"),
    [
        ("report", "report.html", "the report", 16 * 1024),  # the report is far longer
        ("reduce", "counts.parquet", "the counts table", 1024),  # written by DuckDB's own threads
    ],
)
def test_an_output_cut_by_the_file_size_limit_leaves_the_previous_one(
    tmp_path: Path, trials: Path, command: str, name: str, what: str, limit: int
) -> None:
    target = tmp_path / name
    target.write_text(PREVIOUS[name])
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        result = runner.invoke(app, [command, str(trials), "--out", str(target)])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert result.exit_code == EXIT_CANT_CREATE, result.output
    assert error_line(result.output) == f"error: '{target}': cannot write {what}: File too large"
    assert target.read_text() == PREVIOUS[name]
    assert [path.name for path in tmp_path.iterdir()] == [name]
    result = runner.invoke(app, [command, str(trials), "--out", str(target)])
    assert result.exit_code == 0 and target.stat().st_size > limit
