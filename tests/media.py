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
import sys
from pathlib import Path

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

    ``namespace``: in a user and mount namespace of their own (``unshare -rm``), where ``setup`` may
    mount.  A ``setup`` that fails fails the call.
    """
    lines = []
    for command in commands.values():
        words = [sys.executable, "-m", "trialscore", *command]
        lines.append(" ".join(_quote(word) for word in words) + " 2>&1")
    script = f"set -e\n{setup}\nset +e\n"
    script += "".join(f'echo "{_MARK}"; {line}; echo "--- exit $?"\n' for line in lines)
    script += f'echo "{_MARK}"; {after}\necho "--- exit $?"\n'
    argv = ["unshare", "-rm", "sh", "-c", script] if namespace else ["sh", "-c", script]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )
    assert done.returncode == 0, f"setup failed: {done.stderr}"
    out: dict[str, tuple[int, str]] = {}
    for block, name in zip(done.stdout.split(_MARK + "\n")[1:], [*commands, "after"], strict=True):
        body, _, status = block.rpartition("--- exit ")
        out[name] = (int(status), body)
    return out


def copy_files(source: Path, into: Path) -> None:
    """``source`` and its SQLite companions (``-wal``, ``-shm``) into the folder ``into``."""
    for path in source.parent.glob(source.name + "*"):
        shutil.copy(path, into / path.name)
