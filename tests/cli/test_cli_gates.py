"""Gates on ``trialscore run`` (exit 0 / 1 / 2 / 3), JUnit XML, the step summary and annotations."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_NOT_JUDGED, EXIT_NOTHING_GRADED

runner = CliRunner()

SUITE = """\
name: gated
targets:
  - name: echo
    type: command
    argv: [cat]
cases:
  - id: good
    input: "yes"
    expected: "yes"
    graders: [{type: exact}]
  - id: bad <&>
    input: "no"
    expected: "yes"
    graders: [{type: exact}]
  - id: also-good
    input: "yes"
    expected: "yes"
    category: "a, b: c"
    graders: [{type: exact}]
execution: {trials: {count: 3}}
"""


def _suite(tmp_path: Path, text: str = SUITE) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def _run(tmp_path: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    base = ["run", str(_suite(tmp_path)), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    return runner.invoke(app, [*base, "--out", str(tmp_path / "out"), *args], env=env)


@pytest.mark.slow
def test_fail_under_exits_0_when_met_and_1_when_not(tmp_path: Path) -> None:
    ok = _run(tmp_path, "--fail-under", "pass@1=0.6", "--fail-under", "pass^3=0.6")
    assert ok.exit_code == 0, ok.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    results = summary["gates"]["results"]
    assert [(g["metric"], g["passed"]) for g in results] == [("pass@1", True), ("pass^3", True)]
    assert results[0]["value"] == pytest.approx(2 / 3) and results[0]["bar"] == 0.6
    failed = _run(tmp_path, "--fail-under", "pass@1=0.7")
    assert failed.exit_code == EXIT_GATE_FAILED, failed.output
    assert "gate failed: pass@1 of echo" in failed.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["gates"]["failed"] is True and summary["gates"]["results"][0]["passed"] is False


@pytest.mark.slow
def test_confident_rule_judges_the_lower_end_of_the_interval(tmp_path: Path) -> None:
    point = _run(tmp_path, "--fail-under", "avg=0.6")
    confident = _run(tmp_path, "--fail-under", "avg=0.6", "--gate-rule", "confident")
    assert point.exit_code == 0 and confident.exit_code == EXIT_GATE_FAILED
    gate = json.loads((tmp_path / "out" / "summary.json").read_text())["gates"]["results"][0]
    assert "lower end" in gate["rule"] and gate["value"] == pytest.approx(2 / 3)


def test_max_error_rate_gate(tmp_path: Path) -> None:
    assert _run(tmp_path, "--max-error-rate", "0").exit_code == 0
    gate = json.loads((tmp_path / "out" / "summary.json").read_text())["gates"]["results"][0]
    assert (gate["gate"], gate["value"], gate["passed"]) == ("max-error-rate", 0.0, True)


@pytest.mark.slow
def test_bad_gate_options_exit_2_before_any_trial(tmp_path: Path) -> None:
    for args, message in [
        (["--fail-under", "pass@k=0.8"], "needs its k"),
        (["--fail-under", "pass@1=1.5"], "the bar must be a number from 0 to 1"),
        (["--fail-under", "nonsense=0.5"], "metric must be one of"),
        (["--baseline", "no-such-run"], "no-such-run: no such file or folder"),
        (["--fail-on", "regression"], "--fail-on regression needs --baseline"),
        (["--fail-under", "pass@99=0.5"], "pass@99 needs 99 trials of every case; 3 cases"),
        (["--fail-under", "pass@1=-0.1"], "the bar must be a number from 0 to 1"),
    ]:
        result = _run(tmp_path, *args)
        assert result.exit_code == EXIT_BAD_INPUT, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "s.sqlite").exists()  # refused before the store was opened: no run, no trial


# An agent whose every trial of case 'shaky' errors on trial 1 (an infrastructure error, not a failure).
FLAKY_AGENT = """
def answer(case, seed):
    if case.id == "shaky" and seed % 2:
        raise RuntimeError("sandbox unavailable")
    return {"output": "yes"}
"""


@pytest.mark.slow
def test_a_bar_that_errored_trials_leave_unjudged_exits_3_never_1(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(FLAKY_AGENT)
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: flaky-infra\ntargets: [{name: a, type: python, callable: 'agent.py:answer'}]\n"
        "graders: [{type: exact}]\nexecution: {trials: {count: 4}, retries: 0, seed: 3}\n"
        "cases:\n  - {id: steady, input: q, expected: 'yes'}\n  - {id: shaky, input: q, expected: 'yes'}\n"
    )
    args = [
        "run",
        str(suite),
        "--store",
        str(tmp_path / "s.sqlite"),
        "--no-progress",
        "--out",
        str(tmp_path / "o"),
    ]
    result = runner.invoke(app, [*args, "--fail-under", "pass@4=0.5", "--fail-under", "pass@1=0.5"])
    assert result.exit_code == EXIT_NOT_JUDGED, result.output
    assert "not judged" in result.output and "case 'shaky' has fewer" in result.output
    assert "gate could not judge (exit status 3): pass@4 of a" in result.output
    gates = json.loads((tmp_path / "o" / "summary.json").read_text())["gates"]
    assert gates["failed"] is False and gates["not_judged"] == ["pass@4 of a"]
    assert [(g["metric"], g["judged"], g["passed"]) for g in gates["results"]] == [
        ("pass@4", False, False),
        ("pass@1", True, True),
    ]
    failing = runner.invoke(app, [*args, "--fail-under", "pass@4=0.5", "--fail-under", "pass@1=1.5"])
    assert failing.exit_code == EXIT_BAD_INPUT  # a bar outside [0, 1]: refused first
    failed = runner.invoke(
        app, [*args, "--fail-under", "pass@4=0.5", "--fail-under", "avg=0.9", "--gate-rule", "confident"]
    )
    assert failed.exit_code == EXIT_GATE_FAILED, failed.output  # a judged failure wins over "not judged"


def _cases_suite(answers: list[str], trials: int = 3) -> str:
    """A case per answer; an answer of P and F letters passes the trials whose letter is P."""
    cases = "".join(
        f'  - id: case-{i}\n    input: "{answer}"\n    expected: "yes"\n    graders: [{{type: exact}}]\n'
        for i, answer in enumerate(answers)
    )
    return f"name: many\ntargets: [{{name: echo, type: command, argv: [sh, agent.sh]}}]\ncases:\n{cases}" + (
        f"execution: {{trials: {{count: {trials}}}}}\n"
    )


#: Answers "yes" when the letter of its trial in the case input is P (else the input itself): the
#: shell's builtins alone, no process but the shell's own for each trial.
AGENT = (
    'read -r pattern; rest=$pattern; i=0; while [ "$i" -lt "$TRIALSCORE_TRIAL" ]; do rest=${rest#?}; '
    'i=$((i + 1)); done; case $rest in P*) echo yes ;; *) echo "$pattern" ;; esac\n'
)


@pytest.mark.slow
def test_baseline_regression_fails_the_gate_and_annotates_only_the_cases_that_changed(tmp_path: Path) -> None:
    (tmp_path / "agent.sh").write_text(AGENT)
    suite = tmp_path / "suite.yaml"
    suite.write_text(_cases_suite(["P" * 10] * 10 + ["P" * 9 + "F", "P" * 10], trials=10))
    args = ["run", str(suite), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    assert runner.invoke(app, args).exit_code == 0  # the baseline: case-10 passes 9 of 10, the others all
    suite.write_text(_cases_suite(["F" * 10] * 10 + ["P" * 8 + "FF", "P" * 10], trials=10))
    gated = [*args, "--baseline", "latest", "--fail-on", "regression", "--annotations", "github"]
    result = runner.invoke(app, gated)
    assert result.exit_code == EXIT_GATE_FAILED, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("::error ")]
    regressed = [line for line in lines if "regressed" in line]
    # case-0..9 fell from 10/10 to 0/10 (Fisher exact p = 1.1e-05, under 0.05/12 after Holm)
    assert len(regressed) == 10 and all(
        "passed 10/10 -> 0/10 (Fisher exact p=1.1e-05" in line for line in regressed
    )
    assert any(",line=4," in line and "case-0 regressed" in line for line in regressed)
    # case-10's 0.9 -> 0.8 is noise: not annotated, though its target regressed
    assert not any("case-10" in line for line in lines), lines
    assert sum("failed on 10 of 10" in line for line in lines) == 10
    # Without --fail-on the verdict is reported and the run passes.
    suite.write_text(_cases_suite(["F" * 10] * 12, trials=10))
    assert runner.invoke(app, [*args, "--baseline", "latest~1"]).exit_code == 0


def test_every_trial_errored_exits_3(tmp_path: Path) -> None:
    broken = SUITE.replace("argv: [cat]", f"argv: [{tmp_path / 'missing-agent'}]")
    broken = broken.replace("execution: {trials: {count: 3}}", "execution: {trials: {count: 2}, retries: 0}")
    _suite(tmp_path, broken)
    args = ["run", str(tmp_path / "suite.yaml"), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    result = runner.invoke(app, [*args, "--fail-under", "pass@1=0.1"])
    assert result.exit_code == EXIT_NOTHING_GRADED, result.output


def test_junit_xml_has_a_testcase_per_case_and_target(tmp_path: Path) -> None:
    junit = tmp_path / "reports" / "junit.xml"
    assert _run(tmp_path, "--junit", str(junit)).exit_code == 0
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "0")
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "gated · echo" and suite.find("properties") is not None
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert set(cases) == {"good", "bad <&>", "also-good"}
    bad = cases["bad <&>"]
    failure = bad.find("failure")
    assert failure is not None and "failed on 3 of 3" in failure.get("message", "")
    assert failure.text is not None and failure.text.count("trial ") == 3
    props = {p.get("name"): p.get("value") for p in bad.find("properties").findall("property")}  # type: ignore[union-attr]
    assert props["passed"] == "0/3" and props["flaky"] == "false" and props["trial.0"].startswith("fail")
    assert cases["good"].find("failure") is None
    assert cases["also-good"].find("properties/property[@name='category']").get("value") == "a, b: c"  # type: ignore[union-attr]
    assert "&lt;&amp;&gt;" in junit.read_text()  # escaped in the file, read back intact


@pytest.mark.slow
def test_step_summary_is_appended_by_run_score_and_compare(tmp_path: Path) -> None:
    summary = tmp_path / "step.md"
    summary.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    assert _run(tmp_path, "--fail-under", "pass@1=0.5", env=env).exit_code == 0
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "### trialscore run" in text
    assert "| echo |" in text and "bad &lt;&amp;&gt;" in text and "<&>" not in text
    assert "### gates: passed" in text
    store = ["--store", str(tmp_path / "s.sqlite")]
    assert runner.invoke(app, ["score", "latest", *store], env=env).exit_code == 0
    assert runner.invoke(app, ["compare", "latest", "latest", *store], env=env).exit_code == 0
    text = summary.read_text()
    assert text.count("| metric | estimate | low | high |") == 1 and "trialscore compare" in text
