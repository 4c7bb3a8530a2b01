"""Targets: what a suite evaluates (a program, a Python callable, an OpenAI-compatible endpoint)."""

from __future__ import annotations

from pathlib import Path

from trialscore.runner.suite import CommandTargetSpec, OpenAITargetSpec, TargetSpec
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


def build_target(spec: TargetSpec, directory: Path, concurrency: int) -> Target:
    """The runnable target for a suite's target ``spec`` (relative paths resolve against ``directory``)."""
    if isinstance(spec, CommandTargetSpec):
        return CommandTarget(spec, directory)
    if isinstance(spec, OpenAITargetSpec):
        return OpenAITarget(spec, concurrency)
    return PythonTarget(spec, directory)
