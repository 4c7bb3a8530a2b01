"""The ``command`` target: one program run per trial, the case input on stdin.

The program is started from a fixed argument list (no shell, no interpolation of
case data into arguments).  It gets the case text on stdin and in environment
variables, and answers on stdout: plain text, or one JSON object with ``output``
and optionally ``cost_usd`` and ``tokens``.  Exit status 75 (``EX_TEMPFAIL``)
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
import signal
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from trialscore.runner.registry import Name, TargetSpecBase, register_target
from trialscore.runner.targets.base import (
    TargetError,
    TargetReply,
    TransientTargetError,
    TrialRequest,
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


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group ``process`` leads (it and every child it started that stayed in it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Wait for a killed process; give up on pipes a descendant that left the group still holds."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), _REAP_S)
    transport = getattr(process, "_transport", None)  # close the pipes now, on this (still open) loop
    if transport is not None:
        transport.close()


async def run_program(
    argv: tuple[str, ...], stdin: str, env: dict[str, str], cwd: Path
) -> tuple[int, str, str]:
    """Run ``argv`` with ``stdin``; return ``(exit status, stdout, stderr)``.

    The program runs in its own session and process group.  If the awaiting task
    is cancelled (a timeout, Ctrl-C, SIGTERM) the whole group is killed: the
    program and every child it started (``sh -c``, ``bash run.sh``, ``npm run``),
    so a grandchild holding the output pipe cannot keep the call alive.  Whatever
    is left of the group when the program exits is killed too, so no trial leaves
    a program running behind it.

    >>> import asyncio, sys
    >>> asyncio.run(run_program((sys.executable, "-c", "print(input()[::-1])"), "abc", {}, Path(".")))
    (0, 'cba\\n', '')
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **env},
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise TargetError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
    try:
        out, err = await process.communicate(stdin.encode())
    except BaseException:
        _kill_group(process)
        await _reap(process)
        raise
    _kill_group(process)  # background children the program left behind
    status = process.returncode if process.returncode is not None else await process.wait()
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
            status, out, err = await run_program(self._argv, request.prompt, env, self._cwd)
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
            if isinstance(data, dict) and "output" in data:
                return reply_from(data, where)
        return TargetReply(out.rstrip("\n"))

    async def aclose(self) -> None:
        """Nothing to release: every trial's process has exited."""


register_target(CommandTargetSpec, lambda spec, directory, concurrency: CommandTarget(spec, directory))
