"""The exceptions trialscore raises, in one tree.

::

    TrialscoreError                 every error trialscore raises on purpose
    ├── EvaluationError             bad input (also a ValueError): the command line exits 2
    ├── StoreError                  the run store cannot be read or written: exits 74
    ├── OutputError                 an output file cannot be written (a full disk): exits 73
    ├── TargetError                 a target call failed: the trial is stored as errored
    │   └── TransientTargetError    ... and may succeed if retried (429, 5xx, timeouts)
    └── GraderError                 a grader could not grade: the trial is stored as errored

``except TrialscoreError`` catches them all; an errored trial is never a failed one.

>>> issubclass(EvaluationError, ValueError), issubclass(StoreError, ValueError)
(True, False)
"""

from __future__ import annotations

__all__ = [
    "EvaluationError",
    "GraderError",
    "OutputError",
    "StoreError",
    "TargetError",
    "TransientTargetError",
    "TrialscoreError",
]


class TrialscoreError(Exception):
    """Base of every exception trialscore raises on purpose."""


class EvaluationError(TrialscoreError, ValueError):
    """Bad input to an estimator, record or metric.

    The message always names the argument, the offending value and the rule it
    breaks, e.g. ``k must satisfy 1 <= k <= n; got k=7 with n=5 (item 3)``.
    It is a :class:`ValueError`, so ``except ValueError`` also catches it.

    >>> raise EvaluationError("k must be >= 1; got k=0")
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: k must be >= 1; got k=0
    """


class StoreError(TrialscoreError):
    """The run store cannot be read or written (a full disk, a read-only or vanished file).

    The run stops at once; what was committed before stays, so the run can be
    resumed once the cause is fixed.  The message names the store file and what failed.
    """


class OutputError(TrialscoreError):
    """An output file (a run's results, a report, JUnit XML, the step summary) cannot be written.

    A full disk, a missing or read-only folder.  Every output file is written whole or not at
    all (a temporary file beside it, renamed over it), so the previous file, or none, is left;
    never a cut one.  The message names the file and the reason.
    """


class TargetError(TrialscoreError):
    """A target call failed for good (bad request, crashed program): the trial errors, no retry."""


class TransientTargetError(TargetError):
    """A target call failed in a way worth retrying: timeout, HTTP 429 or 5xx, connection reset.

    ``retry_after`` (seconds) is the server's ``Retry-After`` hint, when it gave one.

    >>> TransientTargetError("HTTP 429", retry_after=2.0).retry_after
    2.0
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class GraderError(TrialscoreError):
    """A grader could not judge (a crashed grading program, an unreadable judge reply): the trial errors.

    An output that is merely wrong is not an error: the grader fails it with score 0.
    """
