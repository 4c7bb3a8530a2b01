"""Targets: what a suite evaluates (a program, a Python callable, an OpenAI-compatible endpoint).

Every module of this package is imported here, and each registers its target types in
:data:`trialscore.runner.registry.TARGETS` (type name -> spec model and factory).
"""

from __future__ import annotations

from pathlib import Path

from trialscore.runner.registry import TARGETS, TargetSpecBase, load_kinds
from trialscore.runner.targets.base import (
    Target,
    TargetError,
    TargetReply,
    TransientTargetError,
    TrialRequest,
    reply_from,
)
from trialscore.runner.targets.command import CommandTarget
from trialscore.runner.targets.openai import OpenAITarget
from trialscore.runner.targets.python import PythonTarget

__all__ = [
    "CommandTarget",
    "OpenAITarget",
    "PythonTarget",
    "Target",
    "TargetError",
    "TargetReply",
    "TransientTargetError",
    "TrialRequest",
    "build_target",
    "reply_from",
]

load_kinds(__name__, __path__, "targets")


def build_target(spec: TargetSpecBase, directory: Path, concurrency: int) -> Target:
    """The runnable target for a suite's target ``spec`` (relative paths resolve against ``directory``)."""
    return TARGETS[str(getattr(spec, "type", ""))].build(spec, directory, concurrency)
