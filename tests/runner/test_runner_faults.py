"""Faults under a run: a full disk under the store, hostile servers, programs that fork, hung calls.

Each test drives the real thing (a real full filesystem or SQLite's own SQLITE_FULL, a real HTTP
server on 127.0.0.1, real process trees) and bounds its own time, so a regression fails rather than hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import textwrap
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from tests.cli_runner import CliRunner
from tests.forks import HELPERS, RUNNER, Forks, ForkServers
from tests.processes import alive
from trialscore.cli import app
from trialscore.cli._app import EXIT_STORE_FAILED


def write_suite(tmp_path: Path, document: dict, agent: str | None = None) -> Path:
    if agent is not None:
        (tmp_path / "agent.py").write_text(textwrap.dedent(agent))
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def runs(fork_servers: ForkServers) -> Forks:
    """Runs the runner's CLI, each run a process of its own (tests/forks.py); a run that does not end
    within 90 s fails the test (no hang)."""
    return fork_servers.get(90, HELPERS + RUNNER)


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The CLI in this process (Typer's runner): exit status, stdout, stderr."""
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


# ---------------------------------------------------------------- 12: a full disk under the store


@dataclass
class SmallDisk:
    """A directory whose filesystem fills up: a real tmpfs when the test may mount one, else a
    store whose SQLite connection has a page limit (``PRAGMA max_page_count``: a real SQLITE_FULL)."""

    directory: Path
    prelude: str
    grow: Callable[[], None]
    kind: str


@contextlib.contextmanager
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    mountpoint = tmp_path / "small"
    mountpoint.mkdir()
    mounted = (
        shutil.which("mount") is not None
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mountpoint)], capture_output=True
        ).returncode
        == 0
    )
    if mounted:

        def grow() -> None:
            subprocess.run(["mount", "-o", "remount,size=64m", str(mountpoint)], check=True)

        try:
            yield SmallDisk(mountpoint, "", grow, "tmpfs")
        finally:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)
        return
    warnings.warn("cannot mount a tmpfs here: the full disk is SQLite's max_page_count", stacklevel=1)
    prelude = textwrap.dedent(
        """
        from trialscore.runner import store as _store
        _init = _store.TrialStore.__init__
        def _small(self, path):
            _init(self, path)
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            self._db.execute(f"PRAGMA max_page_count={pages + 40}")
        _store.TrialStore.__init__ = _small
        """
    )
    yield SmallDisk(mountpoint, prelude, lambda: None, "max_page_count")


BIG_AGENT = """
import random
def answer(case, seed):
    rng = random.Random(seed)
    return "yes " + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8000))
"""


@pytest.mark.slow
def test_a_full_disk_under_the_store_stops_the_run_with_one_message_and_it_resumes(
    runs: Forks, tmp_path: Path
) -> None:
    document = {
        "name": "fills",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": f"case-{i}", "input": "q", "graders": [{"type": "contains", "value": "yes"}]}
            for i in range(10)
        ],
        "execution": {"trials": {"count": 10}, "concurrency": 4, "seed": 1},
    }
    suite = write_suite(tmp_path, document, BIG_AGENT)
    with small_disk(tmp_path) as disk:
        store = disk.directory / "store.sqlite"
        out = tmp_path / "out"
        args = ("run", str(suite), "--store", str(store), "--out", str(out), "--no-progress")
        done = runs.run(*args, prelude=disk.prelude, cwd=tmp_path)
        code, err = done.code, done.stderr
        assert code == EXIT_STORE_FAILED, (disk.kind, err)
        assert "Traceback" not in err, err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, err
        message = lines[0]
        assert message.startswith("error: store ") and str(store) in message, message
        assert "database or disk is full" in message and "cannot commit" in message, message
        assert "resume with: trialscore run" in message and "--resume" in message, message
        assert not out.exists()
        with sqlite3.connect(store) as db:
            (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
            kept = db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        assert 0 < kept < 100

        disk.grow()
        done = runs.run(*args, "--resume", run_id, cwd=tmp_path)
        assert done.code == 0, done.stderr
        with sqlite3.connect(store) as db:
            rows = db.execute("SELECT case_id, trial FROM trials").fetchall()
        assert len(rows) == len(set(rows)) == 100
        assert len((out / "trials.jsonl").read_text().splitlines()) == 100


def test_a_rollback_after_a_failed_commit_does_not_hide_the_cause(tmp_path: Path) -> None:
    from trialscore.results.records import TrialRecord
    from trialscore.runner.store import RunInfo, StoreError, TrialStore

    store = TrialStore(tmp_path / "s.sqlite")
    store.create_run(RunInfo("r", "s", None, "d"))
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count={pages + 2}")
    record = TrialRecord(case_id="c", trial=0, target="t", passed=True, verdict="pass", score=1.0)
    big = record.model_copy(update={"output": "x" * 100_000})
    with pytest.raises(StoreError, match="database or disk is full"):
        store.insert([TrialStore.row("r", big)])
    store._db.execute("PRAGMA max_page_count=1000000")
    store.insert([TrialStore.row("r", record)])  # the store is still usable
    assert store.count("r") == 1
    store.close()


# ---------------------------------------------------------------- 13: the API key never leaks

KEY = "sk-test-0123456789abcdefSECRET"


def reply(handler, status: int, body: bytes, content_type: str = "application/json", **headers: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


def completion(content: str) -> bytes:
    return json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}], "usage": {}}
    ).encode()


def echo_headers(handler, body: dict) -> None:
    """Answer by the prompt, echoing the request's headers as a careless server does."""
    prompt = body["messages"][-1]["content"]
    headers = sorted(handler.headers.items(), key=lambda item: item[0].lower() != "authorization")
    echoed = "\n".join(f"{name}: {value}" for name, value in headers)  # Authorization first: within 200 chars
    as_json = json.dumps({"error": {"message": "bad", "request_headers": dict(headers)}})
    if prompt == "400":
        reply(handler, 400, as_json.encode())
    elif prompt == "500":
        reply(handler, 500, f"upstream failed; request was:\n{echoed}".encode(), "text/plain")
    elif prompt == "text200":
        reply(handler, 200, f"<html>proxy login; you sent {echoed}</html>".encode(), "text/html")
    elif prompt == "shape200":
        reply(handler, 200, json.dumps({"echo": dict(headers)}).encode())
    else:
        reply(handler, 200, completion("fine"))


@pytest.mark.slow
@pytest.mark.timeout(90)  # a hang fails as a timeout, never a slow machine
def test_an_api_key_echoed_by_the_server_is_never_stored_or_printed(tmp_path: Path, raw_server) -> None:
    raw_server.respond = echo_headers
    document = {
        "name": "leaky",
        "targets": [
            {
                "name": "gpt",
                "type": "openai",
                "base_url": raw_server.url,
                "model": "m",
                "api_key_env": "LEAK_KEY",
            }
        ],
        "cases": [
            {"id": f"c-{prompt}", "input": prompt, "graders": [{"type": "contains", "value": "fine"}]}
            for prompt in ("400", "500", "text200", "shape200", "ok")
        ],
        "execution": {"trials": {"count": 2}, "retries": 1, "backoff_s": 0.01, "timeout_s": 20},
    }
    suite = write_suite(tmp_path, document)
    out, store = tmp_path / "out", tmp_path / "store.sqlite"
    code, stdout, stderr = invoke(
        "run", str(suite), "--store", str(store), "--out", str(out), "--no-progress", env={"LEAK_KEY": KEY}
    )
    assert code == 0, stderr
    assert all(request["authorization"] == f"Bearer {KEY}" for request in raw_server.requests)
    records = {
        (r["case_id"], r["trial"]): r
        for r in map(json.loads, (out / "trials.jsonl").read_text().splitlines())
    }
    assert len(records) == 10
    for prompt, expected in [
        ("400", "HTTP 400"),
        ("500", "HTTP 500"),
        ("text200", "not a chat completion"),
        ("shape200", "not a chat completion"),
    ]:
        error = records[(f"c-{prompt}", 0)]["error"]
        assert expected in error and "[REDACTED]" in error, error
    assert records[("c-ok", 1)]["verdict"] == "pass"
    texts = {"stdout": stdout, "stderr": stderr}
    texts.update({path.name: path.read_bytes().decode("utf-8", "replace") for path in out.iterdir()})
    texts.update({path.name: path.read_bytes().decode("latin-1") for path in tmp_path.glob("store.sqlite*")})
    for name, text in texts.items():
        assert KEY not in text and KEY[:12] not in text, f"the key leaked into {name}"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer abcdefgh12345", "Authorization: Bearer [REDACTED]"),
        ('{"authorization": "Basic dXNlcjpwYXNz"}', '{"authorization": "Basic [REDACTED]"}'),
        ("{'api-key': 'zzz111'}", "{'api-key': '[REDACTED]'}"),
        ("x-api-key=abc&y=1", "x-api-key=[REDACTED]&y=1"),
        ("proxy said bearer tok_abcdefghij", "proxy said bearer [REDACTED]"),
        ("no secrets here: 2 + 2 = 4", "no secrets here: 2 + 2 = 4"),
    ],
)
def test_redact_hides_credential_header_values(text: str, kept: str) -> None:
    from trialscore.runner.redact import redact

    assert redact(text) == kept


# ---------------------------------------------------------------- 14: programs that start children


def wait_gone(pids: list[int], seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


# The shell starts a grandchild that holds stdout: while it waits for it, or after it has exited.
FORKING = {
    "waits": "sleep 60 & echo $! >> {pids}; wait",
    "exits": "sleep 60 & echo $! >> {pids}; echo started",
}


@pytest.mark.timeout(60)  # a hang fails as a timeout, never a slow machine
@pytest.mark.parametrize("shape", sorted(FORKING))
def test_a_target_timeout_kills_the_whole_process_group(tmp_path: Path, shape: str) -> None:
    from trialscore.runner.retry import RetryPolicy, call_with_retries
    from trialscore.runner.suite import CaseSpec, CommandTargetSpec
    from trialscore.runner.targets import CommandTarget, TargetError, TrialRequest

    pids = tmp_path / "pids"
    spec = CommandTargetSpec(type="command", name="sh", argv=("sh", "-c", FORKING[shape].format(pids=pids)))
    target = CommandTarget(spec, tmp_path)
    case = CaseSpec(id="c", input="x")
    call = call_with_retries(target, TrialRequest(case, 0, 1, "x"), RetryPolicy(1.0, 0, 0.01))
    if shape == "waits":
        with pytest.raises(TargetError, match="no reply within timeout_s=1"):
            asyncio.run(call)
    else:  # the program has exited: its answer is what it wrote, the grandchild holding stdout is ended
        assert asyncio.run(call).output == "started"
    grandchildren = [int(line) for line in pids.read_text().split()]
    assert grandchildren and not wait_gone(grandchildren)


def tagged(tag: str) -> list[int]:
    """The processes whose environment carries the runner's program tag ``tag``."""
    from trialscore.runner.reaper import TAG_ENV

    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"{TAG_ENV}={tag}".encode() in environ:
                found.append(int(entry.name))
    return found


@pytest.mark.timeout(60)  # the cancelled call must end: a wait for a program nobody kills fails here
@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_a_call_cancelled_while_its_program_starts_ends_it_and_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, turns: int
) -> None:
    """Ctrl-C or SIGTERM can land while a program is being started; the call then lets the start
    finish and ends the program with everything it began (nothing is left for a later wait)."""
    from trialscore.runner import reaper
    from trialscore.runner.targets import command

    tag = f"cancel-test-{os.getpid()}-{turns}"
    monkeypatch.setattr(command, "new_tag", lambda: tag)
    pids = tmp_path / "pids"

    async def cancel_early() -> None:
        call = asyncio.ensure_future(
            command.run_program(("sh", "-c", FORKING["waits"].format(pids=pids)), "", {}, tmp_path)
        )
        for _ in range(turns):  # cancel at a different point of the start each time
            await asyncio.sleep(0)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(cancel_early())
    deadline = time.monotonic() + 10
    while tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not tagged(tag)  # the shell and its sleeping child are gone
    assert not reaper._running  # no program left registered as running


@pytest.mark.timeout(60)  # a hang fails as a timeout, never a slow machine
def test_a_command_grader_timeout_kills_its_children(tmp_path: Path) -> None:
    from trialscore.runner.graders import GraderError
    from trialscore.runner.graders.external import CommandGrader
    from trialscore.runner.suite import CaseSpec, CommandGraderSpec
    from trialscore.runner.targets import TrialRequest

    pids = tmp_path / "pids"
    spec = CommandGraderSpec(
        type="command", argv=("sh", "-c", FORKING["waits"].format(pids=pids)), timeout_s=1
    )
    case = CaseSpec(id="c", input="x")
    with pytest.raises(GraderError, match="timeout_s"):
        asyncio.run(CommandGrader(spec, tmp_path)("out", TrialRequest(case, 0, 1, "x")))
    assert not wait_gone([int(line) for line in pids.read_text().split()])


@pytest.mark.slow
def test_sigterm_stops_a_run_whose_programs_started_children(runs: Forks, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    document = {
        "name": "forks",
        "targets": [
            {"name": "sh", "type": "command", "argv": ["sh", "-c", FORKING["waits"].format(pids=pids)]}
        ],
        "cases": [
            {"id": f"c{i}", "input": "x", "graders": [{"type": "exact", "value": "x"}]} for i in range(4)
        ],
        "execution": {"trials": {"count": 2}, "concurrency": 4, "timeout_s": 120},
    }
    suite = write_suite(tmp_path, document)
    pid = runs.start("run", str(suite), "--store", str(tmp_path / "s.sqlite"), "--no-progress")
    deadline = time.monotonic() + 60
    while not pids.exists() or len(pids.read_text().split()) < 4:
        assert time.monotonic() < deadline and not runs.ended(), "the programs did not start"
        time.sleep(0.05)
    os.kill(pid, signal.SIGTERM)
    done = runs.finish(timeout=60)  # a run that does not stop fails here, as hung
    assert done.code == 130, done.stderr
    assert "Traceback" not in done.stderr and "Resume with:" in done.stderr
    assert not wait_gone([int(line) for line in pids.read_text().split()])


# ---------------------------------------------------------------- 15: a hung sync python target

HANGING_AGENT = """
import time
def answer(case, seed):
    if case.id == "hang":
        time.sleep(600)
    return "yes"
"""


@pytest.mark.slow
def test_a_hung_sync_python_call_errors_only_its_own_trials_and_the_process_exits(
    runs: Forks, tmp_path: Path
) -> None:
    document = {
        "name": "hangs",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": case, "input": "q", "expected": "yes", "graders": [{"type": "exact"}]}
            for case in ["hang", *(f"ok-{i}" for i in range(8))]
        ],
        "execution": {"trials": {"count": 3}, "concurrency": 2, "timeout_s": 1, "retries": 0},
    }
    suite = write_suite(tmp_path, document, HANGING_AGENT)
    out = tmp_path / "out"
    # 3 hung calls of 1 s each; 600 s of lingering threads would fail as hung (the 90 s of ``runs``)
    store = tmp_path / "s.sqlite"
    done = runs.run("run", str(suite), "--store", str(store), "--out", str(out), "--no-progress")
    assert done.code == 0, done.stderr
    records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    verdicts = {(r["case_id"], r["trial"]): r["verdict"] for r in records}
    assert all(verdicts[("hang", t)] == "error" for t in range(3))
    assert [v for (case, _), v in verdicts.items() if case != "hang"] == ["pass"] * 24


# ---------------------------------------------------------------- 16: unbounded reads


def endless(status: int, sent: list[int]) -> Callable:
    """A reply with ``status`` whose chunked body never ends; ``sent`` counts the bytes written."""

    def respond(handler, body: dict) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunk = b'{"choices": [' + b" " * 65_000
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            sent[0] += len(chunk)

    return respond


@pytest.mark.timeout(120)  # a hang fails as a timeout, never a slow machine
@pytest.mark.parametrize(("status", "error"), [(200, "over 8 MiB; stopped reading"), (500, "HTTP 500")])
def test_an_endless_response_body_is_capped(raw_server, status: int, error: str) -> None:
    from trialscore.runner.retry import RetryPolicy, call_with_retries
    from trialscore.runner.suite import CaseSpec, OpenAITargetSpec
    from trialscore.runner.targets import OpenAITarget, TargetError, TrialRequest

    sent = [0]
    raw_server.respond = endless(status, sent)
    spec = OpenAITargetSpec(type="openai", name="gpt", base_url=raw_server.url, model="m")
    request = TrialRequest(CaseSpec(id="c", input="x"), 0, 1, "x")

    async def call() -> None:
        target = OpenAITarget(spec, 1)
        try:
            await call_with_retries(target, request, RetryPolicy(60.0, 0, 0.01))
        finally:
            await target.aclose()

    with pytest.raises(TargetError, match=error):
        asyncio.run(call())
    assert sent[0] < 64 * 2**20  # the client stopped reading near the cap


@pytest.mark.slow
def test_trials_jsonl_with_a_30_mb_output_is_read_and_a_bad_line_is_named(tmp_path: Path) -> None:
    from trialscore.errors import EvaluationError
    from trialscore.results.readers import read_counts
    from trialscore.results.records import TrialRecord

    def line(case: str, t: int, output: str) -> str:
        record = TrialRecord(
            case_id=case, trial=t, target="a", passed=True, verdict="pass", score=1.0, output=output
        )
        return record.to_json_line()

    # the output 'é"\n' * 10_000_000 (30 M characters, about 70 MB once escaped as JSON): its record's
    # line is the line of a record whose output is a mark, the mark replaced by the escaped output (as
    # the record writes it: checked on three repeats), not 30 M characters serialised by the record
    escaped, mark = 'é\\"\\n', "@output@"
    assert line("b", 1, 'é"\n' * 3) == line("b", 1, mark).replace(mark, escaped * 3)
    lines = [
        line(case, t, mark).replace(mark, escaped * 10_000_000)
        if (case, t) == ("b", 1)
        else line(case, t, "y")
        for case in "abc"
        for t in range(3)
    ]
    path = tmp_path / "trials.jsonl"
    path.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    counts = read_counts([path], by=["target"])  # the long line is among the lines the keys are read from
    assert counts.stats.rows_read == 9
    late = tmp_path / "late.jsonl"  # and where it comes after them (DuckDB's first reading then fails)
    late.write_text("".join(line(f"z{t}", 0, "y") + "\n" for t in range(1000)) + path.read_text("utf-8"))
    assert read_counts([late], by=["target"]).stats.rows_read == 1009

    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"case_id": "d", "trial": 0, "passed": tru\n')
    with pytest.raises(EvaluationError, match=rf"{path} line 10: not valid JSON"):
        read_counts([path], by=["target"])


# ---------------------------------------------------------------- 18: edges


@pytest.mark.slow
@pytest.mark.timeout(90)  # a hang fails as a timeout, never a slow machine
def test_a_negative_seed_is_a_validation_error(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\ntargets: [{name: t, type: command, argv: [cat]}]\n"
        "cases: [{id: c, input: x, expected: x, graders: [{type: exact}]}]\n"
        "execution:\n  seed: -3\n"
    )
    store = tmp_path / "s.sqlite"
    for args in (("validate", str(suite)), ("run", str(suite), "--store", str(store))):
        code, _, err = invoke(*args)
        assert code == 2, err
        assert f"{suite}:5: execution.seed: Input should be greater than or equal to 0; got -3" in err
        assert "Traceback" not in err
    assert not store.exists()


def test_a_retry_after_http_date_is_honoured(raw_server) -> None:
    from email.utils import format_datetime

    from trialscore.runner.retry import RetryPolicy, call_with_retries
    from trialscore.runner.suite import CaseSpec, OpenAITargetSpec
    from trialscore.runner.targets import OpenAITarget, TrialRequest

    calls: list[float] = []

    def respond(handler, body: dict) -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            when = datetime.now(timezone.utc) + timedelta(seconds=4)
            error = b'{"error": {"message": "slow down"}}'
            reply(handler, 429, error, Retry_After=format_datetime(when, usegmt=True))
        else:
            reply(handler, 200, completion("done"))

    raw_server.respond = respond
    spec = OpenAITargetSpec(type="openai", name="gpt", base_url=raw_server.url, model="m")

    async def call() -> str:
        target = OpenAITarget(spec, 1)
        try:
            policy = RetryPolicy(30.0, 1, 0.01)
            return (
                await call_with_retries(target, TrialRequest(CaseSpec(id="c", input="x"), 0, 1, "x"), policy)
            ).output
        finally:
            await target.aclose()

    assert asyncio.run(call()) == "done"
    waited = calls[1] - calls[0]
    assert 2.0 <= waited < 20, waited  # the date is 3-4 s ahead (whole seconds); the backoff alone is 0.01 s


def test_output_files_are_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    import io
    import resource

    from rich.console import Console

    from trialscore.errors import OutputError
    from trialscore.runner.options import RunOptions
    from trialscore.runner.orchestrator import execute_suite
    from trialscore.runner.outputs import write_outputs
    from trialscore.runner.suite import load_suite

    document = {
        "name": "outs",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": f"case-{i}", "input": "q", "graders": [{"type": "contains", "value": "yes"}]}
            for i in range(5)
        ],
        "execution": {"trials": {"count": 4}, "seed": 3},
    }
    suite = load_suite(write_suite(tmp_path, document, BIG_AGENT))
    console = Console(file=io.StringIO())
    report = execute_suite(suite, RunOptions(store=tmp_path / "s.sqlite", progress=False), console)
    out = tmp_path / "out"
    out.mkdir()
    (out / "trials.jsonl").write_text('{"old": 1}\n')
    # A real write failure part way: the file size limit (EFBIG), as a full disk would stop the write.
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))
    try:
        with pytest.raises(OutputError, match="cannot write the run's files"):
            write_outputs(report, out)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert (out / "trials.jsonl").read_text() == '{"old": 1}\n'  # the previous file, not a cut one
    assert sorted(path.name for path in out.iterdir()) == ["trials.jsonl"]  # no temporary file left
    files = write_outputs(report, out)
    lines = files.trials.read_text().splitlines()
    assert len(lines) == 20 and all(json.loads(line)["verdict"] == "pass" for line in lines)
    assert files.trials.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------- 17: bounds on hostile suites


@pytest.mark.slow
@pytest.mark.timeout(60)  # a hang fails as a timeout, never a slow machine
def test_trial_counts_and_concurrency_have_sane_maxima(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\ntargets: [{name: t, type: command, argv: [cat]}]\n"
        "cases: [{id: c, input: x, expected: x, graders: [{type: exact}],\n"
        "         execution: {trials: {count: 100001}}}]\n"
        "execution:\n  trials: {count: 1000000000}\n  concurrency: 10000000\n"
    )
    code, _, err = invoke("validate", str(suite))
    assert code == 2 and "Traceback" not in err, err
    assert (
        f"{suite}:6: execution.trials.count: Input should be less than or equal to 100000; got 1000000000"
        in err
    )
    assert (
        f"{suite}:7: execution.concurrency: Input should be less than or equal to 10000; got 10000000" in err
    )
    assert f"{suite}:4: cases[0].execution.trials.count: Input should be less than or equal to 100000" in err
