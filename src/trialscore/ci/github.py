"""GitHub Actions: the step summary (``$GITHUB_STEP_SUMMARY``) and ``::error`` workflow commands.

When the environment variable ``GITHUB_STEP_SUMMARY`` names a file (as GitHub Actions sets it
in every step), ``run``, ``compare`` and ``score`` append their result to it as Markdown, so
it shows on the workflow run's page.  ``run --annotations github`` prints one workflow command
per case that failed or regressed (a regression is what the case's own exact test, corrected
over the target's cases, calls one: :func:`trialscore.stats._cases.case_changes`; noise is not
annotated)::

    ::error file=suite.yaml,line=31,title=trialscore sqrt-two (sim-agent)::failed on 4 of 5 trials ...

GitHub's escaping rules for workflow commands: in the message ``%``, ``\\r`` and ``\\n``
become ``%25``, ``%0D`` and ``%0A``; in a property value also ``:`` and ``,`` become
``%3A`` and ``%2C``.

>>> escape_data("50% done\\nnext")
'50%25 done%0Anext'
>>> escape_property("a,b:c")
'a%2Cb%3Ac'
>>> annotation("error", "x failed", file="s.yaml", line=3, title="case x")
'::error file=s.yaml,line=3,title=case x::x failed'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from trialscore.errors import EvaluationError

__all__ = [
    "STEP_SUMMARY_ENV",
    "annotation",
    "append_step_summary",
    "escape_data",
    "escape_property",
    "repo_path",
]

#: The variable GitHub Actions sets to the step summary file.
STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped (``%``, ``\\r``, ``\\n``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped (also ``:`` and ``,``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: str, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    """One ``::error`` / ``::warning`` / ``::notice`` workflow command line."""
    if level not in ("error", "warning", "notice"):
        raise EvaluationError(f"annotation level must be error, warning or notice; got {level!r}")
    props = [
        f"{name}={escape_property(str(value))}"
        for name, value in (("file", file), ("line", line), ("title", title))
        if value is not None
    ]
    return f"::{level}{' ' + ','.join(props) if props else ''}::{escape_data(message)}"


def repo_path(path: Path | None) -> str | None:
    """``path`` relative to the working directory (the repository root in a workflow) when inside it."""
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def append_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """Append ``markdown`` to the step summary file when ``GITHUB_STEP_SUMMARY`` is set; its path, else None.

    The file is rewritten whole with the summary at its end (a temporary file renamed over it), so
    a full disk leaves it as it was.

    Raises
    ------
    OutputError
        When the file named by the variable cannot be written (naming the variable and the file).
    """
    env = os.environ if environ is None else environ
    target = env.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    from trialscore._files import append_atomic

    path = Path(target)
    append_atomic(path, markdown.rstrip("\n") + "\n\n", f"the step summary ({STEP_SUMMARY_ENV})")
    return path
