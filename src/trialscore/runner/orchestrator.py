"""Running a suite: a session of the run, from its settings to its report.

:func:`execute_suite_async` opens the store, settles the run's settings (a new run, or the stored one
when resuming: :func:`stored_suite`), builds the targets, and joins the runner's rooms into a
:class:`~trialscore.runner.session.Session`:

* :mod:`~trialscore.runner.scheduling`: what runs next (trial-major order, the fixed, adaptive or
  paired design, the run's and each case's budget);
* :mod:`~trialscore.runner.execution`: running a unit (the trial call with timeout and retries,
  the graders, secrets redacted);
* :mod:`~trialscore.runner.store`: the store and its single writer (a trial is finished once
  committed);
* :mod:`~trialscore.runner.loop` runs the session's units in process, or a backend of
  :mod:`~trialscore.runner.distributed` on worker processes or Ray actors;
* :class:`~trialscore.runner.run_report.RunReport` says what the session did (``summary.json``,
  the tables, the files: :mod:`~trialscore.runner.summary`, :mod:`~trialscore.runner.outputs`).

Ctrl-C or SIGTERM stops the run gracefully: the committed trials stay, and the report says how to
resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from trialscore._words import plural
from trialscore.errors import EvaluationError, OptionError
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import AdaptiveRule
from trialscore.runner.baseline import compare_while_running
from trialscore.runner.execution import Execution, build_targets
from trialscore.runner.loop import serve
from trialscore.runner.options import RunOptions
from trialscore.runner.overrides import Overrides
from trialscore.runner.progress import RunProgress
from trialscore.runner.run_report import RunReport, resume_command
from trialscore.runner.scheduling import Schedule
from trialscore.runner.selection import selected_suite, selection_settings
from trialscore.runner.session import Backend, Session
from trialscore.runner.store import RunInfo, StoreError, TrialStore
from trialscore.runner.suite import Suite, suite_from_text
from trialscore.runner.targets import Target

__all__ = ["execute_suite", "execute_suite_async", "new_run_id", "stored_suite"]


def new_run_id() -> str:
    """A fresh run id: UTC time plus 6 random hex digits, e.g. ``20250101-120000-a1b2c3``."""
    return f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


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
        rule = options.rule(suite)
        if rule is not None:
            settings["adaptive"] = rule.to_dict()
        if options.comparison is not None:
            if rule is None:
                raise OptionError(
                    "comparison with a baseline while running needs adaptive=True", option="comparison"
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
            f"{resume_command(info.run_id, options.store)}"
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


def _stored_rule(settings: dict[str, Any]) -> AdaptiveRule | None:
    stored = settings.get("adaptive")
    if not stored:
        return None
    return AdaptiveRule(bool(stored["sequential"]), stored["alpha"])


def execute_suite(
    suite: Suite, options: RunOptions | None = None, console: Console | None = None
) -> RunReport:
    """Run (or resume) ``suite`` on an event loop of its own; see :func:`execute_suite_async`.

    The runner's own entry: :func:`trialscore.run_suite` (the library's) builds the options and
    writes the files around it.

    Writing the output files is :func:`trialscore.runner.outputs.write_outputs`'s job;
    the ``trialscore run`` command does both (and :func:`trialscore.run_suite` for scripts and
    notebooks).
    """
    return asyncio.run(execute_suite_async(suite, options, console))


async def execute_suite_async(
    suite: Suite, options: RunOptions | None = None, console: Console | None = None
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
    options = compare_while_running(suite, options) if options is not None else RunOptions()
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
        f"{resume_command(run_id, path)}"
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

    def unknown_cost(target: str) -> None:
        console.print(
            f"[yellow]warning:[/yellow] target {escape(repr(target))} reports no cost; "
            "cost_limit_usd cannot be enforced, trials go on"
        )

    try:
        build_targets(suite, evaluated, concurrency, targets)
        execution = Execution(suite, info.run_id, targets, info.settings.get("trials"))
        schedule = Schedule(
            {case_id: case.settings for case_id, case in execution.cases.items()},
            evaluated,
            limit=suite.execution.cost_limit_usd,
            seed=suite.execution.seed,
            stored=stored,
            rule=_stored_rule(info.settings),
            comparison=options.comparison,
            on_unknown_cost=unknown_cost,
        )
        session = Session(execution, schedule, store, stored, options.observer)
        backend: Backend | None = None
        if options.distributed is not None:
            from trialscore.runner.distributed.backends import open_backend

            backend = open_backend(options.distributed, session, info, concurrency)
        if create:  # the targets and graders are built: only now is the run recorded
            store.create_run(info)
        store.start_session(info.run_id, schedule.planned)
        completed = False
        observer = options.observer
        try:
            if observer is not None:
                observer.started(info.run_id, suite, schedule.planned, stored)
            with RunProgress(schedule.counters, console, enabled=options.progress) as progress:
                async with session.committing():
                    completed = await serve(
                        session, progress, concurrency=concurrency, backend=backend, signals=options.signals
                    )
        finally:
            with contextlib.suppress(StoreError):  # a store that failed keeps "running": read as interrupted
                store.finish_session(info.run_id, schedule.end_status(completed))
            if observer is not None:
                observer.ended(completed)
    finally:
        for target in targets.values():
            await target.aclose()
    report = RunReport(
        run_id=info.run_id,
        suite=suite,
        store=options.store,
        out_dir=Path(info.out_dir or "."),
        completed=completed,
        planned=schedule.planned,
        committed=store.count(info.run_id),
        ran_now=session.ran_now,
        skipped=schedule.counters.skipped,
        warnings=tuple(schedule.warnings()),
        cost=schedule.cost_summary(suite.execution.trials.cost_limit_usd),
        settings={
            **info.settings,
            **_trial_settings(execution, info.settings.get("trials")),
            "concurrency": concurrency,
            "seed": suite.execution.seed,
        },
        adaptive=schedule.adaptive_summary(session.tallies.stored),
        tallies=session.tallies,
    )
    if not completed:
        return report
    return replace(report, cases=tuple(session.case_results(report.reader)))


def _trial_settings(execution: Execution, option: int | None) -> dict[str, Any]:
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
