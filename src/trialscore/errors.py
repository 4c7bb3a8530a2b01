"""The exceptions trialscore raises, in one tree.

::

    TrialscoreError                 every error trialscore raises on purpose
    ├── EvaluationError             bad input (also a ValueError): the command line exits 2
    │   ├── InsufficientDataError   valid data too small for a figure (too few items, fewer trials than k):
    │   │                           a grouping command marks that group "not tested" and goes on
    │   ├── MissingColumnError      an input lacks a column a role or a group key needs
    │   └── OptionError             a bad option of a run, named by its parameter (a command words its flag)
    ├── StoreError                  the run store cannot be read or written: exits 74
    ├── OutputError                 an output file cannot be written (a full disk): exits 73
    ├── TargetError                 a target call failed: the trial is stored as errored
    │   └── TransientTargetError    ... and may succeed if retried (429, 5xx, timeouts)
    └── GraderError                 a grader could not grade: the trial is stored as errored

``except TrialscoreError`` catches them all; an errored trial is never a failed one.

>>> issubclass(EvaluationError, ValueError), issubclass(StoreError, ValueError)
(True, False)

A message that names a parameter of the library (``skip_invalid``, ``by``, ``columns.item``)
marks it with :func:`parameter`: the message says the parameter's name, and a caller with its own
words for it (the command line's flags) rewords it with :meth:`Worded.words`, so the library never
names a command-line flag and the command line never parses a message:

>>> error = EvaluationError(f"t.csv line 3: bad row ({parameter('skip_invalid')} skips and counts them)")
>>> str(error)
't.csv line 3: bad row (skip_invalid skips and counts them)'
>>> error.args[0].words({"skip_invalid": "--skip-invalid"})
't.csv line 3: bad row (--skip-invalid skips and counts them)'
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "EvaluationError",
    "GraderError",
    "InsufficientDataError",
    "MissingColumnError",
    "OptionError",
    "OutputError",
    "StoreError",
    "TargetError",
    "TransientTargetError",
    "TrialscoreError",
    "Worded",
    "parameter",
    "template",
    "worded",
]

#: Brackets a parameter's name in a message template (a control character no message holds).
_MARK = "\x1f"
_PARAMETER = re.compile(f"{_MARK}([^{_MARK}]+){_MARK}")


def parameter(name: str) -> str:
    """``name``, a library parameter (``skip_invalid``, ``columns.item``), marked in a message so that a
    caller can word it its own way (see :class:`Worded`)."""
    return f"{_MARK}{name}{_MARK}"


class Worded(str):
    """A message naming library parameters: its text names each by its name; :meth:`words` by the
    caller's words for it.  ``template`` keeps the marks of :func:`parameter`.

    >>> note = worded(f"scored per scorer; {parameter('scorer')} NAME picks one")
    >>> note, note.words({"scorer": "--scorer"}), note.parameters
    ('scored per scorer; scorer NAME picks one', 'scored per scorer; --scorer NAME picks one', ('scorer',))
    """

    template: str

    def __new__(cls, template: str) -> Worded:
        text = super().__new__(cls, _PARAMETER.sub(lambda match: match.group(1), template))
        text.template = template
        return text

    def __reduce__(self) -> tuple[type[Worded], tuple[str]]:
        return (Worded, (self.template,))

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameters the message names, in order."""
        return tuple(_PARAMETER.findall(self.template))

    def words(self, names: Mapping[str, str]) -> str:
        """The message with each parameter in ``names`` said as ``names`` says it."""
        return _PARAMETER.sub(lambda match: names.get(match.group(1), match.group(1)), self.template)


def worded(text: str) -> str:
    """``text`` as a :class:`Worded` message when it marks a parameter, else as it is."""
    return Worded(text) if _MARK in text else text


def template(text: object) -> str:
    """The template of a message (its parameters marked), to build a longer message from it: an
    error's or a :class:`Worded` text's, or any other text as it is.

    >>> template(EvaluationError(f"bad ({parameter('by')})")) == f"bad ({parameter('by')})"
    True
    """
    if isinstance(text, BaseException):
        text = text.args[0] if len(text.args) == 1 else str(text)
    return text.template if isinstance(text, Worded) else str(text)


class TrialscoreError(Exception):
    """Base of every exception trialscore raises on purpose; a message naming a :func:`parameter` is
    kept as a :class:`Worded` text."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(worded(arg) if isinstance(arg, str) else arg for arg in args))


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


class InsufficientDataError(EvaluationError):
    """Valid data that hold too little for the figure asked: fewer items than a test needs, fewer
    trials of an item than ``k``, a group whose every trial errored.

    The data are not wrong, so a command that works per group reports such a group as not tested
    (with this message as the reason) and judges the others.  ``unit`` says what was short
    (``"items"``, ``"trials"``: the fewest trials of an item, ``"graded trials"``), ``needed`` and
    ``got`` how many, and ``item`` the id of an item that fell short, where the raiser knows.

    >>> error = InsufficientDataError("need 2 shared items; got 1", unit="items", needed=2, got=1)
    >>> isinstance(error, EvaluationError), error.unit, error.needed, error.got
    (True, 'items', 2, 1)
    """

    def __init__(
        self,
        message: str,
        *,
        unit: str | None = None,
        needed: int | None = None,
        got: int | None = None,
        item: object = None,
    ) -> None:
        super().__init__(message)
        self.unit = unit
        self.needed = needed
        self.got = got
        self.item = item


class MissingColumnError(EvaluationError):
    """An input lacks the column a role (``"item"``, ``"passed"``, ...) or a group key (``"group"``) needs.

    ``column`` is the name looked for (None when no default name of the role was found) and
    ``available`` the input's columns, so a caller can word the fix with its own options.

    >>> error = MissingColumnError("no column 'target'", column="target", role="group", available=("id",))
    >>> error.column, error.role, error.available
    ('target', 'group', ('id',))
    """

    def __init__(
        self, message: str, *, column: str | None, role: str, available: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.column = column
        self.role = role
        self.available = available


class OptionError(EvaluationError):
    """A bad option of a run (:class:`~trialscore.runner.options.RunOptions`): ``option`` is the
    parameter's name, which the message starts with, so a command line can word it with its flag.

    >>> error = OptionError("margin must satisfy 0 <= margin < 1; got 1.5", option="margin")
    >>> error.option, error.worded("--margin")
    ('margin', '--margin must satisfy 0 <= margin < 1; got 1.5')
    """

    def __init__(self, message: str, *, option: str) -> None:
        super().__init__(message)
        self.option = option

    def worded(self, flag: str) -> str:
        """The message with the parameter it starts with named as ``flag``."""
        message = str(self)
        return flag + message[len(self.option) :] if message.startswith(self.option) else message


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
