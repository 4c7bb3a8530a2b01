"""Running a suite: every (target, case, trial) on an asyncio loop, graded, committed, aggregated.

* **Order.** Trials are started trial-major (trial 0 of every case, then trial
  1, ...), so a cost limit or an interruption leaves every case with a fair share.
* **Concurrency.** ``concurrency`` workers pull trials; that is the global limit
  on trials in flight (judge calls run inside their trial's slot).
* **Failures.** Each target call has ``timeout_s``; transient errors are retried
  with backoff (:mod:`trialscore.runner.retry`).  A trial that still fails is
  stored with verdict ``error`` and its message.
* **Durability.** A worker hands its finished trial to the single writer and
  waits for the commit before it starts another trial (:mod:`trialscore.runner.store`).
* **Cost.** Before a trial starts, the run budget (``execution.cost_limit_usd``)
  and the case's budget (``trials.cost_limit_usd``, per target and case) are
  checked; once one is reached no new trial of its scope starts and the case is
  marked ``cost_limited``.  Spend is charged when a trial finishes.
* **Seeds.** Trial ``t`` of case ``c`` gets :func:`~trialscore.runner.seeds.trial_seed`
  ``(execution.seed, c, t)``, passed to the target.
* **Ctrl-C / SIGTERM.** No new trial starts, trials in flight are cancelled (their
  programs killed), the committed ones stay; :class:`RunReport` says how to resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import secrets
import signal
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.markup import escape

from trialscore._words import plural
from trialscore.errors import EvaluationError, parameter
from trialscore.results.counts import ItemCounts
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import AdaptiveRule, Scheduler, Unit, stopped_result
from trialscore.runner.adaptive_paired import BaselineComparison, PairedScheduler
from trialscore.runner.aggregator import RunAggregator, RunReader
from trialscore.runner.budget import Budget
from trialscore.runner.distributed.options import Distribution
from trialscore.runner.failures import total_usd
from trialscore.runner.graders import Grader, GraderError, build_grader
from trialscore.runner.grading import trial_outcome
from trialscore.runner.overrides import Overrides
from trialscore.runner.progress import RunCounters, RunProgress
from trialscore.runner.redact import redact
from trialscore.runner.retry import RetryPolicy, call_with_retries
from trialscore.runner.seeds import trial_seed
from trialscore.runner.selection import selected_suite, selection_settings
from trialscore.runner.store import DEFAULT_STORE, RunInfo, StoreError, TrialRow, TrialStore
from trialscore.runner.strategies import CaseResult
from trialscore.runner.suite import (
    MAX_CONCURRENCY,
    MAX_TRIALS,
    CaseSettings,
    CaseSpec,
    LlmJudgeGraderSpec,
    Suite,
    suite_from_text,
)
from trialscore.runner.targets import Target, TargetError, TargetReply, TrialRequest, build_target

__all__ = [
    "DEFAULT_STORE",
    "RunOptions",
    "RunReport",
    "new_run_id",
    "run_suite",
    "run_suite_async",
    "stored_suite",
]


def new_run_id() -> str:
    """A fresh run id: UTC time plus 6 random hex digits, e.g. ``20250101-120000-a1b2c3``."""
    return f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


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


@dataclass(frozen=True)
class RunReport:
    """What a run did.

    ``completed`` is False when it was interrupted; then ``cases`` is empty and the
    run can be finished with ``resume_command``.  ``warnings`` lists what the user
    must know (an unenforceable cost limit, cost-limited cases).
    """

    run_id: str
    suite: Suite
    store: Path
    out_dir: Path
    completed: bool
    planned: int
    committed: int
    ran_now: int
    skipped: int
    cases: tuple[CaseResult, ...] = ()
    warnings: tuple[str, ...] = ()
    cost: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    adaptive: dict[str, Any] | None = None
    tallies: RunAggregator | None = field(default=None, repr=False, compare=False)

    @property
    def resume_command(self) -> str:
        """The command that finishes this run (the store keeps its suite)."""
        return _resume_command(self.run_id, self.store)

    @functools.cached_property
    def reader(self) -> RunReader:
        """The run in its store, read on demand (the records are not kept in memory)."""
        return RunReader(self.store, self.run_id)

    @property
    def records(self) -> tuple[TrialRecord, ...]:
        """Every committed trial of the run (earlier sessions' included), read from the store, ordered
        by target, case and trial.  A large run is better walked with :meth:`iter_records`."""
        return tuple(self.reader.records())

    @property
    def trials(self) -> tuple[TrialRecord, ...]:
        """Every committed trial of the run, as ``records``."""
        return self.records

    def iter_records(self, target: str | None = None, case_id: str | None = None) -> Iterator[TrialRecord]:
        """The run's committed trials (of one target and case when given) one at a time, from the store."""
        return self.reader.records(target, case_id)

    def item_counts(self) -> ItemCounts:
        """Per (target, case) counts of the committed trials (``count_records(records, by=["target"])``),
        from the run's running counts."""
        from trialscore.runner.summary import tallies_of

        return tallies_of(self).item_counts()

    def suite_order_records(self) -> Iterator[TrialRecord]:
        """The run's committed trials in suite order: target, then case (as the suite lists them), then
        trial; one case at a time from the store (what ``trials.jsonl`` holds)."""
        for target in self.settings.get("targets", []):
            for case in self.suite.cases:
                yield from self.reader.records(target, case.id)

    @functools.cached_property
    def summary(self) -> dict[str, Any]:
        """``summary.json``'s content (:func:`trialscore.runner.summary.build_summary`), computed once."""
        from trialscore.runner.summary import build_summary

        return build_summary(self)

    def to_pandas(self, what: str = "trials") -> Any:
        """The run's ``"trials"`` (one row a trial) or ``"cases"`` (one row a target and case) as a
        pandas DataFrame; see :func:`trialscore.runner.frames.to_pandas`."""
        from trialscore.runner.frames import to_pandas

        return to_pandas(self, what)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (without the per-trial records)."""
        return {
            "run_id": self.run_id,
            "suite": self.suite.name,
            "store": str(self.store),
            "out_dir": str(self.out_dir),
            "completed": self.completed,
            "planned": self.planned,
            "committed": self.committed,
            "ran_now": self.ran_now,
            "skipped": self.skipped,
            "warnings": list(self.warnings),
            "cost": self.cost,
            "settings": self.settings,
            "elapsed_s": self.elapsed_s,
            "adaptive": self.adaptive,
        }


def _resume_command(run_id: str, store: Path) -> str:
    where = "" if store == DEFAULT_STORE else f" --store {store}"
    return f"trialscore run --resume {run_id}{where}"


def stored_suite(run_id: str, store: Path, targets: tuple[str, ...] | None = None) -> Suite:
    """The suite run ``run_id`` was started with, rebuilt from the text its store keeps.

    Relative paths in it resolve against the folder of the file it was read from, and it is
    validated again (callables import, key variables are set, for ``targets``; None = all).

    Raises
    ------
    EvaluationError
        For an unknown run id, a run stored without its suite text (by an older trialscore),
        or a suite that no longer validates on this machine.
    """
    opened = TrialStore(store)
    try:
        info = opened.run(run_id)
    finally:
        opened.close()
    if info.suite_text is None:
        raise EvaluationError(
            f"run {run_id!r} in store {str(store)!r} was stored without its suite; give the suite file: "
            f"trialscore run SUITE.yaml --resume {run_id}"
        )
    path = Path(info.suite_path) if info.suite_path is not None else None
    return suite_from_text(
        info.suite_text, info.suite_path or f"<suite of run {run_id}>", path, targets=targets
    )


@dataclass(frozen=True)
class _Case:
    """A case ready to run: its settings, retry policy and built graders."""

    spec: CaseSpec
    settings: CaseSettings
    policy: RetryPolicy
    graders: tuple[Grader, ...]


class _Writer:
    """The single writer: commits every row handed to it since its last commit, in one transaction.

    The commit runs on the event loop itself.  In WAL mode with
    ``synchronous=NORMAL`` it appends to the log without an fsync (only the
    occasional checkpoint syncs), well under a millisecond for a batch; a writer
    thread would instead wait for the GIL (up to the 5 ms switch interval) while
    the loop is busy, delaying every trial's commit.
    """

    def __init__(self, store: TrialStore) -> None:
        self._store = store
        self._rows: list[TrialRow] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._wake = asyncio.Event()
        self._closing = False
        self.failed: StoreError | None = None
        self._task = asyncio.create_task(self._run())

    async def commit(self, row: TrialRow) -> None:
        """Hand over one finished trial and wait until it is committed.

        If the waiting task is cancelled, the row is still committed.  Once a
        commit has failed (the store cannot be written) every later call raises
        that :class:`StoreError` at once: the run must stop, not wait.
        """
        if self.failed is not None:
            raise self.failed
        waiter = asyncio.get_running_loop().create_future()
        self._rows.append(row)
        self._waiters.append(waiter)
        self._wake.set()
        await waiter

    async def _run(self) -> None:
        while True:
            if not self._rows:
                if self._closing:
                    return
                await self._wake.wait()
                self._wake.clear()
                continue
            rows, waiters = self._rows, self._waiters
            self._rows, self._waiters = [], []
            try:
                self._store.insert(rows)
            except Exception as exc:  # any failure must reach the waiting workers, or they wait forever
                failed = (
                    exc
                    if isinstance(exc, StoreError)
                    else StoreError(
                        f"store {str(self._store.path)!r}: cannot commit trials: {type(exc).__name__}: {exc}"
                    )
                )
                self.failed = failed
                for waiter in [*waiters, *self._waiters]:
                    if not waiter.done():
                        waiter.set_exception(failed)
                self._rows, self._waiters = [], []
                return
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def close(self) -> None:
        """Commit what is pending, then stop."""
        self._closing = True
        self._wake.set()
        await self._task


class Backend(Protocol):
    """Runs a session's trials somewhere else (worker processes, Ray actors) in place of its in-process
    workers: it asks :meth:`_Execution.take` for each unit and hands each finished record to
    :meth:`_Execution.finish` (:mod:`trialscore.runner.distributed`)."""

    async def serve(self, execution: _Execution) -> None: ...


class _Execution:
    """One session of a run on one event loop."""

    def __init__(
        self,
        suite: Suite,
        run_id: str,
        store: TrialStore,
        targets: dict[str, Target],
        evaluated: Sequence[str],
        trials: int | None,
        stored: Sequence[TrialRecord],
        concurrency: int,
        console: Console,
        rule: AdaptiveRule | None = None,
        comparison: BaselineComparison | None = None,
    ) -> None:
        self.suite, self.run_id, self.store = suite, run_id, store
        self.targets = targets
        self.evaluated = list(evaluated)
        self.console = console
        self.concurrency = concurrency
        cases = _prepared_cases(suite, trials, self.judge)
        self.cases = {case.spec.id: case for case in cases}
        self.counters = RunCounters(total=len(evaluated) * sum(case.settings.trials for case in cases))
        self.run_budget = Budget(suite.execution.cost_limit_usd)
        self.case_budgets = {
            (name, case.spec.id): Budget(case.settings.cost_limit_usd) for name in evaluated for case in cases
        }
        self.limited = suite.execution.cost_limit_usd is not None or any(
            case.settings.cost_limit_usd is not None for case in cases
        )
        self.cost_limited: set[tuple[str, str]] = set()
        self.unreported_cost = 0
        self.resumed = stored  # the trials earlier sessions committed
        self.tallies = RunAggregator()  # every committed trial, counted (not kept)
        for record in stored:
            self.tallies.add(record)
        self.stopping = False
        self._workers: list[asyncio.Task[None]] = []
        self._stored = len(stored)
        done = {(r.target or "", r.case_id, r.trial) for r in stored}
        self._started: dict[tuple[str, str], int] = {}  # trials of each (target, case) stored or started
        for record in stored:
            self._charge(record)
            key = (record.target or "", record.case_id)
            self._started[key] = self._started.get(key, 0) + 1
        self.jobs = job_order(cases, self.evaluated, done)
        self.planned = self.counters.total
        self.rule = rule
        self.scheduler: Scheduler | PairedScheduler | None = None
        units = [(c.spec.id, c.settings) for c in cases]
        if comparison is not None:  # comparing while running: the paired verdict decides the trials
            self.scheduler = PairedScheduler(units, self.evaluated, comparison, suite.execution.seed)
        elif rule is not None:
            self.scheduler = Scheduler(units, self.evaluated, stored, rule.alpha)
        self._changed = asyncio.Event()
        if self.scheduler is not None:
            self.counters.total -= self.scheduler.saved
        self.secrets = tuple(key for target in targets.values() for key in getattr(target, "secrets", ()))
        self.caps = {
            name: asyncio.Semaphore(cap)
            for name in self.evaluated
            if (cap := suite.target(name).max_concurrency) is not None
        }
        self.backend: Backend | None = None
        self._writer: _Writer | None = None

    def _redacted(self, record: TrialRecord) -> TrialRecord:
        """The record without any secret the run knows, in its error or output text."""
        update: dict[str, Any] = {}
        if record.error is not None:
            update["error"] = redact(record.error, self.secrets)
        if record.output is not None and self.secrets:
            output = redact(record.output, self.secrets, headers=False)
            if output != record.output:
                update["output"] = output
        return record.model_copy(update=update) if update else record

    def _charge(self, record: TrialRecord) -> None:
        self.run_budget.charge(record.cost_usd)
        self.case_budgets[(record.target or "", record.case_id)].charge(record.cost_usd)
        if record.cost_usd is None and not record.errored:
            self.unreported_cost += 1
            if self.unreported_cost == 1 and self.limited:
                self.console.print(
                    f"[yellow]warning:[/yellow] target {escape(repr(record.target))} reports no cost; "
                    "cost_limit_usd cannot be enforced, trials go on"
                )
        counters = self.counters
        counters.done += 1
        counters.spent_usd, counters.unknown_cost = self.run_budget.spent, self.run_budget.unknown
        if record.errored:
            counters.errored += 1
        else:
            counters.scored += 1
            counters.passed += record.passed is True

    def take(self) -> tuple[str, _Case, int] | None:
        """The next trial to start (target, case, trial), skipping (and marking) those a reached budget
        stops; None when none may start now (see :attr:`waiting`).  Backends call it too."""
        if self.scheduler is not None:
            return self._take_adaptive(self.scheduler)
        while not self.stopping:
            if self.run_budget.exhausted:
                self.skip_rest()
                return None
            job = next(self.jobs, None)
            if job is None:
                return None
            name, case, _ = job
            key = (name, case.spec.id)
            self._started[key] = self._started.get(key, 0) + 1
            if self.case_budgets[key].exhausted:
                self.cost_limited.add(key)
                self.counters.skipped += 1
                self.counters.done += 1
                continue
            return job
        return None

    def _take_adaptive(self, scheduler: Scheduler | PairedScheduler) -> tuple[str, _Case, int] | None:
        """The next unit the adaptive scheduler allows, skipping (and marking) the cases a budget stops."""
        while not self.stopping:
            if self.run_budget.exhausted:
                self.skip_rest()
                return None
            unit = scheduler.start()
            if unit is None:
                return None
            key = (unit.target, unit.case_id)
            if self.case_budgets[key].exhausted:
                left = scheduler.drop(unit.target, unit.case_id, unit)
                self.cost_limited.add(key)
                self.counters.skipped += left
                self.counters.done += left
                continue
            self._started[key] = self._started.get(key, 0) + 1
            return unit.target, self.cases[unit.case_id], unit.trial
        return None

    async def _next(self) -> tuple[str, _Case, int] | None:
        """The next trial to start; an adaptive run waits while a trial in flight may unlock one."""
        while True:
            job = self.take()
            if job is not None or not self.waiting:
                return job
            await self._changed.wait()

    @property
    def waiting(self) -> bool:
        """True when no trial may start now but one in flight may still unlock one (adaptive runs)."""
        scheduler = self.scheduler
        return (
            scheduler is not None
            and not self.stopping
            and not scheduler.exhausted
            and scheduler.in_flight > 0
        )

    def _finished(self, record: TrialRecord) -> None:
        """Tell the adaptive scheduler a trial finished, and wake the workers waiting on it."""
        if self.scheduler is None:
            return
        saved = self.scheduler.saved
        self.scheduler.finish(Unit(record.target or "", record.case_id, record.trial), record)
        self.counters.total -= self.scheduler.saved - saved
        self._changed.set()
        self._changed = asyncio.Event()

    def skip_rest(self) -> None:
        """The run budget is reached (or, for a backend, no more trial fits it): count every trial not
        started as skipped and cost-limited, without walking them."""
        if self.scheduler is not None:
            for key in self.case_budgets:
                left = self.scheduler.drop(*key)
                if left:
                    self.cost_limited.add(key)
                    self.counters.skipped += left
                    self.counters.done += left
            return
        self.jobs = iter(())
        for name in self.evaluated:
            for case in self.cases.values():
                key = (name, case.spec.id)
                left = case.settings.trials - self._started.get(key, 0)
                if left > 0:
                    self._started[key] = case.settings.trials
                    self.cost_limited.add(key)
                    self.counters.skipped += left
                    self.counters.done += left

    async def judge(self, name: str, request: TrialRequest) -> TargetReply:
        """An ``llm_judge`` call: the judge target with the case's timeout and retries."""
        return await call_with_retries(self.targets[name], request, self.cases[request.case.id].policy)

    async def _trial(self, name: str, case: _Case, trial: int) -> TrialRecord:
        spec, settings = case.spec, case.settings
        seed = trial_seed(self.suite.execution.seed, spec.id, trial)
        request = TrialRequest(spec, trial, seed, spec.text)
        started = datetime.now(timezone.utc)
        clock = time.perf_counter()
        common: dict[str, Any] = {
            "run_id": self.run_id,
            "suite": self.suite.name,
            "case_id": spec.id,
            "trial": trial,
            "target": name,
            "category": spec.category,
            "started_at": started,
            "seed": seed,
        }
        costs: list[float | None] = []
        output = None
        try:
            reply = await call_with_retries(self.targets[name], request, case.policy)
            latency = time.perf_counter() - clock
            output = reply.output
            costs.append(reply.cost_usd)
            grades = [await grader(output, request) for grader in case.graders]
        except (TargetError, GraderError) as exc:
            cost = None if not costs or None in costs else math.fsum(costs)  # type: ignore[arg-type]
            latency = time.perf_counter() - clock
            return TrialRecord(
                **common,
                passed=None,
                verdict="error",
                output=output,
                error=str(exc),
                cost_usd=cost,
                latency_s=latency,
            )
        costs.extend(grade.cost_usd for grade in grades)
        results = tuple(grade.result for grade in grades)
        outcome = trial_outcome(results, settings.threshold, settings.borderline)
        return TrialRecord(
            **common,
            passed=outcome.passed,
            score=outcome.score,
            verdict=outcome.verdict,
            grader_results=results,
            output=output,
            cost_usd=None if None in costs else math.fsum(costs),  # type: ignore[arg-type]
            latency_s=latency,
            tokens=reply.tokens,
        )

    @property
    def ran_now(self) -> int:
        """Trials run and committed in this session."""
        return self.tallies.stored - self._stored

    async def run_unit(self, name: str, case_id: str, trial: int) -> TrialRecord:
        """Run trial ``trial`` of case ``case_id`` on target ``name`` (a worker's job), secrets redacted."""
        return self._redacted(await self._trial(name, self.cases[case_id], trial))

    async def finish(self, record: TrialRecord) -> None:
        """Charge a finished trial and wait until the store has committed it."""
        assert self._writer is not None, "finish() is called while the session runs"
        record = self._redacted(record)
        self._charge(record)
        await self._writer.commit(TrialStore.row(self.run_id, record))
        self.tallies.add(record)
        self._finished(record)

    async def _worker(self) -> None:
        while (job := await self._next()) is not None:
            cap = self.caps.get(job[0])
            async with cap if cap is not None else contextlib.nullcontext():
                record = await self._trial(*job)
            await self.finish(record)

    def interrupt(self) -> None:
        """Stop starting trials and cancel those in flight."""
        self.stopping = True
        self._changed.set()
        for task in self._workers:
            task.cancel()

    async def run(self, progress: RunProgress, signals: bool = True) -> bool:
        """Run the pending trials; True when all ran, False when interrupted.

        When the awaiting task is cancelled, the trials in flight are cancelled too (the
        committed ones stay) and the cancellation goes on to the caller.
        """
        writer = self._writer = _Writer(self.store)
        loop = asyncio.get_running_loop()
        handled = []
        for signum in (signal.SIGINT, signal.SIGTERM) if signals else ():
            with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
                loop.add_signal_handler(signum, self.interrupt)
                handled.append(signum)
        if self.backend is not None:
            self._workers = [asyncio.create_task(self.backend.serve(self))]
        else:
            self._workers = [asyncio.create_task(self._worker()) for _ in range(self.concurrency)]

        async def refresh() -> None:
            while True:
                progress.refresh()
                await asyncio.sleep(0.1)

        refresher = asyncio.create_task(refresh())
        try:
            _, pending = await asyncio.wait(self._workers, return_when=asyncio.FIRST_EXCEPTION)
            if pending:  # a worker failed (the store cannot commit): stop the others
                self.interrupt()
                await asyncio.wait(pending)
        except asyncio.CancelledError:  # the caller cancelled the run: no worker outlives it
            self.interrupt()
            await asyncio.wait(self._workers)
            raise
        finally:
            refresher.cancel()
            for signum in handled:
                loop.remove_signal_handler(signum)
            await writer.close()
        # Every failed worker's exception is retrieved (several fail alike when the store does).
        errors = [task.exception() for task in self._workers if not task.cancelled()]
        for error in errors:
            if error is not None:
                raise error
        return not self.stopping


def job_order(
    cases: Sequence[_Case], targets: Sequence[str], done: Collection[tuple[str, str, int]] = ()
) -> Iterator[tuple[str, _Case, int]]:
    """The trials to run, trial-major (trial 0 of every target and case, then trial 1, ...), lazily.

    A generator, not a list: a suite of 100,000-trial cases starts its first trial at once and
    holds no job list in memory.  Trials in ``done`` ``(target, case id, trial)`` are left out.
    """
    active = list(cases)  # suite order, each round: the cases that still have a trial to run
    trial = 0
    while active:
        for name in targets:
            for case in active:
                if (name, case.spec.id, trial) not in done:
                    yield name, case, trial
        trial += 1
        active = [case for case in active if case.settings.trials > trial]


def _session_settings(suite: Suite, options: RunOptions, store: TrialStore) -> tuple[str, RunInfo, bool]:
    """The run id and its info: a new run (not stored yet), or the stored one when resuming."""
    if options.resume is None:
        names = list(options.targets) if options.targets is not None else list(suite.evaluated_targets)
        for name in names:
            suite.target(name)
        run_id = new_run_id()
        settings: dict[str, Any] = {
            "trials": options.trials,
            "targets": names,
            "concurrency": options.concurrency or suite.execution.concurrency,
            **selection_settings(suite, options.cases, options.categories),
        }
        if options.overrides.any:
            settings["overrides"] = options.overrides.to_settings()
        rule = _adaptive_rule(suite, options)
        if rule is not None:
            settings["adaptive"] = rule.to_dict()
        if options.comparison is not None:
            if rule is None:
                raise EvaluationError(
                    f"comparing with a baseline while running needs adaptive ({parameter('adaptive')})"
                )
            settings["adaptive"]["comparison"] = options.comparison.to_dict()
        out_dir = (options.out_dir or store.path.parent / "runs" / run_id).resolve()
        info = RunInfo(
            run_id,
            suite.name,
            str(suite.path) if suite.path else None,
            suite.digest,
            settings,
            str(out_dir),
            suite_text=suite.text,
        )
        return run_id, info, False
    info = store.run(options.resume)
    if info.suite_digest != suite.digest:
        hint = (
            f"; resume without the suite file to use the suite the run was started with: "
            f"{_resume_command(info.run_id, options.store)}"
            if info.suite_text is not None
            else ""
        )
        raise EvaluationError(
            f"resume: suite {str(suite.path)!r} has changed since run {info.run_id!r} started "
            f"(digest {suite.digest[:12]} now, {info.suite_digest[:12]} then); "
            f"a resumed run must use the same suite{hint}"
        )
    stored = info.settings
    asked = {
        "trials": options.trials,
        "targets": list(options.targets) if options.targets else None,
        "cases": list(options.cases) if options.cases else None,
        "categories": list(options.categories) if options.categories else None,
    }
    if options.overrides.any and options.overrides.to_settings() != stored.get("overrides", {}):
        raise EvaluationError(
            f"resume: overrides {options.overrides.to_settings()} differ from run {info.run_id!r}'s "
            f"{stored.get('overrides', {})}; a resumed run keeps its settings"
        )
    for key, value in asked.items():
        if value is not None and value != stored.get(key):
            raise EvaluationError(
                f"resume: {key}={value} differs from run {info.run_id!r}'s {key}={stored.get(key)}; "
                "a resumed run keeps its settings"
            )
    if (stored.get("adaptive") or {}).get("comparison"):
        raise EvaluationError(
            f"resume: run {info.run_id!r} was compared with a baseline while it ran; such a run cannot be "
            "resumed (its draws depend on the order trials finished): start a new run"
        )
    if options.out_dir is not None:
        info = replace(info, out_dir=str(options.out_dir))
    return info.run_id, info, True


def _adaptive_rule(suite: Suite, options: RunOptions) -> AdaptiveRule | None:
    """The run's stopping rule: the options where given, else the suite's ``execution`` keys."""
    execution = suite.execution
    return AdaptiveRule.choose(
        execution.adaptive if options.adaptive is None else options.adaptive,
        execution.sequential if options.sequential is None else options.sequential,
        execution.alpha if options.alpha is None else options.alpha,
    )


def _stored_rule(settings: dict[str, Any]) -> AdaptiveRule | None:
    stored = settings.get("adaptive")
    if not stored:
        return None
    return AdaptiveRule(bool(stored["sequential"]), stored["alpha"])


def _prepared_cases(suite: Suite, trials: int | None, judge: Any) -> list[_Case]:
    cases = []
    for spec in suite.cases:
        settings = suite.settings_for(spec)
        if trials is not None:
            settings = replace(settings, trials=trials)
        graders = tuple(build_grader(g, spec, suite.directory, judge) for g in suite.graders_for(spec))
        policy = RetryPolicy(settings.timeout_s, settings.retries, settings.backoff_s)
        cases.append(_Case(spec, settings, policy, graders))
    return cases


def run_suite(suite: Suite, options: RunOptions = RunOptions(), console: Console | None = None) -> RunReport:
    """Run (or resume) ``suite`` on an event loop of its own; see :func:`run_suite_async`.

    Writing the output files is :func:`trialscore.runner.outputs.write_outputs`'s job;
    the ``trialscore run`` command does both (and :func:`trialscore.run_suite` for scripts and
    notebooks).
    """
    return asyncio.run(run_suite_async(suite, options, console))


async def run_suite_async(
    suite: Suite, options: RunOptions = RunOptions(), console: Console | None = None
) -> RunReport:
    """Run (or resume) ``suite`` on the running event loop; return what happened, with the aggregated
    cases when it completed.

    The store's connection is opened, used and closed by this coroutine, on the loop's thread.

    Raises
    ------
    EvaluationError
        For a bad option (an unknown target, a resume that does not match), a
        missing API key or an unloadable callable.
    StoreError
        (an EvaluationError) When the store cannot be opened, read or written: the
        run stops at once, its committed trials stay, and the message says how to resume.
    """
    if options.trials is not None and not 1 <= options.trials <= MAX_TRIALS:
        raise EvaluationError(f"trials must satisfy 1 <= trials <= {MAX_TRIALS}; got {options.trials}")
    if options.concurrency is not None and not 1 <= options.concurrency <= MAX_CONCURRENCY:
        raise EvaluationError(
            f"concurrency must satisfy 1 <= concurrency <= {MAX_CONCURRENCY}; got {options.concurrency}"
        )
    console = console or Console(stderr=True)
    started = time.perf_counter()
    store = TrialStore(options.store)
    try:
        run_id, info, resumed = _session_settings(suite, options, store)
        # Everything that can fail before a trial runs is checked before the run is stored: no ghost runs.
        suite.check_environment(tuple(info.settings["targets"]))
        stored = store.records(run_id) if resumed else []
        concurrency = options.concurrency or int(info.settings["concurrency"])
        try:
            report = await _session(
                suite, info, store, stored, concurrency, options, console, create=not resumed
            )
        except StoreError as exc:
            raise _stopped(exc, run_id, options.store, store) from exc
    finally:
        store.close()
    return replace(report, elapsed_s=time.perf_counter() - started)


def _stopped(error: StoreError, run_id: str, path: Path, store: TrialStore) -> StoreError:
    """The one-line message of a run its store stopped: the cause, what is kept, how to resume."""
    try:
        kept = f"the {plural(store.count(run_id), 'trial')} committed before are kept"
    except StoreError:
        kept = "the trials committed before are kept"
    return StoreError(
        f"{error}; the run stopped; {kept}; once the store is fixed, resume with: "
        f"{_resume_command(run_id, path)}"
    )


async def _session(
    suite: Suite,
    info: RunInfo,
    store: TrialStore,
    stored: list[TrialRecord],
    concurrency: int,
    options: RunOptions,
    console: Console,
    *,
    create: bool,
) -> RunReport:
    suite = selected_suite(suite, info.settings.get("cases"), info.settings.get("categories"))
    suite = Overrides.from_settings(info.settings.get("overrides")).apply(suite)
    evaluated = list(info.settings["targets"])
    targets: dict[str, Target] = {}
    try:
        build_targets(suite, evaluated, concurrency, targets)
        execution = _Execution(
            suite,
            info.run_id,
            store,
            targets,
            evaluated,
            info.settings.get("trials"),
            stored,
            concurrency,
            console,
            _stored_rule(info.settings),
            options.comparison,
        )
        if options.distributed is not None:
            from trialscore.runner.distributed.backends import open_backend

            execution.backend = open_backend(options.distributed, execution, info, concurrency)
        if create:  # the targets and graders are built: only now is the run recorded
            store.create_run(info)
        store.start_session(info.run_id, execution.planned)
        completed = False
        try:
            with RunProgress(execution.counters, console, enabled=options.progress) as progress:
                completed = await execution.run(progress, options.signals)
        finally:
            with contextlib.suppress(StoreError):  # a store that failed keeps "running": read as interrupted
                store.finish_session(info.run_id, _end_status(execution, completed))
    finally:
        for target in targets.values():
            await target.aclose()
    report = RunReport(
        run_id=info.run_id,
        suite=suite,
        store=options.store,
        out_dir=Path(info.out_dir or "."),
        completed=completed,
        planned=execution.planned,
        committed=store.count(info.run_id),
        ran_now=execution.ran_now,
        skipped=execution.counters.skipped,
        warnings=tuple(_warnings(execution)),
        cost=_cost_summary(suite, execution),
        settings={
            **info.settings,
            **_trial_settings(execution, info.settings.get("trials")),
            "concurrency": concurrency,
            "seed": suite.execution.seed,
        },
        adaptive=_adaptive_summary(execution),
        tallies=execution.tallies,
    )
    if not completed:
        return report
    return replace(report, cases=tuple(_aggregated(execution, report.reader)))


def _end_status(execution: _Execution, completed: bool) -> str:
    """How a session ended: ``complete``, ``cost-limited`` (the limit kept trials from starting) or
    ``interrupted``."""
    if not completed:
        return "interrupted"
    return "cost-limited" if execution.cost_limited or execution.counters.skipped else "complete"


def build_targets(suite: Suite, evaluated: Sequence[str], concurrency: int, into: dict[str, Target]) -> None:
    """Build the ``evaluated`` targets and the judges their graders call into ``into`` (the caller
    closes what was built, also when a later one fails)."""
    judges = {
        g.target for case in suite.cases for g in suite.graders_for(case) if isinstance(g, LlmJudgeGraderSpec)
    }
    for name in dict.fromkeys([*evaluated, *sorted(judges)]):
        into[name] = build_target(suite.target(name), suite.directory, concurrency)


def _aggregated(execution: _Execution, reader: RunReader) -> list[CaseResult]:
    results = []
    for name in execution.evaluated:
        for case in execution.cases.values():
            result = execution.tallies.case_result(
                name,
                case.spec.id,
                case.settings,
                case.spec.category,
                (name, case.spec.id) in execution.cost_limited,
                reader,
            )
            if execution.scheduler is not None:
                result = stopped_result(result, execution.scheduler.outcome(name, case.spec.id))
            results.append(result)
    return results


def _adaptive_summary(execution: _Execution) -> dict[str, Any] | None:
    """Trials run, saved against the fixed design and wasted in flight, and the rule (None: a fixed run)."""
    scheduler, rule = execution.scheduler, execution.rule
    if scheduler is None or rule is None:
        return None
    summary = {
        **rule.to_dict(),
        "trials_planned": execution.planned,
        "trials_run": execution.tallies.stored,
        "trials_saved": scheduler.saved,
        "trials_wasted_in_flight": scheduler.wasted(),
    }
    if isinstance(scheduler, PairedScheduler):
        summary["rule"] = "sequential paired comparison with the baseline (betting confidence sequence)"
        summary["comparison"] = scheduler.report()
    return summary


def _warnings(execution: _Execution) -> list[str]:
    warnings = []
    if execution.limited and execution.unreported_cost:
        warnings.append(
            "cost limit could not be enforced: "
            f"{plural(execution.unreported_cost, 'trial')} reported no cost; "
            "trials went on"
        )
    if execution.cost_limited:
        warnings.append(
            f"cost limit reached: {plural(execution.counters.skipped, 'trial')} of "
            f"{plural(len(execution.cost_limited), 'case')} not started (marked cost_limited)"
        )
    return warnings


def _trial_settings(execution: _Execution, option: int | None) -> dict[str, Any]:
    """The effective trial count (``--trials``, else the suite's), where it came from, and the
    cases whose own count differs from it."""
    trials = option if option is not None else execution.suite.execution.trials.count
    differ = {
        case_id: case.settings.trials
        for case_id, case in execution.cases.items()
        if case.settings.trials != trials
    }
    return {
        "trials": trials,
        "trials_source": "option" if option is not None else "suite",
        "case_trials": differ,
    }


def _cost_summary(suite: Suite, execution: _Execution) -> dict[str, Any]:
    budget = execution.run_budget
    every_cost_unknown = (
        budget.unknown > 0 and budget.unknown == execution.counters.done - execution.counters.skipped
    )
    return {
        "spent_usd": None if every_cost_unknown else total_usd(budget.spent),
        "trials_with_unknown_cost": execution.run_budget.unknown,
        "run_limit_usd": suite.execution.cost_limit_usd,
        "case_limit_usd": suite.execution.trials.cost_limit_usd,
        "limit_enforced": None if not execution.limited else execution.unreported_cost == 0,
        "cost_limited_cases": sorted(f"{target}/{case}" for target, case in execution.cost_limited),
        "skipped_trials": execution.counters.skipped,
    }
