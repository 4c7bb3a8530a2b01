"""promptfoo's CSV export (``promptfoo eval -o results.csv``) as promptfoo result objects.

The CSV has one row per test (each ``--repeat`` a row of its own) and one block of columns per
(provider, prompt)::

    Description,question,[dummy-a] Answer: {{question}},Status,Score,Named Scores,
      Metric: exact,Metric: short,Grader Reason,Comment,[openai:gpt-4o] Answer: ...,Status,...

``Description`` is there when a test has one; the columns up to the first block are the test's
vars.  A block starts with the ``[provider] prompt`` column (the output) followed by
``Status`` (``PASS``, ``FAIL`` or ``ERROR``), ``Score``, and perhaps ``Named Scores``, one
``Metric: NAME`` column per named metric, ``Grader Reason`` and ``Comment``.  Each cell of a
block becomes one result object shaped as in promptfoo's JSON output, so both are read by one
table builder (:func:`trialscore.results.formats.promptfoo.promptfoo_table_from_results`):
``ERROR`` is an errored result (``failureReason`` 2); a metric with a score passes when the score
is 1 (the CSV keeps scores, not each assertion's pass).

>>> header = ["Description", "q", "[a] Ask: {{q}}", "Status", "Score", "Metric: exact", "Comment"]
>>> [(block.provider, block.prompt, block.metrics) for block in blocks(header)]
[('a', 'Ask: {{q}}', {'exact': 5})]
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import MAX_DOCUMENT_BYTES, MAX_LINE_BYTES, first_line, head_text, lines

__all__ = ["Block", "blocks", "csv_results", "is_promptfoo_csv"]

_OUTPUT = re.compile(r"^\[(?P<provider>.+?)\] (?P<prompt>.*)$", re.DOTALL)
_STATUS = {"PASS": 0, "FAIL": 1, "ERROR": 2}


@dataclass(frozen=True)
class Block:
    """The columns of one (provider, prompt): output, status, score and each named metric's column."""

    provider: str
    prompt: str
    output: int
    metrics: dict[str, int]


def blocks(header: list[str]) -> list[Block]:
    """The (provider, prompt) blocks of a promptfoo CSV header (none for any other CSV)."""
    found = []
    for index, name in enumerate(header[:-1]):
        match = _OUTPUT.match(name)
        if match is None or header[index + 1] != "Status":
            continue
        metrics = {}
        for column in range(index + 2, len(header)):
            if _OUTPUT.match(header[column]) and column + 1 < len(header) and header[column + 1] == "Status":
                break
            if header[column].startswith("Metric: "):
                metrics[header[column].removeprefix("Metric: ")] = column
        found.append(Block(match["provider"], match["prompt"], index, metrics))
    return found


def is_promptfoo_csv(path: Path) -> bool:
    """Whether the file's first line is a promptfoo CSV header (a ``[provider] prompt`` then ``Status``)."""
    head = head_text(path)
    if head is None or head.lstrip().startswith(("{", "[")):
        return False
    try:
        header = next(csv.reader([first_line(head)]))
    except (csv.Error, StopIteration):
        return False
    return bool(blocks(header))


@contextmanager
def _field_limit(limit: int) -> Iterator[None]:
    before = csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _decoded(path: Path) -> Iterator[str]:
    for _, line in lines(path):
        yield line.decode("utf-8", errors="replace")


def _result(row: list[str], block: Block, test: dict[str, Any], where: str) -> dict[str, Any]:
    status = row[block.output + 1].strip().upper()
    if status not in _STATUS:
        raise EvaluationError(f"{where}: field 'Status' must be PASS, FAIL or ERROR; got {status!r:.60}")
    components = [
        {"pass": float(row[column]) == 1.0, "assertion": {"metric": name}}
        for name, column in block.metrics.items()
        if _number(row[column], name, where) is not None
    ]
    return {
        "provider": {"label": block.provider},
        "prompt": {"label": block.prompt},
        "testCase": test,
        "success": status == "PASS",
        "failureReason": _STATUS[status],
        "score": _number(row[block.output + 2], "Score", where),
        "gradingResult": {"componentResults": components} if components else None,
    }


def _number(text: str, field: str, where: str) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        name = field if field in ("Score",) else f"Metric: {field}"
        raise EvaluationError(f"{where}: field {name!r} must be a number; got {text!r:.60}") from None


def csv_results(path: Path) -> list[dict[str, Any]]:
    """Every (row, block) of a promptfoo CSV as a promptfoo result object, in row then block order.

    A test's assertions are not in the CSV: a test's metrics are the ``Metric:`` columns any of its
    rows fills for that block, so an errored row is errored for each of them.
    """
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise EvaluationError(
            f"{path}: a promptfoo CSV of {size / 2**20:.0f} MiB is over the {MAX_DOCUMENT_BYTES // 2**20} "
            "MiB read; export JSON Lines instead (promptfoo eval -o results.jsonl)"
        )
    with _field_limit(MAX_LINE_BYTES):
        reader = csv.reader(_decoded(path))
        try:
            header = next(reader)
            rows = list(reader)
        except csv.Error as exc:
            raise EvaluationError(f"{path} line {reader.line_num}: not valid CSV: {exc}") from exc
    found = blocks(header)
    first = found[0].output
    described = header[0] == "Description"
    var_names = header[1 if described else 0 : first]
    keyed: list[tuple[tuple[str, int], dict[str, Any]]] = []
    metrics: dict[tuple[str, int], set[str]] = {}
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"{path} row {number}"
        if len(row) != len(header):
            raise EvaluationError(f"{where}: {len(row)} columns, where the header has {len(header)}")
        test: dict[str, Any] = {"vars": dict(zip(var_names, row[1 if described else 0 : first], strict=True))}
        if described and row[0]:
            test["description"] = row[0]
        for index, block in enumerate(found):
            result = _result(row, block, test, where)
            key = (json.dumps(test, sort_keys=True), index)
            components = (result["gradingResult"] or {}).get("componentResults", [])
            metrics.setdefault(key, set()).update(one["assertion"]["metric"] for one in components)
            keyed.append((key, result))
    for key, result in keyed:
        result["testCase"] = {
            **result["testCase"],
            "assert": [{"metric": name} for name in sorted(metrics[key])],
        }
    return [result for _, result in keyed]
