"""The progress bar of a reading: drawn on standard error once a reading the command line watches
lasts past the delay and standard error is a terminal; nothing otherwise (rich's ``TTY_COMPATIBLE``
says whether standard error is a terminal)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.waiting import until
from trialscore.results import progress

LABEL = "reading trials.parquet"
#: A wait (for the bar, or for the watcher to end) longer than this fails as a hang.
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


@contextlib.contextmanager
def watched_half_way() -> Iterator[progress.Watch]:
    """A reading the command line watches (its bar shown), half done."""
    with progress.shown(), progress.watching(None, LABEL) as watch:
        watch.update(0.5)
        yield watch


def test_a_watched_reading_past_the_delay_draws_its_bar_on_a_terminal(
    stderr: Stderr, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    with watched_half_way():
        until(lambda: "50%" in stderr.getvalue(), "a bar at 50%", HUNG_SECONDS)
    assert LABEL in stderr.getvalue()


def test_nothing_is_drawn_off_a_terminal_before_the_delay_or_unasked(
    stderr: Stderr, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    with watched_half_way() as watch:
        thread = watch._thread
        assert thread is not None
        until(lambda: not thread.is_alive(), "the watcher's end off a terminal", HUNG_SECONDS)
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setattr(progress, "DELAY", 3600.0)
    with progress.shown(), progress.watching(None, LABEL):
        pass  # over long before the delay
    with progress.watching(None, LABEL) as watch:  # the library's own reading, not the command line's
        assert watch._thread is None
    assert stderr.getvalue() == ""
