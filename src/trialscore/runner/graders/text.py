"""Graders that compare the output text: ``exact``, ``contains``, ``regex`` and ``numeric``.

Each grader type is its spec (the suite's fields) and its grader, registered by type name.  The
``regex`` grader's match runs off the event loop with a time limit (:class:`RegexGrader`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import StrictBool, field_validator

from trialscore._validate import describe_data
from trialscore.results.records import GraderResult
from trialscore.runner.graders.base import Grade, GraderError, binary
from trialscore.runner.offloop import in_daemon_thread, within
from trialscore.runner.registry import (
    GraderSite,
    GraderSpecBase,
    NonNegative,
    Positive,
    Problem,
    register_grader,
)
from trialscore.runner.targets.base import TrialRequest

__all__ = [
    "ContainsGrader",
    "ContainsGraderSpec",
    "ExactGrader",
    "ExactGraderSpec",
    "NumericGrader",
    "NumericGraderSpec",
    "RegexGrader",
    "RegexGraderSpec",
    "as_text",
    "checked_pattern",
    "last_number",
]


class _ExpectedSpec(GraderSpecBase):
    """A grader comparing the output to ``value``, else to the case's ``expected``: one must be set."""

    value: Any = None

    def problems(self, site: GraderSite) -> Iterator[Problem]:
        """``value`` or the case's ``expected`` must be set."""
        if self.value is None and site.case_expected is None:
            yield Problem(
                (*site.loc, "value"),
                f"a {getattr(self, 'type', '')} grader needs value or expected (case {site.case_id!r})",
            )


class ExactGraderSpec(_ExpectedSpec):
    """Output equals ``value`` (default: the case's ``expected``)."""

    type: Literal["exact"]
    case_sensitive: StrictBool = True
    strip: StrictBool = True


class ContainsGraderSpec(_ExpectedSpec):
    """Output contains ``value`` (a string, or every string of a list; default ``expected``)."""

    type: Literal["contains"]
    value: str | tuple[str, ...] | None = None
    case_sensitive: StrictBool = True


class RegexGraderSpec(GraderSpecBase):
    """``pattern`` matches somewhere in the output (``re.search`` syntax), within ``timeout_s``."""

    type: Literal["regex"]
    pattern: str
    ignore_case: StrictBool = False
    timeout_s: Positive = 10.0

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        return checked_pattern(pattern)


def checked_pattern(pattern: str) -> str:
    """``pattern`` if both ``re`` and ``regex`` (``VERSION0``) compile it, else a ValueError saying why.

    >>> checked_pattern("(a")
    Traceback (most recent call last):
    ...
    ValueError: not a valid regular expression (missing ), unterminated subpattern at position 0)
    """
    import regex  # type: ignore[import-untyped]

    try:
        re.compile(pattern)
        regex.compile(pattern, regex.VERSION0)
    except (re.error, regex.error) as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from exc
    return pattern


class NumericGraderSpec(_ExpectedSpec):
    """The number in the output is within ``tolerance`` (absolute) or ``relative_tolerance`` of ``value``."""

    type: Literal["numeric"]
    value: float | None = None
    tolerance: NonNegative = 0.0
    relative_tolerance: NonNegative = 0.0

    def problems(self, site: GraderSite) -> Iterator[Problem]:
        """``value`` or ``expected`` must be set, and ``expected`` (when it is used) must be a number."""
        yield from super().problems(site)
        if self.value is None and site.case_expected is not None:
            try:
                float(site.case_expected)
            except (TypeError, ValueError):
                yield Problem(
                    (*site.case_loc, "expected"),
                    f"a numeric grader needs a number; got {describe_data(site.case_expected)} "
                    f"(case {site.case_id!r})",
                )


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def as_text(value: object) -> str:
    """An expected value as text: strings as they are, numbers and booleans as YAML wrote them, else JSON.

    >>> as_text("4"), as_text(4), as_text(2.5), as_text({"a": 1})
    ('4', '4', '2.5', '{"a": 1}')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value)


def last_number(text: str) -> float | None:
    """The whole text as a number if it is one, else the last number in it (final answers come last).

    >>> last_number(" 42 "), last_number("so the answer is 3.5."), last_number("no digits")
    (42.0, 3.5, None)
    """
    try:
        value = float(text.strip().replace(",", ""))
    except ValueError:
        found = _NUMBER.findall(text.replace(",", ""))
        return float(found[-1]) if found else None
    return value if math.isfinite(value) else None


class ExactGrader:
    """Passes when the output equals the expected text (optionally ignoring case and outer whitespace)."""

    def __init__(self, spec: ExactGraderSpec, expected: object) -> None:
        self._spec = spec
        self._label = spec.label
        text = as_text(spec.value if spec.value is not None else expected)
        self._expected = self._normal(text)

    def _normal(self, text: str) -> str:
        text = text.strip() if self._spec.strip else text
        return text if self._spec.case_sensitive else text.casefold()

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output."""
        return binary(self._label, self._spec.weight, self._normal(output) == self._expected)


class ContainsGrader:
    """Score = share of the expected strings found in the output; passes when all are found."""

    def __init__(self, spec: ContainsGraderSpec, expected: object) -> None:
        self._spec = spec
        value = spec.value if spec.value is not None else expected
        needles = list(value) if isinstance(value, list | tuple) else [value]
        self._needles = [self._normal(as_text(needle)) for needle in needles]

    def _normal(self, text: str) -> str:
        return text if self._spec.case_sensitive else text.casefold()

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output."""
        text = self._normal(output)
        found = sum(needle in text for needle in self._needles)
        score = found / len(self._needles)
        return Grade(
            GraderResult(
                name=self._spec.label,
                score=score,
                passed=found == len(self._needles),
                weight=self._spec.weight,
            )
        )


class RegexGrader:
    """Passes when the pattern matches somewhere in the output; errors the trial past ``timeout_s``.

    A pattern such as ``(a+)+$`` backtracks for ages on a long ``aaa...b`` output.  The match
    runs in a daemon thread with the ``regex`` module (``re``'s syntax, ``VERSION0``), which lets
    go of the GIL while it matches and gives up at ``timeout_s``; so the event loop keeps running
    other trials and handling Ctrl-C and SIGTERM, and a catastrophic pattern errors the trial
    (``regex grader 'regex': no match result within timeout_s=10``) instead of hanging the run.
    """

    def __init__(self, spec: RegexGraderSpec) -> None:
        import regex

        self._spec = spec
        flags = regex.VERSION0 | (regex.IGNORECASE if spec.ignore_case else 0)
        self._pattern = regex.compile(spec.pattern, flags)

    def _search(self, output: str) -> bool:
        return self._pattern.search(output, timeout=self._spec.timeout_s, concurrent=True) is not None

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output."""
        spec = self._spec
        try:
            found = await within(in_daemon_thread(self._search, output), spec.timeout_s)
        except TimeoutError as exc:
            raise GraderError(
                f"regex grader {spec.label!r}: no match result within timeout_s={spec.timeout_s:g} "
                "(a pattern that backtracks without end?)"
            ) from exc
        return binary(spec.label, spec.weight, found)


class NumericGrader:
    """Passes when the output's number is within ``max(tolerance, relative_tolerance * |expected|)``."""

    def __init__(self, spec: NumericGraderSpec, expected: object) -> None:
        self._spec = spec
        self._expected = float(spec.value if spec.value is not None else expected)  # type: ignore[arg-type]
        self._allowed = max(spec.tolerance, spec.relative_tolerance * abs(self._expected))

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output; an output with no number fails."""
        value = last_number(output)
        passed = value is not None and abs(value - self._expected) <= self._allowed
        return binary(self._spec.label, self._spec.weight, passed)


register_grader(ExactGraderSpec, lambda spec, context: ExactGrader(spec, context.case.expected))
register_grader(ContainsGraderSpec, lambda spec, context: ContainsGrader(spec, context.case.expected))
register_grader(RegexGraderSpec, lambda spec, context: RegexGrader(spec))
register_grader(NumericGraderSpec, lambda spec, context: NumericGrader(spec, context.case.expected))
