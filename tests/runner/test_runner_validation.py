"""Suite validation reports every problem at once, before a run exists: schema, cross-field, environment.

Also the bounds on hostile files (non-UTF-8 bytes, recursive anchors, alias bombs, deep nesting,
endless lines), each refused with one ``file:line: rule`` message and no traceback.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import Result

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.suite import load_suite
from trialscore.runner.suite.locations import MAX_DEPTH, MAX_LINE_CHARS


def write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def problems(path: Path, **options: object) -> list[str]:
    """The problem lines of the error ``load_suite`` raises (the header checked for their count)."""
    with pytest.raises(EvaluationError) as info:
        load_suite(path, **options)
    header, *lines = str(info.value).splitlines()
    assert header == f"{path}: invalid suite ({len(lines)} problem{'s' if len(lines) != 1 else ''}):"
    return [line.strip() for line in lines]


def cli(*args: str, cwd: Path) -> Result:
    """The CLI run in this process (Typer's runner) from ``cwd``."""
    with contextlib.chdir(cwd):
        return CliRunner().invoke(app, list(args))


def cli_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI run as its own process from ``cwd`` (the smoke test of a real run)."""
    return subprocess.run(
        [sys.executable, "-m", "trialscore", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def stored_runs(store: Path) -> list[str]:
    if not store.exists():
        return []
    with sqlite3.connect(store) as db:
        try:
            return [row[0] for row in db.execute("SELECT run_id FROM runs")]
        except sqlite3.OperationalError:
            return []


# Four field errors (schema) and five cross-field errors in one file: all nine come out in one report.
NINE = """\
name: nine
targets:
  - {name: calc, type: command, argv: []}
  - {name: calc, type: command, argv: [cat]}
cases:
  - id: a
    input: x
    expected: x
    graders:
      - {type: numeric, tolerance: -1}
      - {type: llm_judge, target: nobody, rubric: r}
  - id: a
    input: x
    prompt: y
    expected: 4
    graders: [{type: exact}]
  - id: c
    input: x
    graders: [{type: contains}]
    execution: {trials: {count: 0}}
execution:
  concurrency: 0
  threshold: 0.5
  borderline: 0.7
"""


def test_field_errors_do_not_hide_cross_field_errors(tmp_path: Path) -> None:
    lines = problems(write(tmp_path, NINE))
    expected = [
        r"suite\.yaml:3: targets\[0\]\.argv: Tuple should have at least 1 item after validation, not 0",
        r"suite\.yaml:4: targets\[1\]\.name: target names must be unique; got 'calc' twice",
        r"suite\.yaml:10: cases\[0\]\.graders\[0\]\.tolerance: Input should be greater than or equal to 0",
        r"suite\.yaml:11: cases\[0\]\.graders\[1\]\.target: must name one of the suite's targets \(calc\); "
        r"got 'nobody'",
        r"suite\.yaml:12: cases\[1\]\.id: case ids must be unique; got 'a' twice",
        r"suite\.yaml:12: cases\[1\]: a case needs exactly one of input or prompt",
        r"suite\.yaml:19: cases\[2\]\.graders\[0\]\.value: a contains grader needs value or expected "
        r"\(case 'c'\)",
        r"suite\.yaml:20: cases\[2\]\.execution\.trials\.count: Input should be greater than or equal to 1",
        r"suite\.yaml:22: execution\.concurrency: Input should be greater than or equal to 1; got 0",
        r"suite\.yaml:24: execution\.borderline: must be below threshold=0\.5; got 0\.7",
    ]
    for pattern in expected:
        assert any(re.search(pattern, line) for line in lines), (pattern, lines)
    assert len(lines) == len(expected), lines


def test_validate_words_each_bad_value_once_with_a_hint(tmp_path: Path) -> None:
    """``trialscore validate`` in process: one line per bad value, the field a typo meant, how to write a
    list, and a cross-field rule beside the field error that sits next to it; exit 2, no traceback."""
    from tests.cli_runner import CliRunner
    from trialscore.cli import app

    path = write(
        tmp_path,
        """\
        name: s
        targets:
          - {name: cli, type: command, argv: python3 agent.py}
        graders: [{type: exact}]
        cases:
          - {id: a, input: 5, expected: "1"}
        execution:
          trials: {count: 0, strategy: mean}
          concurency: 4
        """,
    )
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line.strip() for line in result.output.splitlines()[1:]]
    assert lines == [
        f"{path}:3: targets[0].argv: must be a list, written [python3, agent.py]; got 'python3 agent.py'",
        f"{path}:6: cases[0].input: must be a string, a mapping or a list; got 5",
        f"{path}:8: execution.trials.count: Input should be greater than or equal to 1; got 0",
        f"{path}:8: execution.threshold: strategy 'mean' compares the mean score to threshold, "
        "which is not set",
        f"{path}:9: execution.concurency: unknown field (did you mean 'concurrency'?); got 4",
    ], result.output


def test_a_bad_regex_is_one_problem_not_also_an_empty_case_list(tmp_path: Path) -> None:
    lines = problems(
        write(
            tmp_path,
            """\
            name: s
            targets: [{name: t, type: command, argv: [cat]}]
            cases:
              - {id: c, input: x, graders: [{type: regex, pattern: '(a'}]}
            """,
        )
    )
    assert len(lines) == 1, lines
    assert re.match(
        r".*suite\.yaml:4: cases\[0\]\.graders\[0\]\.pattern: not a valid regular expression", lines[0]
    )


def test_python_grader_takes_callable_and_fn_is_refused_with_the_key_to_use(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text("def ok(output, case):\n    return True\n")
    base = """\
    name: s
    targets: [{name: t, type: command, argv: [cat]}]
    cases:
      - {id: c, input: x, graders: [{type: python, KEY: 'checks.py:ok'}]}
    """
    suite = load_suite(write(tmp_path, base.replace("KEY", "callable")))
    assert suite.cases[0].graders[0].callable == "checks.py:ok"
    (line,) = problems(write(tmp_path, base.replace("KEY", "fn")))
    assert line.endswith(
        "suite.yaml:4: cases[0].graders[0]: a python grader names its function with callable: "
        "'module:fn' or 'file.py:fn' (called as fn(output, case)), not fn; got fn: 'checks.py:ok'"
    ), line


ENVIRONMENT = """\
name: env
targets:
  - {name: agent, type: python, callable: "agent.py:answer"}
  - {name: gone, type: python, callable: "no_such_module_for_trialscore:answer"}
  - name: gpt
    type: openai
    base_url: http://127.0.0.1:9/v1
    model: m
    api_key_env: TRIALSCORE_TEST_UNSET_KEY
cases:
  - id: c
    input: x
    graders:
      - {type: python, callable: "checks.py:missing"}
      - {type: json_schema, schema_file: schema.json}
"""


@pytest.mark.slow
def test_validate_imports_callables_checks_key_variables_and_schema_files(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("def answer(case, seed):\n    return 'x'\n")
    (tmp_path / "checks.py").write_text("def present(output, case):\n    return True\n")
    (tmp_path / "schema.json").write_text('{"type": 12}')
    path = write(tmp_path, ENVIRONMENT)
    lines = problems(path)
    assert [re.sub(r"^.*?suite\.yaml:", "", line) for line in lines] == [
        "4: targets[1].callable: cannot import module 'no_such_module_for_trialscore': "
        "ModuleNotFoundError: No module named 'no_such_module_for_trialscore'",
        "9: targets[2].api_key_env: names 'TRIALSCORE_TEST_UNSET_KEY', which is not set in the environment",
        "14: cases[0].graders[0].callable: 'checks.py' has no attribute 'missing'",
        f"15: cases[0].graders[1].schema_file: '{tmp_path / 'schema.json'}' is not a valid JSON Schema "
        "(12 is not valid under any of the given schemas)",
    ]
    # The CLI says the same, one line each, exit status 2, no traceback.
    done = cli("validate", str(path), cwd=tmp_path)
    assert done.exit_code == 2, done.stderr
    assert "Traceback" not in done.stderr and "invalid suite (4 problems)" in done.stderr
    # Only the targets a run uses are checked for their environment (and the judges they need).
    lines = problems(path, targets=("agent",))
    assert not any("targets[" in line for line in lines), lines


@pytest.mark.slow
def test_run_checks_everything_before_it_stores_a_run_so_no_ghost_runs(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("def answer(case, seed):\n    return 'x'\n")
    (tmp_path / "checks.py").write_text("def present(output, case):\n    return True\n")
    (tmp_path / "schema.json").write_text('{"type": "string"}')
    path = write(tmp_path, ENVIRONMENT)
    store = tmp_path / "store.sqlite"
    done = cli_process("run", str(path), "--store", str(store), "--no-progress", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "targets[2].api_key_env: names 'TRIALSCORE_TEST_UNSET_KEY'" in done.stderr
    assert "Traceback" not in done.stderr
    assert stored_runs(store) == []
    # Through the Python API too: a suite loaded without the environment checks is checked by run_suite
    # before the run is recorded.
    suite = load_suite(path, environment=False)
    with pytest.raises(
        EvaluationError, match=r"targets\[2\]\.api_key_env: names 'TRIALSCORE_TEST_UNSET_KEY'"
    ):
        execute_suite(suite, RunOptions(store=store, progress=False, targets=("gpt",)))
    assert stored_runs(store) == []


@pytest.mark.parametrize(
    ("what", "content", "message"),
    [
        (
            "non-UTF-8 bytes",
            b"name: s\ncases:\n  - id: caf\xe9\n",
            r":3: not UTF-8 text \(byte 0xe9 at offset 26\); save it as UTF-8",
        ),
        (
            "recursive anchor",
            b"name: s\ntargets: &t\n  - {name: a, type: command, argv: *t}\n",
            r":3: alias \*t refers to the value that contains it \(a recursive anchor\)",
        ),
        (
            "alias bomb",
            b"name: s\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + b"".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n".encode()
                for i in range(8)
            )
            + b"cases: [*i]\n",
            r":\d+: \w(\[\d+\])+: the suite expands to over 1,000,000 values \(aliases of aliases\?\)",
        ),
        (
            "deep nesting",
            b"name: s\ncases: " + b"[" * (MAX_DEPTH + 5) + b"]" * (MAX_DEPTH + 5) + b"\n",
            rf":2: nested deeper than {MAX_DEPTH} levels of mappings and lists",
        ),
        (
            "endless line",
            b"name: s\ncases:\n  - id: c\n    input: " + b"x" * (MAX_LINE_CHARS + 1) + b"\n",
            r":4: the line is 1,000,012 characters long; a suite line is at most 1,000,000",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 30 else "",
)
@pytest.mark.slow
@pytest.mark.timeout(120)  # a hang fails as a timeout, never as a slow machine
def test_hostile_files_are_refused_quickly_with_one_line(
    tmp_path: Path, what: str, content: bytes, message: str
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_bytes(content)
    done = cli("validate", str(path), cwd=tmp_path)
    assert done.exit_code == 2, (what, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert re.search(re.escape(str(path)) + message, done.stderr), (what, done.stderr)


# Names that results carry must survive being read back: everything `run` would refuse after spending
# money on the trials, `validate` refuses first, at the suite's (or the data file's) line.
BROKEN_NAMES = """\
name: names
targets:
  - {name: "two\\nlines", type: command, argv: [echo, hi]}
  - {name: "   ", type: command, argv: [echo, hi]}
  - {name: ok, type: command, argv: [echo, hi]}
graders: [{type: exact, value: hi}]
cases:
  - id: "line\\nbreak"
    input: x
  - id: "  "
    input: x
  - id: fine
    input: x
    category: "skill\\r\\n"
  - {file: data.csv}
"""


@pytest.mark.slow
def test_names_with_line_breaks_or_only_spaces_are_refused_by_validate_where_written(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text('id,input,category\n"q\n1",x,\nq2,y,"  "\nq3,z,ok\n')
    path = write(tmp_path, BROKEN_NAMES)
    found = [line.removeprefix(f"{tmp_path}/") for line in problems(path)]
    line_break = "must be on one line (no line break)"
    blank = "must not be blank (only spaces)"
    assert [line.split(";")[0].split(": results")[0] for line in found] == [
        f"suite.yaml:3: targets[0].name: {line_break}",
        f"suite.yaml:4: targets[1].name: {blank}",
        f"suite.yaml:8: cases[0].id: {line_break}",
        f"suite.yaml:10: cases[1].id: {blank}",
        f"suite.yaml:14: cases[2].category: {line_break}",
        f"data.csv:2: id (id): {line_break}",
        f"data.csv:4: category (category): {blank}",
    ]
    assert found[2].endswith("got 'line\\nbreak'") and found[4].endswith("got 'skill\\r\\n'")
    done = cli("validate", str(path), cwd=tmp_path)
    assert done.exit_code == 2 and "Traceback" not in done.stderr
    store = tmp_path / "store.sqlite"
    done = cli("run", str(path), "--store", str(store), "--no-progress", cwd=tmp_path)
    assert done.exit_code == 2 and line_break in done.stderr
    assert stored_runs(store) == []  # nothing ran: no money spent on trials whose results cannot be read
