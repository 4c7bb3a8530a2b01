"""GitHub workflow commands and the step summary file."""

from __future__ import annotations

from pathlib import Path

import pytest

from trialscore.ci.github import annotation, append_step_summary, escape_data, escape_property
from trialscore.ci.junit import xml_text
from trialscore.errors import EvaluationError, OutputError


def test_workflow_command_escaping_follows_github_rules() -> None:
    assert escape_data("100%\r\nok") == "100%25%0D%0Aok"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    line = annotation("error", "x: 5%\nmore", file="dir/s,1.yaml", line=12, title="case a:b")
    assert line == "::error file=dir/s%2C1.yaml,line=12,title=case a%3Ab::x: 5%25%0Amore"
    assert "\n" not in line
    with pytest.raises(EvaluationError, match="level must be error, warning or notice"):
        annotation("fatal", "x")


def test_step_summary_appends_only_when_the_variable_is_set(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    assert append_step_summary("# a", {}) is None and not path.exists()
    assert append_step_summary("# a", {"GITHUB_STEP_SUMMARY": str(path)}) == path
    append_step_summary("# b\n", {"GITHUB_STEP_SUMMARY": str(path)})
    assert path.read_text() == "# a\n\n# b\n\n"
    with pytest.raises(OutputError, match=r"f\.md': cannot write the step summary \(GITHUB_STEP_SUMMARY\)"):
        append_step_summary("x", {"GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "dir" / "f.md")})


def test_xml_text_replaces_characters_xml_cannot_hold() -> None:
    assert xml_text("ok\x01\x1b[31m\ttab") == "ok\ufffd\ufffd[31m\ttab"
