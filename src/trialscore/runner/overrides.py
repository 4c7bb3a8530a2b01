"""Settings of a suite overridden for one run from the command line, without editing its YAML.

``trialscore run suite.yaml --seed 7 --limit 5 --max-cost 2.50 --timeout 30 --retries 0`` runs the
suite as if its file said so: ``--seed`` replaces ``execution.seed``; ``--limit N`` keeps the first
``N`` cases (in suite order, after ``--case`` / ``--category``: a smoke test); ``--max-cost`` is the
run's budget (``execution.cost_limit_usd``); ``--timeout`` and ``--retries`` replace every case's
``timeout_s`` and ``retries`` (the suite's and each case's own).  The overrides are stored with the
run, so ``--resume`` keeps them.

>>> from trialscore.runner.suite import Suite
>>> suite = Suite.from_mapping({
...     "name": "s", "targets": [{"name": "t", "type": "command", "argv": ["cat"]}],
...     "graders": [{"type": "exact", "value": "ok"}],
...     "execution": {"seed": 1, "timeout_s": 60},
...     "cases": [{"id": f"c{i}", "input": "x", "execution": {"timeout_s": 5}} for i in range(4)]})
>>> changed = Overrides(seed=7, limit=2, timeout_s=30.0).apply(suite)
>>> changed.execution.seed, [case.id for case in changed.cases]
(7, ['c0', 'c1'])
>>> changed.settings_for(changed.cases[0]).timeout_s
30.0
>>> Overrides.from_settings(Overrides(limit=2).to_settings()) == Overrides(limit=2)
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from trialscore._record import Record
from trialscore.errors import EvaluationError
from trialscore.runner.suite import Suite

__all__ = ["Overrides"]


def _positive(value: float | None, name: str) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise EvaluationError(f"{name} must be a number > 0; got {value!r}")


@dataclass(frozen=True)
class Overrides(Record):
    """What one run changes of its suite's settings (None keeps the suite's)."""

    seed: int | None = None
    limit: int | None = None
    max_cost_usd: float | None = None
    timeout_s: float | None = None
    retries: int | None = None

    def __post_init__(self) -> None:
        if self.seed is not None and self.seed < 0:
            raise EvaluationError(f"seed must be a whole number >= 0; got {self.seed}")
        if self.limit is not None and self.limit < 1:
            raise EvaluationError(f"limit must be a whole number >= 1 (cases to run); got {self.limit}")
        if self.retries is not None and self.retries < 0:
            raise EvaluationError(f"retries must be a whole number >= 0; got {self.retries}")
        _positive(self.max_cost_usd, "max_cost_usd")
        _positive(self.timeout_s, "timeout_s")

    @property
    def any(self) -> bool:
        """Whether anything is overridden."""
        return any(value is not None for value in asdict(self).values())

    def to_settings(self) -> dict[str, Any]:
        """The overrides given, as stored with the run."""
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_settings(cls, settings: dict[str, Any] | None) -> Overrides:
        """The overrides a run was stored with (none for a run stored without)."""
        names = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in (settings or {}).items() if key in names})

    def apply(self, suite: Suite) -> Suite:
        """``suite`` with these settings in place of its own (itself when nothing is overridden)."""
        if not self.any:
            return suite
        execution: dict[str, Any] = {}
        if self.seed is not None:
            execution["seed"] = self.seed
        if self.max_cost_usd is not None:
            execution["cost_limit_usd"] = self.max_cost_usd
        if self.timeout_s is not None:
            execution["timeout_s"] = self.timeout_s
        if self.retries is not None:
            execution["retries"] = self.retries
        per_case = {
            name: None
            for name, value in (("timeout_s", self.timeout_s), ("retries", self.retries))
            if value is not None
        }
        cases = suite.cases if self.limit is None else suite.cases[: self.limit]
        if per_case:
            cases = tuple(
                case
                if case.execution is None
                else case.model_copy(update={"execution": case.execution.model_copy(update=per_case)})
                for case in cases
            )
        return suite.model_copy(
            update={"execution": suite.execution.model_copy(update=execution), "cases": cases}
        )
