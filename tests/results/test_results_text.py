"""The format helpers' JSON text readers: the streamed array reader gives json.load's values at any
buffer size; the sniffers' scanners take a string cut by the end of the text in one pass.

A file's head is cut wherever its first bytes end, often inside a long string (an output of many
escaped quotes).  Before, every escaped quote in such a string started a new string scanned to the
end again, quadratic in the text (a 70 MB trial line took 19 CPU-s to sniff).  Those calls run in a
forked process that a hang fails as "hung"; the time taken is not asserted.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import queue as queue_module
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import check_nesting, head_keys, json_array_items, member_items

_VALUES = [{"k": "x" * 30, "n": [1, 2]}, 123456789, -1.5e10, 0.25, "str", True, None, [], {"nested": [[{}]]}]


@pytest.mark.parametrize("seed", range(60))
def test_every_element_parses_as_json_load_does_at_any_chunk_size(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    data = [rng.choice(_VALUES) for _ in range(rng.randrange(0, 15))]
    separator = rng.choice([",", " , ", ",\n  "])
    text = (
        "\ufeff" * rng.randrange(2)
        + " " * rng.randrange(3)
        + "["
        + " " * rng.randrange(2)
        + separator.join(json.dumps(value) for value in data)
        + " " * rng.randrange(2)
        + "]"
        + " \n" * rng.randrange(2)
    )
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    assert json.loads(text.lstrip("\ufeff")) == data
    for chunk in (1, 2, 3, 7, 64, 1 << 20):
        assert list(json_array_items(path, chunk=chunk)) == data, (chunk, text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1,2", "expected ',' or ']' after element 2; got 'the end of the file'"),
        ("[1 2]", "expected ',' or ']' after element 1; got '2'"),
        ('{"a": 1}', "expected a JSON array; it starts '{\"a\": 1}'"),
        ("[1,]", "element 2 is not valid JSON: Expecting value"),
        ("[1] x", "text after the end of the JSON array: 'x'"),
        ("", "expected a JSON array; it starts ''"),
        ('["ab', "element 1 is not valid JSON: Unterminated string"),
        ("[1.5e]", "expected ',' or ']' after element 1; got 'e'"),
    ],
)
def test_a_broken_array_is_one_error_naming_file_and_element(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(EvaluationError) as caught:
        list(json_array_items(path, chunk=2))
    assert str(caught.value).startswith(f"{path}: {message}")


def test_an_element_longer_than_the_buffer_parses(tmp_path: Path) -> None:
    big = {"traj": ["m" * 1000] * 200}
    path = tmp_path / "c.json"
    path.write_text(json.dumps([big, 1, big]))
    assert list(json_array_items(path, chunk=16)) == [big, 1, big]


# --------------------------------------------------------------------------- an array inside a document


class _Counting(io.StringIO):
    """Text that counts the characters read from it."""

    read_so_far = 0

    def read(self, size: int | None = -1) -> str:
        text = super().read(size)
        self.read_so_far += len(text)
        return text


@pytest.mark.parametrize("seed", range(30))
def test_member_items_gives_the_array_along_the_keys_at_any_chunk_size(seed: int) -> None:
    rng = random.Random(seed)
    data = [rng.choice(_VALUES) for _ in range(rng.randrange(0, 12))]
    before = {f"m{index}": rng.choice(_VALUES) for index in range(rng.randrange(3))}
    after = {f"z{index}": rng.choice(_VALUES) for index in range(rng.randrange(3))}
    document = {"evalId": "e", **before, "results": {"version": 3, "results": data, **after}, **after}
    text = json.dumps(document, indent=rng.choice([None, 2]))
    for chunk in (1, 3, 64, 1 << 20):
        assert list(member_items(io.StringIO(text), "x", ("results", "results"), chunk)) == data
    old = json.dumps({"results": data, **after})  # the first array along the keys is read
    assert list(member_items(io.StringIO(old), "x", ("results", "results"), 5)) == data


def test_member_items_streams_each_element_before_the_document_is_read() -> None:
    """The reader never holds the whole document: each element is given when the text has been read
    at most two read-ahead chunks past its end, however long the document."""
    elements = [{"index": index, "output": "x" * 1000} for index in range(400)]
    text = json.dumps({"config": {"a": 1}, "results": {"results": elements, "stats": {}}})
    ends = [text.index("}", text.index(f'{{"index": {index},')) + 1 for index in range(400)]
    handle = _Counting(text)
    seen = []
    for element in member_items(handle, "x", ("results", "results"), chunk=4096):
        seen.append(handle.read_so_far)
        assert isinstance(element, dict) and element["index"] == len(seen) - 1
    assert len(seen) == 400 and seen[0] <= 2 * 4096 < len(text) / 50
    assert all(read <= end + 2 * 4096 for read, end in zip(seen, ends, strict=True))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"results": {"version": 4, "rows": []}}', "field 'results.results' is missing"),
        ('{"evalId": "e"}', "field 'results' is missing"),
        ('{"results": 3}', "field 'results' must be a list, or an object holding 'results'; it starts '3}'"),
        (
            '{"results": {"results": {"a": 1}}}',
            "field 'results.results' must be a list; it starts '{\"a\": 1}}}'",
        ),
        ('[{"a": 1}]', "the document must be a JSON object; it starts '[{\"a\": 1}]'"),
        ('{"results": [1, 2}', "field 'results': expected ',' or ']' after element 2; got '}'"),
        ('{"a": 1 "results": []}', "expected ',' or '}' in the document; got '\"results\": []}'"),
        ('{"results": []} x', "text after the end of the JSON document: 'x'"),
        ('{"config": [1,', "field 'config' is not valid JSON: Expecting value"),
    ],
)
def test_member_items_names_the_field_that_breaks(text: str, message: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        list(member_items(io.StringIO(text), "out.json", ("results", "results"), chunk=4))
    assert str(caught.value).startswith("out.json") and message in str(caught.value)


HUNG_SECONDS = 120
#: 2 MB of an output's text, each piece an escaped quote, a bracket and a key-like string: scanned
#: again from each quote, as before, it would take hours; in one pass, milliseconds.
INSIDE = '\\"{\\"fake\\": [' * 150_000


def _answer(call: Callable[[], Any], queue: Any) -> None:
    try:
        queue.put(("gave", call()))
    except EvaluationError as exc:
        queue.put(("raised", str(exc)))


def _in_a_fork(call: Callable[[], Any]) -> tuple[str, Any]:
    """``call()``'s value (or its EvaluationError's message) from a forked process; a hang fails."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_answer, args=(call, queue))
    process.start()
    try:
        return queue.get(timeout=HUNG_SECONDS)  # type: ignore[no-any-return]
    except queue_module.Empty:
        pytest.fail(f"hung: over {HUNG_SECONDS} s")
    finally:
        process.kill()
        process.join()


def test_a_head_cut_inside_a_string_gives_the_keys_before_it_and_none_from_inside() -> None:
    head = '{"case_id": "a", "trial": {"n": 0}, "output": "' + INSIDE
    assert _in_a_fork(lambda: head_keys(head)) == (
        "gave",
        frozenset({"case_id", "trial", "trial.n", "output"}),
    )
    assert _in_a_fork(lambda: head_keys(head + "\\")) == (
        "gave",
        frozenset({"case_id", "trial", "trial.n", "output"}),
    )


def test_a_closed_string_still_ends_where_its_quote_is() -> None:
    text = '{"a": "x\\"y", "b": {"c": "}"}, "d": 1}'
    assert head_keys(text) == frozenset({"a", "b", "b.c", "d"})


def test_nesting_is_counted_outside_a_string_cut_by_the_end_of_the_text() -> None:
    data = ('[[{"output": "' + INSIDE).encode()
    assert _in_a_fork(lambda: check_nesting(data, "x.json", limit=3)) == ("gave", None)
    deep = ("[" * 5 + '"' + INSIDE).encode()
    assert _in_a_fork(lambda: check_nesting(deep, "x.json", limit=3)) == (
        "raised",
        "x.json: not valid JSON: nested too deeply (over 3 levels)",
    )
