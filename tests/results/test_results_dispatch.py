"""The format registry: detection from content, the by-name override, the listing, inputs with no trials."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import FORMATS, detect_format, get_format, list_formats
from trialscore.results.readers import read_counts

runner = CliRunner()

ROWS = [
    {"case_id": "a", "trial": 0, "passed": True},
    {"case_id": "a", "trial": 1, "passed": False},
    {"case_id": "b", "trial": 0, "passed": True},
]


def _samples(folder: Path) -> dict[str, Path]:
    """One file of each file format, every one named ``.dat`` so only the content can tell them apart."""
    jsonl = "".join(json.dumps(row) + "\n" for row in ROWS)
    files = {
        "parquet": lambda path: pq.write_table(pa.Table.from_pylist(ROWS), path),
        "wide": lambda path: path.write_text("1,0\n1,1\n"),
        "cases": lambda path: path.write_text(json.dumps({"eval_id": "a", "verdict": "pass"}) + "\n"),
        "json-array": lambda path: path.write_text(json.dumps(ROWS, indent=2)),
        "jsonl": lambda path: path.write_text(jsonl),
        "csv": lambda path: path.write_text("case_id,trial,passed\na,0,1\na,1,0\nb,0,1\n"),
    }
    paths = {}
    for name, write in files.items():
        paths[name] = folder / f"{name}.dat"
        write(paths[name])
    return paths


def test_every_file_format_is_detected_from_its_content_alone(tmp_path):
    samples = _samples(tmp_path)
    order = list(FORMATS)
    for name, path in samples.items():
        assert detect_format(path).NAME == name
        earlier = order[: order.index(name)]
        assert [other for other in earlier if FORMATS[other].sniff(path)] == [], name
        assert not FORMATS["runner"].sniff(path) and not FORMATS["inspect"].sniff(path)
    for name in ("parquet", "jsonl", "csv", "json-array"):
        counts = read_counts([samples[name]])
        assert (counts.item.tolist(), counts.graded.tolist(), counts.c.tolist()) == (
            ["a", "b"],
            [2, 1],
            [1, 1],
        )


def test_the_wide_matrix_wins_over_csv_only_when_the_first_line_is_numbers(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("# items x trials\n1,0,1\n0,0,1\n")
    assert detect_format(path).NAME == "wide"
    path.write_text("case_id,passed\n1,0\n")
    assert detect_format(path).NAME == "csv"


def test_a_format_named_by_the_caller_overrides_detection(tmp_path):
    path = tmp_path / "rows.log"
    path.write_text("case_id;trial;passed\na;0;1\n")
    assert read_counts([path], input_format="csv").c.tolist() == [1]
    with pytest.raises(
        EvaluationError, match=r"unknown input format 'excel'; the formats are runner, inspect"
    ):
        read_counts([path], input_format="excel")
    with pytest.raises(EvaluationError, match=r"rows\.log: cannot read Parquet: ") as caught:
        read_counts([path], input_format="parquet")
    assert "\n" not in str(caught.value) and "SELECT" not in str(caught.value)


def test_list_formats_names_every_format_in_detection_order_with_what_it_maps():
    infos = list_formats()
    assert [info.name for info in infos] == list(FORMATS)
    assert list(FORMATS) == [
        "runner",
        "inspect",
        "counts",
        "parquet",
        "wide",
        "cases",
        "promptfoo",
        "lm-eval",
        "tau-bench",
        "tau2-bench",
        "openai-evals",
        "deepeval",
        "helm",
        "swe-bench",
        "harbor",
        "json-array",
        "jsonl",
        "csv",
    ]
    for info in infos:
        assert info.summary and info.maps and info.suffixes
        assert info.to_dict()["name"] == info.name
        assert get_format(info.name).NAME == info.name


def test_unknown_content_and_folders_of_nothing_are_named(tmp_path):
    document = tmp_path / "config.json"
    document.write_text('{\n  "model": "x"\n}\n')
    with pytest.raises(
        EvaluationError, match=r"config\.json: its content is none of the formats trialscore reads"
    ):
        read_counts([document])
    (tmp_path / "empty-folder").mkdir()
    with pytest.raises(
        EvaluationError, match=r"empty-folder: no format recognises this folder .*trialscore formats"
    ):
        read_counts([tmp_path / "empty-folder"])
    with pytest.raises(EvaluationError, match=r"absent: no such file or folder"):
        read_counts([tmp_path / "absent"])


def test_an_input_with_no_trials_is_an_error_in_every_format(tmp_path):
    empty_rows = {
        "array.json": "[]",
        "rows.jsonl": "\n\n",
        "rows.csv": "case_id,trial,passed\n",
    }
    for name, text in empty_rows.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(EvaluationError, match=rf"no trials in {tmp_path / name}"):
            read_counts([tmp_path / name])
    np.save(tmp_path / "m.npy", np.zeros((0, 3)))
    with pytest.raises(EvaluationError):
        read_counts([tmp_path / "m.npy"])


def test_a_jsonl_file_of_only_bad_lines_is_no_valid_trials(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"case_id": "a", "trial": 0, "passed": "maybe"}\n')
    with pytest.raises(EvaluationError, match=r"no valid trials in .*bad\.jsonl: its only row is invalid"):
        read_counts([path], skip_invalid=True)


@pytest.mark.parametrize("layout", ["jsonl", "array"])
def test_json_with_a_byte_order_mark_reads_like_without(tmp_path, layout):
    text = "".join(json.dumps(row) + "\n" for row in ROWS) if layout == "jsonl" else json.dumps(ROWS)
    plain, marked = tmp_path / f"plain.{layout}", tmp_path / f"marked.{layout}"
    plain.write_text(text, encoding="utf-8")
    marked.write_text(text, encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    expected = read_counts([plain])
    counts = read_counts([marked])
    assert counts.item.tolist() == expected.item.tolist() and counts.c.tolist() == expected.c.tolist()
    assert counts.stats.sources == (str(marked),)
    result = runner.invoke(app, ["score", str(marked), "-f", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["rows"]["rows_read"] == 3


def test_a_bad_line_in_a_jsonl_file_with_a_byte_order_mark_keeps_its_number(tmp_path):
    path = tmp_path / "marked.jsonl"
    path.write_text(
        '{"case_id": "a", "trial": 0, "passed": true}\n{"case_id": "a", "trial": 1, "passed": 7}\n',
        encoding="utf-8-sig",
    )
    with pytest.raises(EvaluationError, match=r"marked\.jsonl line 2: field 'passed' must be true/false"):
        read_counts([path])


def test_a_format_that_cannot_read_the_input_is_not_its_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sniff that meets an unreadable file or subfolder (OSError) says no; detection goes on.
    path = tmp_path / "trials.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))

    def unreadable(_: Path) -> bool:
        raise PermissionError(13, "Permission denied")

    for name in ("promptfoo", "lm-eval", "openai-evals", "deepeval", "helm", "swe-bench", "harbor"):
        monkeypatch.setattr(FORMATS[name], "sniff", unreadable)
    assert detect_format(path).NAME == "jsonl"
