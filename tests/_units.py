"""Test files that share one costly thing of their test process run in one process, one after another.

A local Ray or a headless Chromium costs seconds of CPU to start, and a little more each second it
runs.  The files that use one take its fixture (``local_ray`` in tests/_ray.py, ``browser`` in
tests/report/conftest.py): the first test that asks starts it, and it ends when the process moves
on to a test outside its files (:func:`leaves`), or when the session ends.  Importing inspect_ai,
or the reference libraries of the judge statistics (statsmodels, scikit-learn, ppi_py), costs about
2 CPU-seconds a process; the files that import them (:data:`LIBRARY_FILES`, tests/test_units.py
checks the list) share one import.  Under
``pytest -n auto --dist loadfile`` (pytest-xdist) every file goes whole to one test process; the
scheduler :class:`FilesTogether` sends the files of each set of :data:`UNITS` to one process as one
unit, so they share that process's Ray or Chromium, and keeps every other file a unit of its own,
as loadfile does.  A fixture asked for from a file outside its set fails (:func:`check_member`),
naming the set to add it to.
"""

from __future__ import annotations

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling

#: The test files that use Ray (paths from the repository's root, as in pytest's node ids).
RAY_FILES = frozenset(
    {
        "tests/results/test_results_engines.py",
        "tests/runner/test_runner_distributed_ray.py",
    }
)
#: The test files that drive the headless Chromium.
BROWSER_FILES = frozenset(
    {
        "tests/report/test_report_browser.py",
        "tests/report/test_report_browser_effort.py",
        "tests/report/test_report_browser_live.py",
        "tests/report/test_report_browser_panels.py",
        "tests/report/test_report_judges.py",
        "tests/report/test_report_label_page.py",
    }
)
#: The test files that import inspect_ai or a reference library of the judge statistics.
LIBRARY_FILES = frozenset(
    {
        "tests/cli/test_cli_agreement.py",
        "tests/results/test_results_formats.py",
        "tests/results/test_results_inspect.py",
        "tests/results/test_results_inspect_stream.py",
        "tests/results/test_results_trajectories.py",
        "tests/stats/test_stats_agreement.py",
        "tests/stats/test_stats_intervals.py",
        "tests/stats/test_stats_power.py",
        "tests/stats/test_stats_ppi.py",
        "tests/stats/test_stats_variance.py",
    }
)
#: The heavy libraries whose importers are :data:`LIBRARY_FILES`.
LIBRARIES = ("inspect_ai", "ppi_py", "sklearn", "statsmodels")
#: Each scheduling unit's name and its files.
UNITS = {
    "tests (the files that use Ray)": (RAY_FILES, "RAY_FILES"),
    "tests (the files that drive Chromium)": (BROWSER_FILES, "BROWSER_FILES"),
    "tests (the files that import inspect_ai or the reference libraries)": (LIBRARY_FILES, "LIBRARY_FILES"),
}


def file_of(item: pytest.Item) -> str:
    """The test's file, as in its node id."""
    return item.nodeid.split("::", 1)[0]


def check_member(item: pytest.Item, files: frozenset[str], what: str) -> None:
    """Fail a test that uses ``what`` from a file outside ``files`` (it would start one of its own)."""
    name = next(name for members, name in UNITS.values() if members is files)
    assert file_of(item) in files, f"{file_of(item)} uses {what}: add it to {name} in tests/_units.py"


def leaves(item: pytest.Item, nextitem: pytest.Item | None, files: frozenset[str]) -> bool:
    """Whether ``item`` is the last test of ``files`` before the process's next test (``None``: there
    is none) takes it elsewhere."""
    return file_of(item) in files and (nextitem is None or file_of(nextitem) not in files)


class FilesTogether(LoadFileScheduling):
    """pytest-xdist's loadfile scheduling, with the files of each set of :data:`UNITS` as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        scope = super()._split_scope(nodeid)
        return next((unit for unit, (files, _) in UNITS.items() if scope in files), scope)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    """Under ``--dist loadfile``, :class:`FilesTogether`; otherwise xdist's own choice."""
    if config.getvalue("dist") != "loadfile":
        return None
    return FilesTogether(config, log)
