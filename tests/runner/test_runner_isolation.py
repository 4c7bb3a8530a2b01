"""``isolation: process``: a call's process imports nothing of its own before the call.

Each call's process is forked from a forkserver that preloads what the process would otherwise
import itself (runner/isolation.py): the modules unpickling its case loads, and the modules of the
parent's main script, which multiprocessing runs again in it.  A preloaded audit hook records, in
the call's process, every module imported after the fork (Python's ``import`` audit event fires
only for a module not loaded yet), and the callable returns that record.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

AUDIT = """
import os
import sys

SERVER = os.getpid()  # the forkserver, which imports this module once
IMPORTED = []


def _record(event, args):
    if event == "import" and os.getpid() != SERVER:
        IMPORTED.append(args[0])


sys.addaudithook(_record)
"""

AGENT = """
import audit


def imported(case, seed):
    return list(audit.IMPORTED)
"""

#: The parent: a script (as trialscore's console script is one) that calls through call_in_process,
#: after starting the forkserver with the audit module added to the calls' preload.
PARENT = """
import sys
{command_line}

if __name__ == "__main__":
    import asyncio
    import json
    import multiprocessing.forkserver
    from pathlib import Path

    from trialscore.runner.isolation import CALL_PRELOAD, call_in_process, process_context
    from trialscore.runner.suite.schema import CaseSpec

    process_context([*CALL_PRELOAD, "audit"])
    multiprocessing.forkserver.ensure_running()
    case = CaseSpec(id="c", input="x")
    call = call_in_process("agent.py:imported", Path("."), "target 't'", (case, 7), {{}}, 60)
    ok, value = asyncio.run(call)
    print(json.dumps([ok, value]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forkserver is Linux's; elsewhere spawn")
@pytest.mark.parametrize(
    "command_line",
    ["from trialscore.cli import main  # as trialscore's console script does", ""],
    ids=["command-line", "library"],
)
def test_a_calls_process_imports_no_module_of_its_own(tmp_path: Path, command_line: str) -> None:
    (tmp_path / "audit.py").write_text(textwrap.dedent(AUDIT))
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT))
    script = tmp_path / "parent.py"
    script.write_text(PARENT.format(command_line=command_line))
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,  # hung
    )
    assert done.returncode == 0, done.stderr
    ok, imported = json.loads(done.stdout)
    assert ok is True, imported
    # multiprocessing's own start-up of a forked process is all a call's process imports
    assert [name for name in imported if not name.startswith("multiprocessing")] == []
