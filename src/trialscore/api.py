"""Running a suite from Python: scripts, notebooks (Jupyter) and async code.

:func:`run_suite` does what ``trialscore run`` does, with its options named as the command's
flags (``trials=``, ``target=``, ``adaptive=``, ``baseline=``, ``workers=``, ``max_cost=``, ...:
:class:`~trialscore.runner.options.RunFlags`) or given whole as ``options=RunOptions(...)``
(:class:`~trialscore.runner.options.RunOptions`, the one options object the command builds too),
and returns the
:class:`~trialscore.runner.run_report.RunReport`: its ``cases``, ``trials``, ``summary``
and ``to_pandas()``.  A completed run's files (``trials.jsonl``, ``cases.jsonl``,
``summary.json``) are written to ``out`` (default: beside the store) unless ``write=False``.

Where it runs:

* in a plain script (no event loop running), on an event loop of its own, with Ctrl-C and
  SIGTERM stopping the run gracefully (then ``report.completed`` is False and
  ``report.resume_command`` finishes it);
* inside a running event loop (a Jupyter cell, an async web handler calling sync code), on an
  event loop of its own in a worker thread, the caller's thread waiting for it; a
  ``KeyboardInterrupt`` (the notebook's stop button) cancels the run's trials in flight, keeps
  the committed ones (resume them with ``resume=``) and is raised again;
* :func:`run_suite_async` runs on the caller's loop (``await trialscore.run_suite_async(...)``),
  leaving its signal handlers alone: cancelling the awaiting task stops the run the same way.

>>> import tempfile, pathlib, trialscore
>>> where = pathlib.Path(tempfile.mkdtemp())
>>> report = trialscore.run_suite(demo=True, trials=2, category="arithmetic", store=where / "s.sqlite",
...                               out=where / "out")
>>> report.completed, len(report.cases), len(report.trials), sorted(p.name for p in (where / "out").iterdir())
(True, 4, 8, ['cases.jsonl', 'summary.json', 'trials.jsonl'])
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from trialscore.errors import EvaluationError
from trialscore.runner import orchestrator
from trialscore.runner.options import RunFlags, RunOptions
from trialscore.runner.run_report import RunReport
from trialscore.runner.suite import Suite

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["RunOptions", "RunReport", "run_suite", "run_suite_async"]

SuiteLike = Suite | str | os.PathLike[str] | Mapping[str, Any]


def _suite(suite: SuiteLike | None, demo: bool, options: RunOptions) -> Suite:
    from trialscore.examples import demo_suite_path
    from trialscore.runner.suite import load_suite

    if demo and suite is not None:
        raise EvaluationError("give either a suite or demo=True, not both")
    if demo:
        return load_suite(demo_suite_path(), targets=options.targets)
    if isinstance(suite, Suite):
        return suite
    if isinstance(suite, Mapping):
        return Suite.from_mapping(suite)
    if suite is None:
        if options.resume is None:
            raise EvaluationError("a suite (a Suite, a mapping or a file path) is required, or resume=RUN_ID")
        return orchestrator.stored_suite(options.resume, options.store, options.targets)
    return load_suite(Path(suite), targets=options.targets)


def _prepare(
    suite: SuiteLike | None, demo: bool, options: RunOptions | None, flags: RunFlags
) -> tuple[Suite, RunOptions]:
    """The suite and the options of a call: ``options``, or the keyword options mapped onto them (with
    the progress bar off unless asked)."""
    if options is not None and flags:
        raise EvaluationError(
            f"give options=RunOptions(...) or keyword options, not both; got options and {', '.join(flags)}"
        )
    if options is None:
        options = RunOptions.of(**(RunFlags(progress=False) | flags))
    return _suite(suite, demo, options), options


def _finish(report: RunReport, write: bool) -> RunReport:
    if write and report.completed:
        from trialscore.runner.outputs import write_outputs

        write_outputs(report)
    return report


def _in_own_loop(suite: Suite, options: RunOptions, console: Console | None) -> RunReport:
    """Run on a new event loop in a worker thread while the caller's loop (its thread) waits."""
    loop = asyncio.new_event_loop()
    task: list[asyncio.Task[RunReport]] = []

    async def main() -> RunReport:
        task.append(asyncio.current_task())  # type: ignore[arg-type]
        return await orchestrator.execute_suite_async(suite, replace(options, signals=False), console)

    def work() -> RunReport:
        try:
            return loop.run_until_complete(main())
        finally:
            loop.close()

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="trialscore-run") as pool:
        future = pool.submit(work)
        try:
            return future.result()
        except KeyboardInterrupt:
            if task:  # stop the trials in flight; the committed ones stay for resume=
                loop.call_soon_threadsafe(task[0].cancel)
            concurrent.futures.wait([future])
            raise


def run_suite(
    suite: SuiteLike | None = None,
    options: RunOptions | None = None,
    *,
    demo: bool = False,
    write: bool = True,
    console: Console | None = None,
    **flags: Unpack[RunFlags],
) -> RunReport:
    """Run (or resume) a suite and return its :class:`RunReport`; works inside a running event loop.

    Parameters
    ----------
    suite
        A :class:`~trialscore.runner.suite.Suite`, a suite mapping, or the path of a suite file
        (None with ``resume``: the suite the store kept; or ``demo=True``: the bundled demo).
    options
        Every option of the run as a :class:`~trialscore.runner.options.RunOptions` (its
        ``progress`` is then as given), or instead:
    **flags
        The options as ``trialscore run``'s flags name them (:class:`~trialscore.runner.options.
        RunFlags`): ``trials``, ``target``, ``case``, ``category`` (a string or a list for the last
        three), ``concurrency``, ``out``, ``store``, ``resume``, ``progress`` (off by default here:
        notebooks render it poorly), ``adaptive``, ``sequential``, ``alpha``, ``baseline``,
        ``margin``, ``allow_partial``, ``workers``, ``backend``, ``address``, ``seed``, ``limit``,
        ``max_cost``, ``timeout``, ``retries``.
    demo
        Run the bundled demo suite against the simulated agent.
    write
        Write the completed run's files to ``out`` (else the report only).
    console
        Where warnings go (default: standard error).

    Returns
    -------
    RunReport
        ``completed`` is False when the run was interrupted (no files are written then;
        ``report.resume_command`` says how to finish it).

    Raises
    ------
    EvaluationError
        For a bad suite or option (one line naming the file, field, value and rule; a bad option is
        an :class:`~trialscore.errors.OptionError` naming its parameter).
    StoreError
        When the run store cannot be written or read.
    """
    loaded, options = _prepare(suite, demo, options, flags)
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop running: a plain script
        return _finish(orchestrator.execute_suite(loaded, options, console), write)
    return _finish(_in_own_loop(loaded, options, console), write)


async def run_suite_async(
    suite: SuiteLike | None = None,
    options: RunOptions | None = None,
    *,
    demo: bool = False,
    write: bool = True,
    console: Console | None = None,
    **flags: Unpack[RunFlags],
) -> RunReport:
    """:func:`run_suite` as a coroutine on the running loop: ``report = await run_suite_async(...)``.

    The loop's signal handlers are left alone; cancelling the awaiting task cancels the trials in
    flight (the committed ones stay: finish the run with ``resume=report's run id``).
    """
    loaded, options = _prepare(suite, demo, options, flags)
    report = await orchestrator.execute_suite_async(loaded, replace(options, signals=False), console)
    return _finish(report, write)
