"""Real media for fault tests: a tmpfs the commands see read-only or full, in a mount namespace of their own.

``unshare -rm`` gives the commands a user and mount namespace where they may mount a tmpfs (no
privilege needed on the host), so a read-only remount refuses writes even to root, and a small
tmpfs fills up for real (ENOSPC).  Where that is not possible the tests fall back to what the
machine offers (permission bits, a file size limit) and say so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from tests.forks import HELPERS, RUNNER, answers, request, server_command

__all__ = ["can_mount", "run_commands"]


@functools.cache
def can_mount() -> bool:
    """True when a process started here may mount a tmpfs in a namespace of its own and remount it ro."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt && mount -o remount,ro /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


_MARK = "@@@ command"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def run_commands(
    commands: dict[str, list[str]],
    setup: str,
    *,
    namespace: bool,
    after: str = "",
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> dict[str, tuple[int, str]]:
    """Run ``setup`` (shell), then each ``trialscore`` command, then ``after`` (shell, to look at the
    media before the namespace and its mounts end); each command's (exit status, stdout+stderr), and
    ``after``'s output under the key ``"after"``.

    Each command is a process of its own, forked from one Python started after ``setup`` that
    imported trialscore once (``tests/forks.py``).  ``namespace``: in a user and mount namespace of
    their own (``unshare -rm``), where ``setup`` may mount.  A ``setup`` that fails fails the call.
    """
    script = f"set -e\n{{\n:\n{setup}\n}} </dev/null\nset +e\n"  # the commands are read on stdin
    if commands:
        server = " ".join(_quote(word) for word in server_command(HELPERS + RUNNER))
        script += f'echo "{_MARK}"; {server}; echo "--- exit $?"\n'
    script += f'echo "{_MARK}"; {after}\necho "--- exit $?"\n'
    argv = ["unshare", "-rm", "sh", "-c", script] if namespace else ["sh", "-c", script]
    requests = "".join(request(command, merge=True) for command in commands.values())
    environment = {**os.environ, **(env or {})}
    done = subprocess.run(
        argv, input=requests, capture_output=True, text=True, timeout=timeout, env=environment
    )
    assert done.returncode == 0, f"setup failed: {done.stderr}"
    blocks = [block.rpartition("--- exit ") for block in done.stdout.split(_MARK + "\n")[1:]]
    out: dict[str, tuple[int, str]] = {}
    if commands:
        replies, _, status = blocks.pop(0)
        assert int(status) == 0, f"the commands' server failed: {done.stderr}"
        for name, done in zip(commands, answers(replies), strict=True):
            out[name] = (done.code, done.stdout)
    ((body, _, status),) = blocks
    out["after"] = (int(status), body)
    return out


def copy_files(source: Path, into: Path) -> None:
    """``source`` and its SQLite companions (``-wal``, ``-shm``) into the folder ``into``."""
    for path in source.parent.glob(source.name + "*"):
        shutil.copy(path, into / path.name)
