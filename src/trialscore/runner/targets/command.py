"""The ``command`` target: one program run per trial, the case input on stdin.

The program is started from a fixed argument list (no shell, no interpolation of
case data into arguments).  It gets the case text on stdin and in environment
variables, and answers on stdout: plain text, or one JSON object with ``output``
and optionally ``cost_usd`` and ``tokens``, or a trajectory (an object with ``tool_calls``,
:mod:`trialscore.results.trajectory`).  Exit status 75 (``EX_TEMPFAIL``)
marks a transient failure the runner retries; any other non-zero status errors
the trial.

Environment given to the program (besides the runner's own and the target's ``env``):

* ``TRIALSCORE_CASE_ID``, ``TRIALSCORE_TRIAL``, ``TRIALSCORE_SEED``, ``TRIALSCORE_ATTEMPT``
  (0, then 1, 2, ... on retries, each retry with a seed of its own);
* ``TRIALSCORE_CATEGORY`` (empty when the case has none);
* ``TRIALSCORE_INPUT``: the case text, when it is under 64 KiB (stdin always has it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from trialscore.runner.reaper import TAG_ENV, end_program, forget, new_tag, started
from trialscore.runner.registry import DEFAULT_MAX_OUTPUT_BYTES, Name, TargetSpecBase, register_target
from trialscore.runner.targets.base import (
    TargetError,
    TargetReply,
    TransientTargetError,
    TrialRequest,
    describe_bytes,
    reply_from,
)

__all__ = ["EX_TEMPFAIL", "CommandTarget", "CommandTargetSpec", "run_program"]


class CommandTargetSpec(TargetSpecBase):
    """A program run once per trial: the case input on stdin and in ``TRIALSCORE_*`` variables."""

    type: Literal["command"]
    argv: Annotated[tuple[Name, ...], Field(min_length=1)]
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


#: Exit status a command target (or grader) uses to ask for a retry.
EX_TEMPFAIL = 75

_ENV_INPUT_LIMIT = 64 * 1024
#: Seconds to wait for a killed program's pipes to close before they are closed from this side.
_REAP_S = 5.0
#: How much of a program's stderr is kept (its end: the error message is there).
_STDERR_TAIL = 64 * 1024
_CHUNK = 64 * 1024
#: How often a call whose pipes are still open checks whether the program itself has exited (seconds).
_POLL_S = 0.05


class _OverLimit(Exception):
    """The program wrote more to stdout than it may."""


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Wait for a killed process, its pipes closed from this side first (what is left in them is not
    wanted, and a full pipe a reader stopped on would never report its end)."""
    _close_pipes(process)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), _REAP_S)
    process._transport.close()  # type: ignore[attr-defined]


def _close_pipes(process: asyncio.subprocess.Process) -> None:
    """Close the program's stdin, stdout and stderr from this side (their readers see their end)."""
    transport = process._transport  # type: ignore[attr-defined]
    for fd in (0, 1, 2):
        pipe = transport.get_pipe_transport(fd)
        if pipe is not None:
            pipe.close()


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Return once the program itself has exited (its pipes may still be held by descendants)."""
    while process.returncode is None:
        await asyncio.sleep(_POLL_S)


async def _until_answered(
    process: asyncio.subprocess.Process, tag: str, exchange: asyncio.Future[Any]
) -> None:
    """Await the exchange with the program; once the program itself has exited, end what it left
    behind (a descendant holding stdout would otherwise keep the call open until its timeout), and
    after :data:`_REAP_S` close the pipes from this side: what was read is the answer."""
    exited = asyncio.ensure_future(_exited(process))
    try:
        await asyncio.wait([exchange, exited], return_when=asyncio.FIRST_COMPLETED)
    finally:
        exited.cancel()
    if not exchange.done():
        end_program(process.pid, tag, reaped=True)
        done, _ = await asyncio.wait([exchange], timeout=_REAP_S)
        if not done:
            _close_pipes(process)
    await exchange


async def _feed(stream: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write ``data`` to the program's stdin and close it (a program that does not read it is fine)."""
    if stream is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(data)
        await stream.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.close()


async def _read_capped(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    """All of ``stream``; :class:`_OverLimit` as soon as it passes ``limit`` bytes (reading stops)."""
    chunks: list[bytes] = []
    size = 0
    while stream is not None and (chunk := await stream.read(_CHUNK)):
        size += len(chunk)
        if size > limit:
            raise _OverLimit
        chunks.append(chunk)
    return b"".join(chunks)


async def _read_tail(stream: asyncio.StreamReader | None, keep: int) -> bytes:
    """The last ``keep`` bytes of ``stream``, read to its end in bounded memory."""
    tail = bytearray()
    while stream is not None and (chunk := await stream.read(_CHUNK)):
        tail += chunk
        if len(tail) > keep:
            del tail[:-keep]
    return bytes(tail)


async def _end_started(
    creating: asyncio.Future[asyncio.subprocess.Process], tag: str, running: Callable[[int], None]
) -> None:
    """End the program a cancelled call was starting, once it has started (or failed to)."""
    try:
        process = await creating
    except (OSError, asyncio.CancelledError):
        return
    running(process.pid)
    end_program(process.pid, tag, reaped=False)
    await _reap(process)
    if process.returncode is not None:
        forget(process.pid)


async def run_program(
    argv: tuple[str, ...],
    stdin: str,
    env: dict[str, str],
    cwd: Path,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> tuple[int, str, str]:
    """Run ``argv`` with ``stdin``; return ``(exit status, stdout, stderr)``.

    The program runs in its own session and process group.  However its call ends (it exits,
    its caller times out, Ctrl-C, SIGTERM), everything it started is ended with it
    (:func:`trialscore.runner.reaper.end_program`): its group, the descendants that left the
    group (``setsid``), and, in a process that made itself the subreaper
    (:func:`~trialscore.runner.reaper.enable_subreaper`: ``trialscore run`` and its workers do),
    those that also left its tree (re-parented to it, found by the tag in their environment).
    So no trial leaves a program running behind it, and a
    grandchild holding the output pipe cannot keep the call alive.

    Its stdout is read up to ``max_output_bytes``: past that, reading stops, the program is ended
    and the call raises :class:`TargetError` (``output over 8 MiB``).  Of its stderr the last
    64 KiB are kept.  So a program that writes without end cannot grow the runner's memory.

    >>> import asyncio, sys
    >>> asyncio.run(run_program((sys.executable, "-c", "print(input()[::-1])"), "abc", {}, Path(".")))
    (0, 'cba\\n', '')
    """
    tag = new_tag()
    with started() as running:
        creating = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, **env, TAG_ENV: tag},
                cwd=cwd,
                start_new_session=True,
            )
        )
        try:
            # Shielded: a call cancelled while its program starts (Ctrl-C, SIGTERM) lets the start
            # finish, then ends the program and all it began like any other (asyncio would kill the
            # program alone, leave its children running, and could wait for its exit for ever).
            process = await asyncio.shield(creating)
        except asyncio.CancelledError:
            await _end_started(creating, tag, running)
            raise
        except OSError as exc:
            raise TargetError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
        running(process.pid)
    reading = asyncio.ensure_future(_read_capped(process.stdout, max_output_bytes))
    tail = asyncio.ensure_future(_read_tail(process.stderr, _STDERR_TAIL))
    exchange = [asyncio.ensure_future(_feed(process.stdin, stdin.encode())), reading, tail]
    gathered = asyncio.gather(*exchange)
    gathered.add_done_callback(_retrieved)  # when the call is given up, nobody awaits it
    try:
        await _until_answered(process, tag, gathered)
        out, err = reading.result(), tail.result()
        status = await process.wait()
    except BaseException as exc:
        for task in exchange:
            task.cancel()
        end_program(process.pid, tag, reaped=process.returncode is not None)
        await _reap(process)
        if process.returncode is not None:
            forget(process.pid)
        if isinstance(exc, _OverLimit):
            raise TargetError(
                f"output over {describe_bytes(max_output_bytes)} (max_output_bytes={max_output_bytes}); "
                "stopped reading it and ended the program"
            ) from None
        raise
    end_program(process.pid, tag, reaped=True)  # background children the program left behind
    forget(process.pid)
    return status, out.decode(errors="replace"), err.decode(errors="replace")


def _tail(text: str, limit: int = 400) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


class CommandTarget:
    """Runs ``spec.argv`` once per trial (see the module docstring for the protocol)."""

    def __init__(self, spec: CommandTargetSpec, directory: Path) -> None:
        self.name = spec.name
        self._argv = spec.argv
        self._env = dict(spec.env)
        self._cwd = directory / spec.cwd if spec.cwd else directory
        self._limit = spec.max_output_bytes

    async def __call__(self, request: TrialRequest) -> TargetReply:
        """Run the program for one trial and parse its stdout."""
        case = request.case
        env = {
            **self._env,
            "TRIALSCORE_CASE_ID": case.id,
            "TRIALSCORE_TRIAL": str(request.trial),
            "TRIALSCORE_SEED": str(request.attempt_seed),
            "TRIALSCORE_ATTEMPT": str(request.attempt),
            "TRIALSCORE_CATEGORY": case.category or "",
        }
        if len(request.prompt) < _ENV_INPUT_LIMIT:
            env["TRIALSCORE_INPUT"] = request.prompt
        where = f"target {self.name!r}"
        try:
            status, out, err = await run_program(self._argv, request.prompt, env, self._cwd, self._limit)
        except TargetError as exc:
            raise TargetError(f"{where}: {exc}") from exc
        if status == EX_TEMPFAIL:
            raise TransientTargetError(
                f"{where}: exit status {EX_TEMPFAIL} (temporary failure): {_tail(err)}"
            )
        if status != 0:
            raise TargetError(f"{where}: exit status {status}: {_tail(err)}")
        text = out.strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, dict) and ("output" in data or "tool_calls" in data):
                return reply_from(data, where)
        return TargetReply(out.rstrip("\n"))

    async def aclose(self) -> None:
        """Nothing to release: every trial's process has exited."""


register_target(CommandTargetSpec, lambda spec, directory, concurrency: CommandTarget(spec, directory))
