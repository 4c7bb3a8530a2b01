"""Suites whose cases come from dataset files (JSON Lines, CSV, Parquet): mapping, graders, errors, size."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import duckdb
import pytest
from rich.console import Console

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT
from trialscore.errors import EvaluationError
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.suite import load_suite

ECHO = f"targets: [{{name: echo, type: command, argv: [{sys.executable}, -c, 'print(input())']}}]\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def jsonl(path: Path, rows: list[object]) -> Path:
    return write(path, "".join(json.dumps(row) + "\n" for row in rows))


def problems(path: Path) -> list[str]:
    with pytest.raises(EvaluationError) as caught:
        load_suite(path)
    return str(caught.value).splitlines()[1:]


def test_jsonl_cases_with_a_mapping_mixed_with_inline_cases_run(tmp_path: Path) -> None:
    jsonl(
        tmp_path / "data" / "qa.jsonl",
        [
            {"qid": 1, "question": "paris", "answer": "paris", "topic": "geo", "src": "atlas"},
            {"qid": 2, "question": "rome", "answer": "ROME", "topic": "geo", "src": "atlas"},
            {"qid": 3, "question": "4", "answer": "4", "src": "calc"},
        ],
    )
    suite_path = write(
        tmp_path / "suite.yaml",
        "name: ds\n" + ECHO + "graders: [{type: contains, value: never}]\n"
        "cases:\n"
        "  - {id: inline, input: hi, expected: hi, graders: [{type: exact}]}\n"
        "  - file: data/qa.jsonl\n"
        "    id: qid\n"
        "    input: question\n"
        "    expected: answer\n"
        "    category: topic\n"
        "    metadata: [src]\n"
        "    graders: [{type: exact, case_sensitive: false}]\n"
        "    execution: {retries: 0}\n"
        "execution: {trials: {count: 2}}\n",
    )
    suite = load_suite(suite_path)
    assert [case.id for case in suite.cases] == ["inline", "1", "2", "3"]
    assert [case.category for case in suite.cases] == [None, "geo", "geo", None]
    assert suite.cases[3].metadata == {"src": "calc"} and suite.cases[1].expected == "paris"
    assert suite.settings_for(suite.cases[1]).retries == 0 and suite.settings_for(suite.cases[0]).retries == 2
    assert suite.graders_for(suite.cases[2])[0].case_sensitive is False
    report = execute_suite(
        suite, RunOptions(store=tmp_path / "s.sqlite", progress=False), Console(file=io.StringIO())
    )
    verdicts = {case.eval_id: case.verdict for case in report.cases}
    assert verdicts == {"inline": "pass", "1": "pass", "2": "pass", "3": "pass"}
    assert len(report.records) == 8


def test_csv_and_parquet_files_give_the_same_cases(tmp_path: Path) -> None:
    write(
        tmp_path / "qa.csv",
        'id,input,expected,category,tags\na,"two\nlines",x,,"t1, t2"\nb,plain,y,geo,\n',
    )
    duckdb.sql(
        "COPY (SELECT * FROM (VALUES ('a', 'two\nlines', 'x', NULL, 't1, t2'), "
        "('b', 'plain', 'y', 'geo', NULL)) "
        f"AS t(id, input, expected, category, tags)) TO '{tmp_path / 'qa.parquet'}' (FORMAT parquet)"
    )
    seen = []
    for name in ("qa.csv", "qa.parquet"):
        path = write(
            tmp_path / f"{name}.yaml",
            "name: ds\n" + ECHO + f"graders: [{{type: exact}}]\ncases: {{file: {name}}}\n",
        )
        suite = load_suite(path)
        seen.append([(c.id, c.input, c.expected, c.category, c.tags) for c in suite.cases])
    assert (
        seen[0] == seen[1] == [("a", "two\nlines", "x", None, ("t1", "t2")), ("b", "plain", "y", "geo", ())]
    )


def test_every_problem_is_reported_at_once_at_its_file_and_line(tmp_path: Path) -> None:
    write(
        tmp_path / "qa.jsonl",
        '{"id": "a", "input": "x", "expected": "x"}\n'
        "\n"
        '{"id": "b", "input": 3, "expected": "x"}\n'
        "not json\n"
        '{"id": "dup", "expected": "x"}\n'
        '["a list"]\n'
        '{"id": "dup", "input": "y"}\n',
    )
    jsonl(tmp_path / "more.jsonl", [{"id": "m", "input": "x", "expected": "x"}])
    write(tmp_path / "bad.csv", 'id,input,expected\nc1,"multi\nline",z\nc2,only-two\nc3,"x",y\n')
    path = write(
        tmp_path / "suite.yaml",
        "name: ds\n" + ECHO + "cases:\n"
        "  - {id: dup, input: q, expected: q, graders: [{type: exact}]}\n"
        "  - file: qa.jsonl\n"
        "    graders: [{type: regex, pattern: '(a'}]\n"
        "  - {file: bad.csv, graders: [{type: exact}]}\n"
        "  - {file: missing.jsonl, graders: [{type: exact}]}\n"
        "  - {file: qa.txt}\n"
        "  - {file: more.jsonl, category: topic, graders: [{type: exact}]}\n",
    )
    found = problems(path)
    assert f"  {path}:6: cases[1].graders[0].pattern: not a valid regular expression" in "\n".join(found)
    # one line for the file's bad grader, not one per row
    assert sum("not a valid regular expression" in line for line in found) == 1
    text = "\n".join(found)
    for line in (
        f"{path}:8: cases[3].file: cannot read {tmp_path}/missing.jsonl: No such file or directory",
        f"{path}:9: cases[4].file: cannot tell the format of '{tmp_path}/qa.txt' from its name",
        f"{path}:10: cases[5].category: no row of {tmp_path}/more.jsonl has the column 'topic'",
        f"{tmp_path}/qa.jsonl:3: input (input): must be a string, a mapping or a list; got 3",
        f"{tmp_path}/qa.jsonl:4: not valid JSON",
        f"{tmp_path}/qa.jsonl:5: no value for column input (input); the row has: id, expected",
        f'{tmp_path}/qa.jsonl:6: a row must be a JSON object; got ["a list"]',
        f"{tmp_path}/qa.jsonl:7: id (id): case ids must be unique; got 'dup' twice",
        f"{tmp_path}/bad.csv:4: the row has 2 cells; the header has 3",
    ):
        assert line in text, (line, text)
    # one line for the one bad cell (not one per type the union allows)
    assert sum(f"{tmp_path}/qa.jsonl:3:" in line for line in found) == 1, text
    # the CSV row after a two-line cell is reported at its own line (4), the first row is fine
    assert f"{tmp_path}/bad.csv:2" not in text and f"{tmp_path}/bad.csv:5" not in text
    # the suite-file problems come first, then the datasets by line
    assert found[0].startswith(f"  {path}:")


def test_the_validate_command_names_the_dataset_line_with_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jsonl(
        tmp_path / "sub" / "qa.jsonl",
        [{"id": "a", "input": "x"}, {"id": "b", "input": {"k": 1}, "category": 5}],
    )
    write(
        tmp_path / "sub" / "suite.yaml",
        "name: ds\n" + ECHO + "graders: [{type: contains, value: x}]\ncases: {file: qa.jsonl}\n",
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["validate", "sub/suite.yaml"])
    assert result.exit_code == EXIT_BAD_INPUT
    assert "  sub/qa.jsonl:2: category (category): Input should be a valid string; got 5" in result.output
    assert "Traceback" not in result.output


def test_a_changed_dataset_file_changes_the_suite_digest(tmp_path: Path) -> None:
    data = jsonl(tmp_path / "qa.jsonl", [{"id": "a", "input": "x", "expected": "x"}])
    path = write(
        tmp_path / "suite.yaml", "name: ds\n" + ECHO + "graders: [{type: exact}]\ncases: {file: qa.jsonl}\n"
    )
    before = load_suite(path).digest
    assert load_suite(path).digest == before
    jsonl(data, [{"id": "a", "input": "x", "expected": "y"}])
    assert load_suite(path).digest != before


@pytest.mark.slow
@pytest.mark.timeout(120)  # a hang fails as a timeout, never a slow machine
def test_ten_thousand_dataset_cases_validate_quickly(tmp_path: Path) -> None:
    jsonl(
        tmp_path / "big.jsonl",
        [
            {"id": f"q{i}", "question": f"what is {i}?", "answer": str(i), "topic": f"t{i % 7}"}
            for i in range(10_000)
        ],
    )
    path = write(
        tmp_path / "suite.yaml",
        "name: big\n" + ECHO + "graders: [{type: exact}]\n"
        "cases: {file: big.jsonl, input: question, expected: answer, category: topic}\n",
    )
    suite = load_suite(path)  # about 0.6 s unloaded; a quadratic validation fails the timeout mark
    assert len(suite.cases) == 10_000 and suite.cases[-1].expected == "9999"
