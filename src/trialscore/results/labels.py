"""Human labels of judged trials: the file a reviewer writes (or the labelling page downloads).

A labels file is CSV with a header, or JSON Lines, one label a row: ``case_id``, optional ``trial``
and ``target``, and ``passed`` (``true``/``false``, ``1``/``0`` or ``pass``/``fail``).  A row
without a trial labels every trial of the case; a row without a target labels the case for every
target, which is allowed only when the trials hold one target (outputs of two targets differ).
Other columns are kept out of it (a reviewer's notes).  The labelled cases must be a random
sample of the cases (the labelling page draws one, seeded): prediction-powered intervals rest on it.

Each bad row is an error naming the file, the line, the field, the value and the rule.

:func:`label_banks` lays the labels beside the judge's verdicts of one target: two items x
trials arrays, the judge's 0/1 verdict (NaN where a trial errored or an item has fewer trials)
and the human label (NaN where unlabelled), the arrays
:func:`~trialscore.stats.ppi_interval` takes.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.csv"
>>> _ = path.write_text("case_id,trial,passed\\nq1,0,true\\nq1,1,0\\nq2,,pass\\n")
>>> labels = read_labels(path)
>>> [(l.case_id, l.trial, l.passed) for l in labels.labels]
[('q1', 0, True), ('q1', 1, False), ('q2', None, True)]
>>> _ = path.write_text("case_id,passed\\nq1,maybe\\n")
>>> read_labels(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: ...labels.csv line 2: field 'passed' must be true or false ...; got 'maybe'
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from trialscore._words import plural
from trialscore.errors import EvaluationError

__all__ = ["HumanLabels", "Label", "LabelledBanks", "label_banks", "read_labels", "unknown_cases"]

FloatArray = NDArray[np.float64]

_TRUE = {"true", "1", "pass", "passed", "yes"}
_FALSE = {"false", "0", "fail", "failed", "no"}
_JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class Label:
    """One row of a labels file: ``trial`` None labels every trial, ``target`` None every target."""

    line: int
    case_id: str
    trial: int | None
    target: str | None
    passed: bool


@dataclass(frozen=True)
class HumanLabels:
    """The labels of one file, in file order (``path`` names it in messages)."""

    path: str
    labels: tuple[Label, ...]

    @property
    def targets(self) -> frozenset[str | None]:
        """The targets the labels name (None: a label for every target)."""
        return frozenset(label.target for label in self.labels)


def _text(value: object) -> str | None:
    """A cell as text (None when empty); JSON numbers as their text."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None


def _label(row: Mapping[str, object], where: str, line: int) -> Label:
    def bad(name: str, rule: str) -> EvaluationError:
        return EvaluationError(f"{where}: field {name!r} must be {rule}; got {row.get(name)!r}")

    case_id = _text(row.get("case_id"))
    if case_id is None:
        raise bad("case_id", "a case id (not empty)")
    trial_text = _text(row.get("trial"))
    trial = None
    if trial_text is not None:
        if not (trial_text.isdigit() and trial_text.isascii()):
            raise bad("trial", "a trial index (an integer >= 0), or empty for every trial")
        trial = int(trial_text)
    passed_text = _text(row.get("passed"))
    key = (passed_text or "").lower()
    if key not in _TRUE | _FALSE:
        raise bad("passed", "true or false (1/0, pass/fail)")
    return Label(line, case_id, trial, _text(row.get("target")), key in _TRUE)


def _csv_rows(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, object]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    for needed in ("case_id", "passed"):
        if needed not in header:
            raise EvaluationError(
                f"{path} line 1: the header must name the columns case_id and passed (trial and target "
                f"optional); got {', '.join(header) or 'no header'}"
            )
    for row in reader:
        if None in row:
            raise EvaluationError(
                f"{path} line {reader.line_num}: the row has more fields than the header; got {row[None]!r}"
            )
        if all(value in ("", None) for value in row.values()):
            continue
        yield reader.line_num, row


def _json_rows(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, object]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise EvaluationError(f"{path} line {number}: not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise EvaluationError(f"{path} line {number}: a label must be a JSON object; got {value!r}")
        yield number, value


def read_labels(path: str | Path) -> HumanLabels:
    """The labels of a CSV or JSON Lines file (module docstring); bad rows raise, naming the row.

    A label given twice (the same target, case and trial, or a whole case and one of its
    trials) is an error naming both lines.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot read the labels: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise EvaluationError(
            f"{path}: labels must be UTF-8 text; {exc.reason} at byte {exc.start}"
        ) from None
    rows = _json_rows(path, text) if path.suffix.lower() in _JSON_SUFFIXES else _csv_rows(path, text)
    labels: list[Label] = []
    whole: dict[tuple[str | None, str], int] = {}
    parts: dict[tuple[str | None, str], dict[int, int]] = {}
    for line, row in rows:
        label = _label(row, f"{path} line {line}", line)
        case = (label.target, label.case_id)
        own = parts.setdefault(case, {})
        before = whole.get(case)
        if before is None:
            before = next(iter(own.values()), None) if label.trial is None else own.get(label.trial)
        if before is not None:
            raise EvaluationError(
                f"{path} line {line}: case {label.case_id!r} is labelled already on line {before} "
                "(a label per target, case and trial; a row without a trial labels every trial)"
            )
        if label.trial is None:
            whole[case] = line
        else:
            own[label.trial] = line
        labels.append(label)
    if not labels:
        raise EvaluationError(f"{path}: holds no labels")
    return HumanLabels(str(path), tuple(labels))


@dataclass(frozen=True)
class LabelledBanks:
    """One target's judge verdicts and human labels, items x trials (module docstring).

    ``items`` are the item ids of the rows; ``labels_used`` counts the labels that landed on a
    judged trial; ``notes`` says what was left out and why.
    """

    items: tuple[Hashable, ...]
    judge: FloatArray
    human: FloatArray
    labels_used: int
    notes: tuple[str, ...] = field(default=())

    @property
    def labelled_items(self) -> int:
        """Items with at least one labelled trial."""
        return int((~np.isnan(self.human)).any(axis=1).sum())


def label_banks(
    labels: HumanLabels,
    target: str | None,
    items: Sequence[Hashable],
    trials: Sequence[Sequence[int]],
    verdicts: Sequence[str],
    several_targets: bool = False,
) -> LabelledBanks:
    """Judge verdicts and human labels of one target's items, as two items x trials arrays.

    ``items[i]``'s trials are ``trials[i]`` (their indices) with the verdict letters
    ``verdicts[i]`` (``p`` pass, ``f``/``b`` fail, ``e`` errored).  Labels of ``target`` (and
    labels naming no target) land on the trials they name; a label on an errored trial (the
    judge gave no verdict) is left out with a note.  ``several_targets`` refuses labels naming
    no target (they cannot say which target's output they judged).
    """
    if several_targets and None in labels.targets:
        first = next(label for label in labels.labels if label.target is None)
        raise EvaluationError(
            f"{labels.path} line {first.line}: field 'target' must name the target when the trials hold "
            "several targets (each target's output is labelled apart); got no target"
        )
    width = max((len(own) for own in trials), default=0)
    judge = np.full((len(items), width), np.nan)
    human = np.full((len(items), width), np.nan)
    where: dict[Hashable, tuple[int, dict[int, int]]] = {}
    for row, (item, own, letters) in enumerate(zip(items, trials, verdicts, strict=True)):
        where[str(item)] = (row, {trial: position for position, trial in enumerate(own)})
        for position, letter in enumerate(letters):
            judge[row, position] = math.nan if letter == "e" else float(letter == "p")
    used = errored = 0
    for label in labels.labels:
        if label.target is not None and label.target != target:
            continue
        found = where.get(label.case_id)
        if found is None:
            continue
        row, positions = found
        if label.trial is not None and label.trial not in positions:
            raise EvaluationError(
                f"{labels.path} line {label.line}: field 'trial' must name a trial of case {label.case_id!r} "
                f"({', '.join(map(str, sorted(positions)))}); got {label.trial}"
            )
        for position in [positions[label.trial]] if label.trial is not None else list(positions.values()):
            if math.isnan(judge[row, position]):
                errored += 1
                continue
            human[row, position] = float(label.passed)
            used += 1
    notes = (
        (f"{plural(errored, 'label')} on errored trials left out (the judge gave no verdict)",)
        if errored
        else ()
    )
    return LabelledBanks(tuple(items), judge, human, used, notes)


def unknown_cases(labels: HumanLabels, known: Mapping[str | None, set[str]]) -> None:
    """Raise for the first label naming a case (of its target) that no input holds."""
    everywhere = set().union(*known.values()) if known else set()
    for label in labels.labels:
        cases = everywhere if label.target is None else known.get(label.target)
        if cases is None:
            names = ", ".join(sorted(str(t) for t in known))
            raise EvaluationError(
                f"{labels.path} line {label.line}: field 'target' must name a target of the trials "
                f"({names}); got {label.target!r}"
            )
        if label.case_id not in cases:
            raise EvaluationError(
                f"{labels.path} line {label.line}: field 'case_id' must name a case of the trials; "
                f"got {label.case_id!r}"
            )
