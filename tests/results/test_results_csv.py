"""CSV defects: short rows in CRLF files, unbalanced quotes, header-only files, each named on one line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.readers import read_counts

runner = CliRunner()

HEADER = ["run_id", "case_id", "trial", "target", "category", "passed", "score", "verdict", "output"]


def _spreadsheet_rows(cases: int = 6, trials: int = 4, multiline: bool = False) -> list[list[str]]:
    """Rows as a spreadsheet exports them: every value present, text with commas quoted by the writer
    (with ``multiline``, some texts hold line breaks and some passed cells are empty)."""
    rows = []
    for case in range(cases):
        for trial in range(trials):
            passed = (case + trial) % 3 != 0
            rows.append(
                [
                    "run-1",
                    f"case-{case}",
                    str(trial),
                    "model-a",
                    "math",
                    "" if multiline and trial == 3 else "TRUE" if passed else "FALSE",
                    "1.0" if passed else "0.0",
                    "pass" if passed else "fail",
                    f'said "{case}",\r\nthen stopped'
                    if multiline and trial % 2
                    else f'said "{case}", then stopped',
                ]
            )
    return rows


def _crlf_csv(path: Path, rows: list[list[str]], added: str | None = None, newline: str = "\r\n") -> Path:
    """Write ``rows`` with CRLF line ends (csv.writer's excel dialect), then a line typed by hand."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)  # excel dialect: \r\n, quotes where needed
    writer.writerow(HEADER)
    writer.writerows(rows)
    text = buffer.getvalue() + ("" if added is None else added + newline)
    path.write_bytes(text.encode("utf-8"))
    return path


def _score(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["score", *args])
    return result.exit_code, result.stdout, result.stderr


def _one_error_line(stderr: str) -> str:
    """The CLI's error: exactly one line, no traceback, nothing of DuckDB's SQL or sniffer dump."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    for leak in ("Traceback", "sniff", "SELECT", "LINE 1", "read_csv", "Possible fixes"):
        assert leak not in stderr, stderr
    return lines[0]


@pytest.mark.parametrize("newline", ["\r\n", "\n"], ids=["crlf-row", "lf-row"])
def test_a_short_row_in_a_crlf_file_is_one_line_naming_line_and_field(tmp_path, newline):
    rows = _spreadsheet_rows()
    path = _crlf_csv(tmp_path / "sheet.csv", rows, added="run-1,case-9,0,model-a,math,TRUE", newline=newline)
    code, stdout, stderr = _score(str(path))
    assert code == 2 and stdout == ""
    line = len(rows) + 2  # header, rows, then the added line
    assert _one_error_line(stderr) == (
        f"error: {path} line {line}: field 'score' is missing: the row has 6 fields, the header 9 "
        "(1 bad row in all; --skip-invalid skips and counts them)"
    )


@pytest.mark.parametrize("newline", ["\r\n", "\n"], ids=["crlf-row", "lf-row"])
def test_skip_invalid_skips_a_row_missing_fields_and_counts_it_once(tmp_path, newline):
    rows = _spreadsheet_rows()
    path = _crlf_csv(
        tmp_path / "sheet.csv", rows, added="run-1,case-9,0,model-a,math,TRUE,1.0", newline=newline
    )
    counts = read_counts([path], skip_invalid=True)
    assert (counts.stats.rows_read, counts.stats.rows_skipped, counts.stats.rows_used) == (
        len(rows) + 1,
        1,
        len(rows),
    )
    assert counts.stats.first_skipped == (
        f"{path} line {len(rows) + 2}: field 'verdict' is missing: the row has 7 fields, the header 9"
    )
    code, stdout, stderr = _score(str(path), "--skip-invalid", "-f", "json")
    assert code == 0, stderr
    assert json.loads(stdout)["rows"]["rows_skipped"] == 1
    assert stderr.count("\n") == 1 and "skipped 1 invalid row;" in stderr


def test_the_clean_rows_of_a_damaged_file_count_as_the_clean_file(tmp_path):
    rows = _spreadsheet_rows(cases=30, trials=5, multiline=True)
    clean = read_counts([_crlf_csv(tmp_path / "clean.csv", rows)], by=["target"])  # by DuckDB
    assert clean.errored.sum() == 30
    damaged = tmp_path / "damaged.csv"
    _crlf_csv(damaged, rows, added="run-1,case-9,0")
    mixed = read_counts([damaged], by=["target"], skip_invalid=True)  # row by row in Python
    assert mixed.item.tolist() == clean.item.tolist()
    assert mixed.graded.tolist() == clean.graded.tolist() and mixed.c.tolist() == clean.c.tolist()
    assert mixed.errored.tolist() == clean.errored.tolist()
    assert mixed.stats.rows_read == clean.stats.rows_read + 1 and mixed.stats.rows_skipped == 1


def test_a_row_with_more_fields_than_the_header_names_the_extra_value(tmp_path):
    path = tmp_path / "extra.csv"
    path.write_text("case_id,trial,passed\na,0,1\na,1,0,oops\n")
    with pytest.raises(
        EvaluationError, match=r"extra\.csv line 3: the row has 4 fields, the header 3: 'oops'"
    ):
        read_counts([path])


@pytest.mark.parametrize(
    ("line", "field"),
    [('"b,1,0', "case_id"), ('b,1,"0', "passed")],
    ids=["quote-in-item", "quote-in-outcome"],
)
@pytest.mark.parametrize("where", ["middle", "last"])
def test_an_unbalanced_quote_is_an_error_naming_its_line_and_field(tmp_path, line, field, where):
    good = ["a,0,1", "a,1,0", "c,0,1"]
    body = [*good[:2], line, good[2]] if where == "middle" else [*good, line]
    path = tmp_path / "quote.csv"
    path.write_bytes(("case_id,trial,passed\r\n" + "\r\n".join(body) + "\r\n").encode())
    number = body.index(line) + 2
    code, _, stderr = _score(str(path))
    assert code == 2
    assert _one_error_line(stderr).startswith(
        f"error: {path} line {number}: field {field!r} opens a quote that is never closed"
    )
    counts = read_counts([path], skip_invalid=True)
    assert counts.item.tolist() == ["a", "c"] and counts.graded.tolist() == [2, 1]
    assert (counts.stats.rows_read, counts.stats.rows_skipped) == (4, 1)


def test_a_quote_that_closes_lines_later_does_not_become_an_item(tmp_path):
    path = tmp_path / "spans.csv"
    path.write_text('case_id,trial,passed\na,0,1\n"b,1,0\nc",0,1\nd,0,1\n')
    with pytest.raises(
        EvaluationError,
        match=r"spans\.csv line 3: field 'case_id' must be a non-empty case id on one line .*; "
        r"got 'b,1,0\\nc'",
    ):
        read_counts([path])
    counts = read_counts([path], skip_invalid=True)
    assert counts.item.tolist() == ["a", "d"] and counts.stats.rows_skipped == 1


def test_a_short_row_across_lines_says_where_the_quoted_value_runs(tmp_path):
    path = tmp_path / "spans.csv"
    path.write_text('case_id,trial,passed\na,0,1\n"b,1\nc",0\nd,0,1\n')
    with pytest.raises(
        EvaluationError,
        match=r"line 3: field 'passed' is missing: the row has 2 fields, the header 3 "
        r"\(a quoted value runs from line 3 to line 4: is a quote unbalanced\?\)",
    ):
        read_counts([path])


def test_text_after_a_closing_quote_is_named(tmp_path):
    path = tmp_path / "after.csv"
    path.write_text('case_id,trial,passed\na,0,1\na,1,"1"x\n')
    with pytest.raises(
        EvaluationError, match=r"after\.csv line 3: field 'passed' has text after its closing quote"
    ):
        read_counts([path])


def test_a_quoted_value_with_line_breaks_keeps_line_numbers_right(tmp_path):
    rows = 'case_id,trial,passed,output\na,0,1,"two\nlines"\na,1,0,x\na,2,maybe,y\n'
    path = tmp_path / "multi.csv"
    path.write_text(rows)
    with pytest.raises(EvaluationError, match=r"multi\.csv line 5: field 'passed' must be true/false"):
        read_counts([path])  # DuckDB reads it; the bad value is named by Python's reading of the lines
    path.write_text(rows + "b,0\n")
    with pytest.raises(EvaluationError, match=r"multi\.csv line 6: field 'passed' is missing"):
        read_counts([path])
    counts = read_counts([path], skip_invalid=True)
    assert (counts.stats.rows_read, counts.stats.rows_skipped) == (4, 2)
    # read row by row now (the short row stops DuckDB), the bad value keeps its line number
    assert counts.stats.first_skipped.startswith(f"{path} line 5: field 'passed' must be true/false")


@pytest.mark.parametrize("content", ["", "case_id,trial,passed\n", "case_id,trial,passed\r\n\r\n"])
def test_empty_and_header_only_csv_are_both_no_trials(tmp_path, content):
    path = tmp_path / "trials.csv"
    path.write_text(content)
    code, stdout, stderr = _score(str(path))
    assert code == 2 and stdout == ""
    assert _one_error_line(stderr).startswith(f"error: no trials in {path}: ")


def test_a_file_of_only_invalid_rows_is_no_valid_trials_even_when_skipping(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("case_id,trial,passed\na,0,yes\nb,0\n")
    code, _, stderr = _score(str(path), "--skip-invalid")
    assert code == 2
    assert f"no valid trials in {path}: all 2 of its rows are invalid and skipped" in stderr


def test_mixed_line_ends_blank_and_empty_rows_read_clean(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_bytes(b"\xef\xbb\xbfcase_id,trial,passed\r\na,0,1\r\n\r\n,,\r\n   \na,1,0\nb,0,1\r\n")
    counts = read_counts([path])
    assert counts.item.tolist() == ["a", "b"] and counts.graded.tolist() == [2, 1]
    assert counts.stats.rows_read == 3


@pytest.mark.parametrize("separator", [";", "\t", "|"])
def test_the_separator_comes_from_the_header_line(tmp_path, separator):
    path = tmp_path / "trials.txt"
    path.write_text(
        separator.join(["case_id", "trial", "passed"]) + "\n" + separator.join(["a", "0", "1"]) + "\n"
    )
    counts = read_counts([path])
    assert counts.item.tolist() == ["a"] and counts.c.tolist() == [1]


def test_not_utf8_is_named_by_line(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("case_id,trial,passed\na,0,1\ncafé,0,1\n".encode("latin-1"))
    with pytest.raises(EvaluationError, match=r"latin1\.csv line 3: the line is not UTF-8 text"):
        read_counts([path])
