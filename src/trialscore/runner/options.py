"""How to run a suite: :class:`RunOptions`, what ``trialscore run`` and ``trialscore.run_suite`` build."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trialscore.errors import EvaluationError
from trialscore.runner.adaptive_paired import BaselineComparison
from trialscore.runner.distributed.options import Distribution
from trialscore.runner.overrides import Overrides
from trialscore.runner.store import DEFAULT_STORE
from trialscore.runner.suite import MAX_CONCURRENCY, MAX_TRIALS

__all__ = ["RunOptions"]


@dataclass(frozen=True)
class RunOptions:
    """How to run a suite; None keeps the suite's own setting.

    ``trials`` overrides every case's trial count; ``targets`` restricts the run to
    the named targets; ``cases`` (glob patterns on case ids) and ``categories`` restrict it
    to the matching cases (:mod:`trialscore.runner.selection`); ``resume`` finishes the stored
    run with that id (which then keeps its own trials, targets, cases and concurrency).
    ``signals``: Ctrl-C and SIGTERM stop the run gracefully (off when the event loop is the
    caller's, as in a notebook: cancelling the awaiting task stops it instead).
    """

    trials: int | None = None
    targets: tuple[str, ...] | None = None
    concurrency: int | None = None
    out_dir: Path | None = None
    store: Path = DEFAULT_STORE
    resume: str | None = None
    progress: bool = True
    cases: tuple[str, ...] | None = None
    categories: tuple[str, ...] | None = None
    signals: bool = True
    adaptive: bool | None = None
    sequential: bool | None = None
    alpha: float | None = None
    distributed: Distribution | None = None
    comparison: BaselineComparison | None = None
    overrides: Overrides = field(default_factory=Overrides)

    def __post_init__(self) -> None:
        if self.trials is not None and not 1 <= self.trials <= MAX_TRIALS:
            raise EvaluationError(f"trials must satisfy 1 <= trials <= {MAX_TRIALS}; got {self.trials}")
        if self.concurrency is not None and not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise EvaluationError(
                f"concurrency must satisfy 1 <= concurrency <= {MAX_CONCURRENCY}; got {self.concurrency}"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return {
            "adaptive": self.adaptive,
            "sequential": self.sequential,
            "alpha": self.alpha,
            "trials": self.trials,
            "targets": list(self.targets) if self.targets is not None else None,
            "concurrency": self.concurrency,
            "out_dir": str(self.out_dir) if self.out_dir is not None else None,
            "store": str(self.store),
            "resume": self.resume,
            "cases": list(self.cases) if self.cases is not None else None,
            "categories": list(self.categories) if self.categories is not None else None,
            "distributed": self.distributed.to_dict() if self.distributed is not None else None,
            "comparison": self.comparison.to_dict() if self.comparison is not None else None,
            "overrides": self.overrides.to_settings(),
        }
