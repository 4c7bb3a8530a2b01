"""The case drawer's data: what the case asked and expected, and its trials column by column, compact,
numbers formatted once per run.

The page embeds it as JSON (``data.trials`` and ``data.asked``, one entry per row of the cases
table) and ``report.js`` lays it out when a case is opened.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trialscore.report.calls import CallTable
from trialscore.report.outputs import TextTable, case_groups
from trialscore.report.runs import CaseTrials
from trialscore.results.trials import OUTPUT_TEXT_CHARS, Grader, TrialColumns

__all__ = ["Drawer", "asked"]


def _text(value: object) -> str | list[Any] | None:
    """A case's input or expected value as the drawer shows it: text (JSON when not a string), cut
    to :data:`~trialscore.results.trials.OUTPUT_TEXT_CHARS` as ``[text, full length]``."""
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= OUTPUT_TEXT_CHARS else [text[:OUTPUT_TEXT_CHARS], len(text)]


def asked(case: CaseTrials, cases: Mapping[str, tuple[object, object]]) -> list[Any] | None:
    """``[input, expected]`` of a case for the drawer (each as :func:`_text`), None when not known.

    >>> asked(CaseTrials("m", None, "add"), {"add": ({"a": 2}, 4)})
    ['{"a": 2}', '4']
    """
    found = cases.get(case.case_id)
    return None if found is None else [_text(found[0]), _text(found[1])]


def _short(value: float | None) -> float | int | None:
    """A number for the embedded JSON: 4 significant digits, whole numbers without '.0'."""
    if value is None or not math.isfinite(value):
        return None
    rounded = float(f"{value:.4g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


def _latency(value: float | None) -> float | None:
    """A latency for the embedded JSON: 3 significant digits."""
    return None if value is None or not math.isfinite(value) else float(f"{value:.3g}")


def _shorts(values: NDArray[np.float64], shown: Callable[[float | None], Any]) -> list[Any]:
    """``shown`` of every value (NaN: unknown), computed once per distinct value."""
    distinct, inverse = np.unique(values, return_inverse=True)
    each = [shown(None if math.isnan(value) else value) for value in distinct.tolist()]
    return [each[position] for position in inverse.ravel().tolist()]


def _column(values: list[Any]) -> list[Any] | None:
    """A column of the drawer's data; None when every entry is None (nothing to show)."""
    return None if values.count(None) == len(values) else values


class Drawer:
    """The drawer's data of each case, column by column (compact): see ``cases.js`` for the layout.

    ``[trial indices or None when 0..n-1, scores, costs, latencies, outputs, errors, graders,
    output groups, error groups, tool calls]``: an output or error is the index of its text in
    :attr:`texts` (each distinct text stored once, see :mod:`trialscore.report.outputs`); a grader is
    ``[name index, score, passed(, reason)]``, names indexed in order of first appearance
    (:attr:`graders`); the groups are ``[exact, loose]`` (:func:`~trialscore.report.outputs.case_groups`);
    the tool calls are :meth:`~trialscore.report.calls.CallTable.case`'s.  Every number is formatted
    once per run (:func:`_shorts`), not once per case.
    """

    def __init__(self, trials: TrialColumns | None) -> None:
        self.graders: dict[str, int] = {}
        self.texts = TextTable()
        self.calls = CallTable(self.texts)
        self.trials = trials
        if trials is None:
            return
        self.scores = _shorts(trials.score, _short)
        self.costs = _shorts(trials.cost, _short)
        self.latencies = _shorts(trials.latency, _latency)
        self.outputs = self.texts.add_all(trials.output, trials.output_chars)
        self.errors = self.texts.add_all(trials.error)
        self.tool_calls: list[object] = list(
            getattr(trials, "tool_calls", None) or [None] * len(trials.error)
        )
        entries: dict[tuple[Grader, ...], list[Any]] = {}
        self.grades = []
        for graders in trials.graders:
            row = entries.get(graders)
            if row is None:
                row = entries[graders] = [self._grade(grader) for grader in graders]
            self.grades.append(row)

    def _grade(self, grader: Grader) -> list[Any]:
        name, score, passed, reason = grader
        entry: list[Any] = [self.graders.setdefault(name, len(self.graders)), _short(score), passed]
        if reason is not None:
            entry.append(reason)
        return entry

    def case(self, case: CaseTrials) -> list[Any]:
        """The drawer's columns of one case."""
        trials = self.trials
        assert trials is not None and case.trials is trials
        start, stop = case.start, case.stop
        indices = trials.trial[start:stop]
        grades = self.grades[start:stop]
        outputs, errors = self.outputs[start:stop], self.errors[start:stop]
        return [
            None if indices == list(range(stop - start)) else indices,
            _column(self.scores[start:stop]),
            _column(self.costs[start:stop]),
            _column(self.latencies[start:stop]),
            _column(outputs),
            _column(errors),
            grades if any(grades) else None,
            case_groups(outputs, self.texts),
            case_groups(errors, self.texts),
            self.calls.case(self.tool_calls[start:stop]),
        ]
