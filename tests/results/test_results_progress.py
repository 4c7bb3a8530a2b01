"""The progress bar of a reading: drawn on standard error once a reading the command line watches
lasts past the delay and standard error is a terminal; nothing otherwise (rich's ``TTY_COMPATIBLE``
says whether standard error is a terminal)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from trialscore.results import progress

LABEL = "reading trials.parquet"
#: A bar that has not appeared by then is a hang.
HUNG_SECONDS = 30.0


class Stderr:
    """Standard error as captured by pytest, gathered as it is read."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys, self.text = capsys, ""

    def getvalue(self) -> str:
        self.text += self.capsys.readouterr().err
        return self.text


@pytest.fixture
def stderr(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Stderr:
    """Standard error, captured; the delay before a bar shortened to 50 ms."""
    monkeypatch.setattr(progress, "DELAY", 0.05)
    return Stderr(capsys)


def _watched_until(done: Callable[[progress.Watch], bool], what: str) -> None:
    """A reading the command line watches, half done, until ``done(watch)``; one that never gets
    there within :data:`HUNG_SECONDS` fails as a hang."""
    with progress.shown(), progress.watching(None, LABEL) as watch:
        watch.update(0.5)
        deadline = time.monotonic() + HUNG_SECONDS
        while not done(watch):
            assert time.monotonic() < deadline, f"hung: {what} within {HUNG_SECONDS} s"
            time.sleep(0.01)


def test_a_watched_reading_past_the_delay_draws_its_bar_on_a_terminal(
    stderr: Stderr, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    _watched_until(lambda _: "50%" in stderr.getvalue(), "no bar at 50%")
    assert LABEL in stderr.getvalue()


def test_nothing_is_drawn_off_a_terminal_before_the_delay_or_unasked(
    stderr: Stderr, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    _watched_until(  # the watcher ends once it finds standard error no terminal
        lambda watch: watch._thread is not None and not watch._thread.is_alive(), "the watcher still running"
    )
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setattr(progress, "DELAY", 3600.0)
    with progress.shown(), progress.watching(None, LABEL):
        pass  # over long before the delay
    with progress.watching(None, LABEL) as watch:  # the library's own reading, not the command line's
        assert watch._thread is None
    assert stderr.getvalue() == ""
