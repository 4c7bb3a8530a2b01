"""The format helpers' streamed JSON array reader: same values as json.load, at any buffer size."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import json_array_items

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
