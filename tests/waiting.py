"""Waiting in a test for something another thread or process does: a wait that never ends is a failure
that says "hung", never a test that hangs (and never a fixed sleep that a loaded machine outruns)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["until"]


def until(condition: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """The value of ``condition()`` once it is truthy; fails as hung after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"hung: {what} did not happen within {timeout} s")
        time.sleep(0.01)
    return value
