"""The exceptions trialscore raises, in one tree.

::

    TrialscoreError                 every error trialscore raises on purpose
    ├── EvaluationError             bad input (also a ValueError): the command line exits 2
    ├── StoreError                  the run store cannot be read or written: exits 74
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
    """The run store cannot be read or written (a full disk, a locked or damaged database)."""


class TargetError(TrialscoreError):
    """A call to the system under test failed; the trial is recorded as errored, not failed."""


class TransientTargetError(TargetError):
    """A target failure that may pass if retried (rate limits, server errors, timeouts)."""


class GraderError(TrialscoreError):
    """A grader could not grade an output; the trial is recorded as errored, not failed."""
