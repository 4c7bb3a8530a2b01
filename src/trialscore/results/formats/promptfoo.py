"""promptfoo eval output (``promptfoo eval -o results.json`` or ``-o results.jsonl``) as trial rows.

``promptfoo eval -o results.json`` writes one JSON document::

    {"evalId": "eval-...", "results": {"version": 3, "timestamp": "...", "prompts": [...],
     "results": [{"testIdx": 0, "promptIdx": 0, "provider": {"id": "openai:gpt-4o", "label": ""},
                  "testCase": {"description": "capital", "vars": {...}}, "vars": {...},
                  "success": true, "score": 1, "failureReason": 0, "error": null, ...}, ...],
     "stats": {...}}, "config": {...}, "shareableUrl": null}

and ``-o results.jsonl`` one of those result objects per line.  An older
document whose ``results`` is the list of result objects itself is read too.

Every result object is one trial row:

* ``case_id`` is the test's ``description`` (else its ``vars`` as sorted JSON, else
  ``testIdx``): promptfoo numbers every repeat of ``--repeat N`` as a new
  ``testIdx``, so the index is not stable across repeats or runs; two tests with the
  same description but different vars get the vars appended;
* ``trial`` is the order of appearance of the (target, test) pair, in ``testIdx`` order
  (promptfoo writes no repeat index);
* ``target`` is the provider's ``label`` when set, else its ``id``; when the run has
  more than one prompt, `` prompt N`` (N counts the distinct prompts from 0) is appended
  and the prompt's label is in the ``prompt`` column;
* ``category`` is the test's ``metadata.category`` when it is plain text;
* ``passed`` is ``success``; ``failureReason`` 2 (promptfoo's ``ResultFailureReason.ERROR``:
  the provider or the grader errored) is an errored trial, never a failed one.  Files
  without ``failureReason`` (older promptfoo) count a result with an ``error`` and no
  ``gradingResult`` as errored.

>>> rows = [{"testIdx": i, "promptIdx": 0, "provider": {"id": "echo", "label": ""},
...          "testCase": {"description": "t"}, "success": i != 1, "failureReason": [0, 1, 2][i]}
...         for i in range(3)]
>>> table = promptfoo_table_from_results(rows, "r.json")
>>> list(table.columns["passed"]), list(table.columns["trial"])
(['true', 'false', None], ['0', '1', '2'])
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from trialscore.errors import EvaluationError
from trialscore.results.formats._promptfoo_csv import csv_results, is_promptfoo_csv
from trialscore.results.formats._text import first_json_object, head_keys, head_text, json_lines, member_items
from trialscore.results.tally import LongTable, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = [
    "MAPS",
    "NAME",
    "SUFFIXES",
    "SUMMARY",
    "promptfoo_table",
    "promptfoo_table_from_results",
    "read",
    "sniff",
]

NAME = "promptfoo"
SUMMARY = "promptfoo eval output (promptfoo eval -o results.json, -o results.jsonl or -o results.csv)"
MAPS = (
    "item = test description (else vars, else testIdx), trial = order of the (target, test) results, "
    "outcome = success (failureReason 2 = errored); group keys target (provider label, else id; "
    "plus prompt N when several prompts), prompt, category (test metadata.category)"
)
SUFFIXES = (".json", ".jsonl", ".csv")

#: promptfoo's ResultFailureReason: NONE = 0, ASSERT = 1, ERROR = 2.
_ERROR = 2


def _looks_like_result(value: object) -> bool:
    return isinstance(value, dict) and "provider" in value and ("success" in value or "testIdx" in value)


def sniff(path: Path) -> bool:
    """A JSON document with ``evalId`` and ``results`` keys (in any order), JSON Lines whose first
    object is a promptfoo result (``provider`` with ``success``/``testIdx``), or a promptfoo CSV
    export (a ``[provider] prompt`` column followed by ``Status``)."""
    head = head_text(path)
    if head is None:
        return False
    first = first_json_object(head)
    if first is not None:
        return _looks_like_result(first)
    return {"evalId", "results"} <= (head_keys(head) or set()) or is_promptfoo_csv(path)


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _target(row: dict[str, Any], where: str) -> str:
    provider = row.get("provider")
    if isinstance(provider, str) and provider:
        return provider
    if not isinstance(provider, dict):
        raise EvaluationError(f"{where}: field 'provider' must be an object with an id; got {provider!r:.60}")
    name = _text(provider.get("label")) or _text(provider.get("id"))
    if name is None:
        raise EvaluationError(
            f"{where}: field 'provider' has neither a label nor an id; got {provider!r:.60}"
        )
    return name


def _test(row: dict[str, Any]) -> tuple[str | None, str | None, object]:
    """The test's description, its vars as sorted JSON, and its testIdx."""
    case = _object(row.get("testCase"))
    description = _text(case.get("description")) or _text(row.get("description"))
    variables = case.get("vars", row.get("vars"))
    vars_text = json.dumps(variables, sort_keys=True, default=str) if variables else None
    return description, vars_text, row.get("testIdx")


def _passed(row: dict[str, Any], where: str) -> str | None:
    reason = row.get("failureReason")
    if reason is not None and not isinstance(reason, int):
        raise EvaluationError(f"{where}: field 'failureReason' must be 0, 1 or 2; got {reason!r:.60}")
    success = row.get("success")
    if reason == _ERROR or (reason is None and row.get("error") and not row.get("gradingResult")):
        return None
    if not isinstance(success, bool):
        raise EvaluationError(f"{where}: field 'success' must be true or false; got {success!r:.60}")
    return "true" if success else "false"


def _prompt_label(row: dict[str, Any]) -> str | None:
    prompt = row.get("prompt")
    if isinstance(prompt, dict):
        return _text(prompt.get("label")) or _text(prompt.get("raw"))
    return _text(prompt)


#: The scorer of a result's own pass/fail (every assertion of the test passed), when tests have several.
SUCCESS = "success"


def _assertion_name(assertion: object) -> str | None:
    """An assertion's ``metric`` name, else its ``type``."""
    if not isinstance(assertion, dict):
        return None
    return _text(assertion.get("metric")) or _text(assertion.get("type"))


def _assertions(row: dict[str, Any]) -> dict[str, str | None]:
    """Assertion name -> passed text of one result: every assertion of its test, each passed when all
    its components with that name passed; None (errored) when the result errored or has no component."""
    names = [_assertion_name(one) for one in _object(row.get("testCase")).get("assert") or ()]
    out: dict[str, str | None] = dict.fromkeys(name for name in names if name is not None)
    components = _object(row.get("gradingResult")).get("componentResults")
    for component in components if isinstance(components, list) else ():
        name = _assertion_name(_object(component).get("assertion"))
        passed = _object(component).get("pass")
        if name is not None and isinstance(passed, bool):
            before = out.get(name)
            out[name] = "false" if before == "false" or not passed else "true"
    return out


class _Result(NamedTuple):
    """What one result object holds for scoring (its output, prompt text and grading detail dropped)."""

    position: int
    test_index: object
    description: str | None
    vars_text: str | None
    target: str
    prompt: str | None
    passed: str | None
    score: object
    category: str | None
    assertions: dict[str, str | None]


def _kept(rows: Iterable[object], location: str) -> Iterator[_Result]:
    """Each result object, checked and cut to what scoring needs (texts interned: tests, targets and
    prompts repeat across results), one at a time."""
    for position, row in enumerate(rows):
        here = f"{location} result {position + 1}"
        if not isinstance(row, dict):
            raise EvaluationError(f"{here}: expected a result object; got {row!r:.60}")
        description, vars_text, test_index = _test(row)
        label = _prompt_label(row)
        category = _text(_object(_object(row.get("testCase")).get("metadata")).get("category"))
        yield _Result(
            position,
            test_index,
            _interned(description),
            _interned(vars_text),
            sys.intern(_target(row, here)),
            _interned(label),
            _passed(row, here),
            row.get("score"),
            _interned(category),
            {sys.intern(name): value for name, value in _assertions(row).items()},
        )


def _interned(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)


def promptfoo_table_from_results(rows: Iterable[object], location: str) -> LongTable:
    """Trial rows of promptfoo result objects (read one at a time, each kept only as the few fields
    scoring needs); ``location`` names the file in messages."""
    checked = list(_kept(rows, location))
    # promptfoo writes results in (testIdx, promptIdx) order; keep that order even when they were shuffled
    if all(isinstance(result.test_index, int) for result in checked):
        checked.sort(key=lambda result: result.test_index)  # type: ignore[arg-type,return-value]
    prompts = list(dict.fromkeys(result.prompt for result in checked))
    vars_by_description: dict[str, set[str | None]] = {}
    for result in checked:
        if result.description is not None:
            vars_by_description.setdefault(result.description, set()).add(result.vars_text)
    several = any(len(result.assertions) > 1 for result in checked)
    columns: dict[str, list[str | None]] = {
        name: [] for name in ("case_id", "trial", "target", "prompt", "category", "scorer", "passed", "score")
    }
    where: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for result in checked:
        here = f"{location} result {result.position + 1}"
        if result.description is not None:
            item = result.description
            if len(vars_by_description[result.description]) > 1 and result.vars_text is not None:
                item = f"{result.description} {result.vars_text}"
        elif result.vars_text is not None:
            item = result.vars_text
        elif result.test_index is not None:
            item = text_value(result.test_index) or ""
        else:
            raise EvaluationError(
                f"{here}: field 'testIdx' is missing and the test has no description or vars"
            )
        target = result.target
        if len(prompts) > 1:
            target = f"{target} prompt {prompts.index(result.prompt)}"
        trial = seen.get((target, item), 0)
        seen[(target, item)] = trial + 1
        judged: dict[str, str | None] = {SUCCESS: result.passed}
        if several:
            judged.update(
                (name, None if result.passed is None else value) for name, value in result.assertions.items()
            )
        score = result.score
        for scorer, outcome in judged.items():
            columns["case_id"].append(item)
            columns["trial"].append(str(trial))
            columns["target"].append(target)
            columns["prompt"].append(result.prompt)
            columns["category"].append(result.category)
            columns["scorer"].append(scorer)
            columns["passed"].append(outcome)
            whole = scorer == SUCCESS and isinstance(score, (int, float)) and 0 <= score <= 1
            columns["score"].append(text_value(score) if outcome is not None and whole else None)
            where.append(f"{here} (test {item!r:.60}, {target}{'' if not several else ', ' + scorer})")
    if not several:
        del columns["scorer"]
    if len(prompts) <= 1:
        del columns["prompt"]
    if not any(value is not None for value in columns["category"]):
        del columns["category"]
    return LongTable(columns, tuple(where))


def promptfoo_table(path: Path) -> LongTable:
    """Trial rows of a promptfoo output file (a JSON document, JSON Lines of results, or the CSV export).

    The JSON document's ``results.results`` (or an older document's ``results``) and JSON Lines are
    streamed, one result object at a time: a file of any size is read in memory that grows with the
    number of results, not with their outputs and prompts.
    """
    if is_promptfoo_csv(path):
        return promptfoo_table_from_results(csv_results(path), str(path))
    first = first_json_object(head_text(path) or "")
    if first is not None and _looks_like_result(first):
        return promptfoo_table_from_results((row for _, row in json_lines(path)), str(path))
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        return promptfoo_table_from_results(
            member_items(handle, str(path), ("results", "results")), str(path)
        )


def read(path: Path, sink: TrialSink) -> None:
    """Add every promptfoo result of the file to ``sink``."""
    sink.scan_table(str(path), promptfoo_table(path))
