"""Bundled examples: suites and seeded, simulated agents to run them against (no network, no keys).

* the demo suite (:func:`demo_suite_path`) and :mod:`trialscore.examples.simulated_agent`;
* the agents suite (:func:`agents_suite_path`) and :mod:`trialscore.examples.booking_agent`: two agents
  that reply with trajectories, graded on the answer and on the process (docs/agents.md).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["agents_suite_path", "demo_suite_path"]


def demo_suite_path() -> Path:
    """Path of the bundled demo suite (``trialscore/data/demo_suite.yaml``).

    >>> demo_suite_path().name
    'demo_suite.yaml'
    """
    return Path(str(resources.files("trialscore") / "data" / "demo_suite.yaml"))


def agents_suite_path() -> Path:
    """Path of the bundled agents suite (``trialscore/data/agents_suite.yaml``).

    >>> agents_suite_path().name
    'agents_suite.yaml'
    """
    return Path(str(resources.files("trialscore") / "data" / "agents_suite.yaml"))
