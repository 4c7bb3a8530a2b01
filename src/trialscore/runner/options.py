"""How to run a suite: :class:`RunOptions`, what ``trialscore run`` and ``trialscore.run_suite`` both build.

Every option of a run lives here once.  The command line's flags and the keyword arguments of
:func:`trialscore.run_suite` / :func:`trialscore.run_suite_async` are the same names
(:class:`RunFlags`), mapped onto the options in one place, :meth:`RunOptions.of`:

>>> options = RunOptions.of(trials=3, target="gpt", adaptive=True, workers=2, baseline="latest", seed=7)
>>> options.targets, options.distributed.workers, options.baseline, options.overrides.seed
(('gpt',), 2, 'latest', 7)
>>> RunOptions.of(case=[])
Traceback (most recent call last):
...
trialscore.errors.OptionError: case must be a non-empty string or a list of them; got []
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from trialscore.errors import OptionError
from trialscore.runner.adaptive import AdaptiveRule
from trialscore.runner.adaptive_paired import BaselineComparison
from trialscore.runner.distributed.options import Distribution
from trialscore.runner.observer import RunObserver
from trialscore.runner.overrides import Overrides
from trialscore.runner.store import DEFAULT_STORE
from trialscore.runner.suite import MAX_CONCURRENCY, MAX_TRIALS, Suite

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["RunFlags", "RunOptions"]


class RunFlags(TypedDict, total=False):
    """The options of a run by the names ``trialscore run`` gives its flags (``--max-cost`` is
    ``max_cost``); every one may be left out (the suite's own setting then holds).

    ``trials``: trials per case.  ``target``, ``case`` (glob patterns on case ids), ``category``:
    what runs (a name or a list of them).  ``concurrency``: trials in flight.  ``out``: the output
    directory; ``store``: the SQLite run store; ``resume``: the run id to finish.  ``progress``:
    the live progress bar.  ``adaptive``, ``sequential``, ``alpha``: stop a case once its verdict
    is settled (:mod:`trialscore.runner.adaptive`).  ``baseline`` (a run id, ``latest``,
    ``latest~N`` or a results path), ``margin``, ``allow_partial``: with ``adaptive``, compare with
    that run while running (:mod:`trialscore.runner.baseline`).  ``workers``, ``backend``
    (``local`` or ``ray``), ``address``: run the trials in worker processes or Ray actors.
    ``seed``, ``limit``, ``max_cost``, ``timeout``, ``retries``: the suite's settings overridden
    for this run (:class:`~trialscore.runner.overrides.Overrides`).
    """

    trials: int | None
    target: str | Sequence[str] | None
    case: str | Sequence[str] | None
    category: str | Sequence[str] | None
    concurrency: int | None
    out: str | os.PathLike[str] | None
    store: str | os.PathLike[str] | None
    resume: str | None
    progress: bool
    adaptive: bool | None
    sequential: bool | None
    alpha: float | None
    baseline: str | None
    margin: float
    allow_partial: bool
    workers: int | None
    backend: str | None
    address: str | None
    seed: int | None
    limit: int | None
    max_cost: float | None
    timeout: float | None
    retries: int | None


def _names(value: str | Sequence[str] | None, what: str) -> tuple[str, ...] | None:
    """A name or a list of names as a tuple (None: not given)."""
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names or not all(isinstance(name, str) and name for name in names):
        raise OptionError(f"{what} must be a non-empty string or a list of them; got {value!r}", option=what)
    return names


def _distribution(workers: int | None, backend: str | None, address: str | None) -> Distribution | None:
    """The workers asked for (None: a single-process run); an ``address`` is a Ray cluster's."""
    if backend is None and address is not None:
        backend = "ray"
    if backend is None and workers is None:
        return None
    return Distribution(backend or "local", workers, address)  # type: ignore[arg-type]


@dataclass(frozen=True)
class RunOptions:
    """How to run a suite; None keeps the suite's own setting.

    ``trials`` overrides every case's trial count; ``targets`` restricts the run to
    the named targets; ``cases`` (glob patterns on case ids) and ``categories`` restrict it
    to the matching cases (:mod:`trialscore.runner.selection`); ``resume`` finishes the stored
    run with that id (which then keeps its own trials, targets, cases and concurrency).
    ``signals``: Ctrl-C and SIGTERM stop the run gracefully (off when the event loop is the
    caller's, as in a notebook: cancelling the awaiting task stops it instead).
    ``adaptive``, ``sequential`` and ``alpha`` choose the stopping rule (:meth:`rule`);
    ``baseline`` is the run an adaptive run is compared with while it runs (``margin``: the
    difference that counts as none; ``allow_partial``: a baseline that stopped short of its plan
    is read anyway), resolved into ``comparison`` before the run starts
    (:func:`trialscore.runner.baseline.compare_while_running`).  ``distributed``: the worker
    processes or Ray actors that run the trials (None: this process).  ``overrides``: the suite's
    settings this run changes.  ``observer``: told when the run starts, commits a trial and ends
    (:class:`~trialscore.runner.observer.RunObserver`; the live report of ``trialscore run
    --report`` is one).

    Build it from the flags' names with :meth:`of`.
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
    baseline: str | None = None
    margin: float = 0.05
    allow_partial: bool = False
    distributed: Distribution | None = None
    comparison: BaselineComparison | None = None
    overrides: Overrides = field(default_factory=Overrides)
    observer: RunObserver | None = None

    def __post_init__(self) -> None:
        if self.trials is not None and not 1 <= self.trials <= MAX_TRIALS:
            raise OptionError(
                f"trials must satisfy 1 <= trials <= {MAX_TRIALS}; got {self.trials}", option="trials"
            )
        if self.concurrency is not None and not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise OptionError(
                f"concurrency must satisfy 1 <= concurrency <= {MAX_CONCURRENCY}; got {self.concurrency}",
                option="concurrency",
            )

    @classmethod
    def of(cls, **flags: Unpack[RunFlags]) -> RunOptions:
        """The options named as ``trialscore run``'s flags (:class:`RunFlags`); what the command and
        :func:`trialscore.run_suite` both call.

        Raises
        ------
        OptionError
            (an :class:`~trialscore.errors.EvaluationError`) For a bad value: its ``option`` names
            the flag's parameter.
        """
        store, out = flags.get("store"), flags.get("out")
        return cls(
            trials=flags.get("trials"),
            targets=_names(flags.get("target"), "target"),
            concurrency=flags.get("concurrency"),
            out_dir=Path(out) if out is not None else None,
            store=Path(store) if store is not None else DEFAULT_STORE,
            resume=flags.get("resume"),
            progress=flags.get("progress", True),
            cases=_names(flags.get("case"), "case"),
            categories=_names(flags.get("category"), "category"),
            adaptive=flags.get("adaptive"),
            sequential=flags.get("sequential"),
            alpha=flags.get("alpha"),
            baseline=flags.get("baseline"),
            margin=flags.get("margin", 0.05),
            allow_partial=flags.get("allow_partial", False),
            distributed=_distribution(flags.get("workers"), flags.get("backend"), flags.get("address")),
            overrides=Overrides(
                seed=flags.get("seed"),
                limit=flags.get("limit"),
                max_cost_usd=flags.get("max_cost"),
                timeout_s=flags.get("timeout"),
                retries=flags.get("retries"),
            ),
        )

    def rule(self, suite: Suite) -> AdaptiveRule | None:
        """The run's stopping rule (None: a fixed run): these options where given, else the suite's
        ``execution`` keys."""
        execution = suite.execution
        return AdaptiveRule.choose(
            execution.adaptive if self.adaptive is None else self.adaptive,
            execution.sequential if self.sequential is None else self.sequential,
            execution.alpha if self.alpha is None else self.alpha,
        )
