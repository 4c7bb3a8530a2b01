"""The trial runner: suite -> trials -> graders -> a stream of committed TrialRecords.

This namespace is the runner's extension API (docs/extending.md); the modules below it are how
the runner is built.  A new target or grader type is a spec model (a Pydantic model with a
``type`` literal, from :class:`TargetSpecBase` / :class:`GraderSpecBase`), the object that runs
it, and one call of :func:`register_target` / :func:`register_grader`; an installed package names
its module in the entry-point group ``trialscore.targets`` / ``trialscore.graders`` and every run,
``validate`` and worker knows the type (:func:`load_plugins`).

What a target is given and returns: :class:`TrialRequest` -> :class:`TargetReply` (raise
:class:`TransientTargetError` for what is worth retrying, :class:`TargetError` for what is not;
either makes the trial errored, never failed).  A target may declare ``secrets`` (values the
runner redacts from every stored or printed text, in their common encodings too) and
``timed_by_call`` (it keeps ``request.timeout_s`` itself).  A grader is called with the output
and the request and returns a :class:`Grade` (:func:`binary` for pass/fail); it raises
:class:`GraderError` when it cannot judge (the trial errors).

Running from Python: :func:`trialscore.run_suite` with :class:`RunOptions`, giving a
:class:`RunReport`.

>>> import trialscore.runner as runner
>>> sorted(name for name in runner.__all__ if name.startswith("register"))
['register_grader', 'register_target']
"""

from __future__ import annotations

from typing import Any

from trialscore._lazy import load

_NAMES = {
    "trialscore.runner.registry": (
        "GraderContext",
        "GraderSpecBase",
        "TargetSpecBase",
        "load_plugins",
        "register_grader",
        "register_target",
    ),
    "trialscore.runner.targets.base": ("Target", "TargetReply", "TrialRequest"),
    "trialscore.runner.graders.base": ("Grade", "Grader", "binary"),
    "trialscore.errors": ("GraderError", "TargetError", "TransientTargetError"),
    "trialscore.results.records": ("GraderResult",),
    "trialscore.runner.options": ("RunOptions",),
    "trialscore.runner.run_report": ("RunReport",),
}
_HOMES = {name: module for module, names in _NAMES.items() for name in names}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    return load(__name__, _HOMES, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
