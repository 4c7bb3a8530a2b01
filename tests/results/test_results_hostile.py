"""Files built to hurt: each is one line naming the file (and member, line, field), exit code 2, in
bounded memory.  Large files are made here in tmp_path, never committed.

Each command runs in a process of its own, forked from one Python that imported trialscore once for
the module's tests (tests/forks.py: the import is most of a refusal's cost), and its peak memory is
that process's, counted so that it is no less than the command takes started afresh; earlier tests of
this worker do not count.  The bound is the issue's: 500 MB for any input.  A hang fails as "hung"
after a timeout; the time taken is not asserted (speed lives in benchmarks/).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from _zip_bomb import repeated_member, small_member, zip_with

from tests.cli_runner import CliRunner
from tests.forks import Forks, ForkServers
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import FORMATS
from trialscore.results.readers import read_counts

MEMORY_MB = 500
HUNG_SECONDS = 300


@pytest.fixture(scope="module")
def trialscore(fork_servers: ForkServers) -> Forks:
    """Runs each command in a process of its own (see tests/forks.py)."""
    return fork_servers.get(HUNG_SECONDS)


def _refused(trialscore: Forks, *args: str, message: str) -> None:
    """The command exits 2 with one line holding ``message``, under the memory bound."""
    done = trialscore.run(*args)
    assert done.code == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert message in done.stderr, done.stderr
    assert done.peak_mb < MEMORY_MB, f"{done.peak_mb:.0f} MB"


NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.slow
def test_json_nested_100000_deep_is_one_line_in_score_and_report(trialscore: Forks, tmp_path: Path) -> None:
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
    trialscore: Forks, tmp_path: Path
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
def test_an_npz_bomb_is_refused_before_it_inflates(trialscore: Forks, tmp_path: Path) -> None:
    header = _npy_header((2**15, 2**15 + 2**10), "|u1")
    member = repeated_member("R.npy", header, bytes(2**24), 2**30 // 2**24 + 2, b"")
    bomb = zip_with(tmp_path / "bomb.npz", [member])
    assert bomb.stat().st_size < 10 * 2**20
    _refused(trialscore, "score", str(bomb), message=f"{bomb} member 'R.npy': inflates to 1056 MiB")


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="the inspect extra (inspect_ai) is not installed"
)  # not imported here, where it is not used (about a second)
def test_an_inspect_eval_zip_bomb_is_refused_naming_the_member(trialscore: Forks, tmp_path: Path) -> None:
    start = small_member("_journal/start.json", json.dumps({"version": 2}).encode())
    head = b'{"version": 2, "status": "success", "eval": {"task": "'
    header = repeated_member("header.json", head, b"a" * 2**24, 2**30 // 2**24, b'"}}')
    bomb = zip_with(tmp_path / "bomb.eval", [start, header])
    assert bomb.stat().st_size < 10 * 2**20
    _refused(trialscore, "score", str(bomb), message=f"{bomb} member 'header.json': inflates to 1024 MiB")


@pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="the inspect extra (inspect_ai) is not installed"
)
def test_an_inspect_eval_zip_bomb_is_refused_before_inspect_ai_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its members zipfile inflates by itself are checked before the import (about a second), in their
    order: blocked here, the import would fail as a missing extra."""
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    head = b'{"version": 2, "status": "success", "eval": {"task": "'
    header = repeated_member("header.json", head, b"a" * 2**24, 2**30 // 2**24, b'"}}')
    bomb = zip_with(tmp_path / "bomb.eval", [header])
    with pytest.raises(EvaluationError, match=r"bomb\.eval member 'header\.json': inflates to 1024 MiB"):
        read_counts([bomb], input_format="inspect")
    deep = small_member("header.json", NESTED.encode())
    bomb = repeated_member("reductions.json", b"[", b" " * 2**24, 2**30 // 2**24, b"]")
    both = zip_with(tmp_path / "both.eval", [deep, bomb])  # the first fault found is the first member's
    with pytest.raises(EvaluationError, match=r"both\.eval member 'header\.json': .*nested too deeply"):
        read_counts([both], input_format="inspect")
    fine = zip_with(tmp_path / "fine.eval", [small_member("header.json", b"{}")])
    with pytest.raises(EvaluationError, match=r"fine\.eval: reading inspect_ai logs needs the inspect extra"):
        read_counts([fine], input_format="inspect")


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
def test_a_line_of_one_gib_is_refused_without_holding_it(trialscore: Forks, tmp_path: Path) -> None:
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
    trialscore: Forks, tmp_path: Path, source: str, what: str
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
