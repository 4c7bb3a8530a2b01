"""Files built to hurt: each is one line naming the file (and member, line, field), exit code 2, in
bounded memory.  Large files are made here in tmp_path, never committed.

Each command runs in a process of its own, ``python -m trialscore ARGS`` forked from one Python that
imported trialscore once for the module's tests (the import is most of a refusal's cost), and its peak
memory is that process's ``ru_maxrss`` (``os.wait4``) plus the shared libraries it was forked with (see
``_FORKS``): no less than the command takes started afresh, and earlier tests of this worker do not
count.  The bound is the issue's: 500 MB for any input.  A hang fails as "hung" after a timeout; the
time taken is not asserted (speed lives in benchmarks/).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import select
import signal
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from _zip_bomb import repeated_member, small_member, zip_with
from typer.testing import CliRunner

from trialscore.cli import app
from trialscore.results.formats import FORMATS

MEMORY_MB = 500
HUNG_SECONDS = 300

#: Reads commands on stdin, one a line: [arguments, stdout file, stderr file]; runs each as
#: ``python -m trialscore ARGUMENTS`` in a fork of itself (stdin empty), and answers each with a line:
#: [exit code, peak memory in KiB]: the fork's ``ru_maxrss`` plus this process's file-backed resident
#: memory (its shared libraries), which a fork does not count until it touches it but a process started
#: afresh does: so no less than the command would take started afresh.
_FORKS = """
import gc, json, os, runpy, sys
import trialscore.cli, trialscore.cli.report, trialscore.cli.score, trialscore.results.readers
gc.freeze()  # what was imported stays shared with each fork, not copied as a collection walks it
with open("/proc/self/status") as status:
    mapped = next(int(line.split()[1]) for line in status if line.startswith("RssFile:"))
for line in sys.stdin:
    args, out, err = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        for fd, name in ((1, out), (2, err)):
            os.dup2(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        sys.argv = ["trialscore", *args]
        runpy.run_module("trialscore", run_name="__main__", alter_sys=True)
        sys.exit()
    _, status, usage = os.wait4(pid, 0)
    print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss + mapped]), flush=True)
"""


class _Trialscore:
    """Runs ``trialscore`` commands through a :data:`_FORKS` process (started again after a hang)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process: subprocess.Popen[str] | None = None

    def run(self, *args: str) -> tuple[int, str, float]:
        """``trialscore ARGS`` in a process of its own: exit code, stderr, peak resident memory in MB."""
        if self.process is None:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _FORKS],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,  # a hung command is ended with it
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        err = self.folder / "stderr"
        request = [list(args), str(self.folder / "stdout"), str(err)]
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        if not select.select([self.process.stdout], [], [], HUNG_SECONDS)[0]:
            self.close(kill=True)
            pytest.fail(f"hung: trialscore {' '.join(args)} ran over {HUNG_SECONDS} s")
        code, peak_kb = json.loads(self.process.stdout.readline())
        return code, err.read_text(), peak_kb / 1024

    def close(self, kill: bool = False) -> None:
        """End the process (and, with ``kill``, the command it runs)."""
        if self.process is not None:
            if kill:
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate(timeout=60)
            self.process = None


@pytest.fixture(scope="module")
def trialscore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Trialscore]:
    runner = _Trialscore(tmp_path_factory.mktemp("commands"))
    yield runner
    runner.close()


def _refused(trialscore: _Trialscore, *args: str, message: str) -> None:
    """The command exits 2 with one line holding ``message``, under the memory bound."""
    code, stderr, peak = trialscore.run(*args)
    assert code == 2, stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert message in stderr, stderr
    assert peak < MEMORY_MB, f"{peak:.0f} MB"


NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.slow
def test_json_nested_100000_deep_is_one_line_in_score_and_report(
    trialscore: _Trialscore, tmp_path: Path
) -> None:
    document = tmp_path / "deep.json"
    document.write_text(f'{{"case_id": "a", "passed": true, "output": {NESTED}}}\n')
    _refused(
        trialscore, "score", str(document), message=f"{document} line 1: not valid JSON: nested too deeply"
    )
    records = tmp_path / "deep.jsonl"
    records.write_text(
        '{"case_id": "a", "trial": 0, "passed": true, "verdict": "pass", "output": ' + NESTED + "}\n"
    )
    message = f"{records} line 1: not valid JSON: nested too deeply"
    _refused(trialscore, "score", str(records), message=message)
    _refused(trialscore, "report", str(records), "--out", str(tmp_path / "r.html"), message=message)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_named_on_a_nested_document_says_so_in_one_line(tmp_path: Path, name: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(NESTED)
    result = CliRunner().invoke(app, ["score", str(path), "--from", name])
    assert result.exit_code == 2, (result.exception, result.output)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert str(path) in result.stderr


def _npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


@pytest.mark.slow
def test_npy_and_npz_headers_claiming_a_trillion_values_are_refused(
    trialscore: _Trialscore, tmp_path: Path
) -> None:
    header = _npy_header((10**6, 10**6))
    npy = tmp_path / "huge.npy"
    npy.write_bytes(header + bytes(64))
    _refused(
        trialscore,
        "score",
        str(npy),
        message=f"{npy}: its header declares shape (1000000, 1000000) of float64",
    )
    npz = tmp_path / "huge.npz"
    with zipfile.ZipFile(npz, "w") as archive:
        archive.writestr("model_a.npy", header + bytes(64))
    _refused(
        trialscore, "score", str(npz), message=f"{npz}:model_a: its header declares shape (1000000, 1000000)"
    )


@pytest.mark.slow
def test_an_npz_bomb_is_refused_before_it_inflates(trialscore: _Trialscore, tmp_path: Path) -> None:
    header = _npy_header((2**15, 2**15 + 2**10), "|u1")
    member = repeated_member("R.npy", header, bytes(2**24), 2**30 // 2**24 + 2, b"")
    bomb = zip_with(tmp_path / "bomb.npz", [member])
    assert bomb.stat().st_size < 10 * 2**20
    _refused(trialscore, "score", str(bomb), message=f"{bomb} member 'R.npy': inflates to 1056 MiB")


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="the inspect extra (inspect_ai) is not installed"
)  # not imported here, where it is not used (about a second)
def test_an_inspect_eval_zip_bomb_is_refused_naming_the_member(
    trialscore: _Trialscore, tmp_path: Path
) -> None:
    start = small_member("_journal/start.json", json.dumps({"version": 2}).encode())
    head = b'{"version": 2, "status": "success", "eval": {"task": "'
    header = repeated_member("header.json", head, b"a" * 2**24, 2**30 // 2**24, b'"}}')
    bomb = zip_with(tmp_path / "bomb.eval", [start, header])
    assert bomb.stat().st_size < 10 * 2**20
    _refused(trialscore, "score", str(bomb), message=f"{bomb} member 'header.json': inflates to 1024 MiB")


def _one_gib_line(path: Path, head: str, tail: str) -> None:
    """Write ``head``, a GiB of ``x`` and ``tail`` (then a newline) to ``path``."""
    with path.open("wb") as handle:
        handle.write(head.encode())
        block = b"x" * 2**20
        for _ in range(1024):
            handle.write(block)
        handle.write(tail.encode() + b"\n")


def _new_ends(path: Path, head: str, tail: str) -> None:
    """Give a file :func:`_one_gib_line` wrote (with a head as long as ``head``) a new head and tail,
    keeping its GiB of ``x`` (not written again)."""
    with path.open("r+b") as handle:
        handle.write(head.encode())
        handle.seek(len(head) + 2**30)
        handle.write(tail.encode() + b"\n")
        handle.truncate()
        for at in (len(head), len(head) + 2**30 - 1):  # the GiB of x is still where it was
            handle.seek(at)
            assert handle.read(1) == b"x"


@pytest.mark.slow
def test_a_line_of_one_gib_is_refused_without_holding_it(trialscore: _Trialscore, tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    first = '{"case_id": "a", "trial": 0, "passed": true, "verdict": "pass"}\n'
    head = first + '{"case_id": "b", "trial": 0, "passed": true, "verdict": "pass", "output": "'
    _one_gib_line(path, head, '"}')
    message = f"{path} line 2: a line over 80 MiB is longer than trialscore reads"
    _refused(trialscore, "score", str(path), message=message)
    _refused(trialscore, "report", str(path), "--out", str(tmp_path / "r.html"), message=message)
    # a tau-bench results array whose one element is 1 GiB: the same GiB, its head white space then the array
    array = path.rename(tmp_path / "results.json")
    _new_ends(array, '[{"task_id": 1, "reward": 1.0, "info": "'.rjust(len(head)), '"}]')
    _refused(trialscore, "score", str(array), message=f"{array}: element 1: an element over 80 MiB")


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("fifo", "a named pipe (FIFO)"),
        ("/dev/zero", "a character device"),
        ("/dev/urandom", "a character device"),
    ],
)
@pytest.mark.slow
def test_a_fifo_or_a_device_is_named_for_what_it_is(
    trialscore: _Trialscore, tmp_path: Path, source: str, what: str
) -> None:
    path = Path(source)
    if source == "fifo":
        path = tmp_path / "log.jsonl"
        os.mkfifo(path)
    for extra in ([], ["--from", "jsonl"]):
        _refused(
            trialscore,
            "score",
            str(path),
            *extra,
            message=f"{path}: is {what}, not a file or folder of trials",
        )
