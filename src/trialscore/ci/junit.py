"""A run as JUnit XML: a ``testsuite`` per target, a ``testcase`` per case, its trials as properties.

The shape CI systems read (Jenkins, GitLab, GitHub test reporters)::

    testsuites (tests, failures, errors, skipped)
      testsuite name="SUITE · TARGET" (tests, failures, errors, skipped, timestamp)
        properties: run_id, target, trials_per_case, calibration (graded by an llm_judge: judge-only)
        testcase classname="SUITE.TARGET" name="CASE" time="seconds"
          properties: verdict, passed ("3/5"), pass_rate, flaky, errored, trial.0 .. trial.N
          failure  (case verdict fail: the failing trials and their graders' reasons)
          error    (every trial errored: the error messages)
          skipped  (the cost limit stopped the case before any trial)

A case whose trials disagree (``0 < c < n``) has ``flaky = true``.  Every text is
escaped by the XML writer, and characters XML 1.0 cannot hold (control characters) are
replaced by ``U+FFFD``.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trialscore.results.records import TrialRecord
    from trialscore.runner.run_report import RunReport
    from trialscore.runner.strategies import CaseResult

__all__ = ["run_junit", "xml_text"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: Longest message text kept per trial reason (the full text is in trials.jsonl).
_REASON_CHARS = 500


def xml_text(value: object) -> str:
    """``value`` as text XML 1.0 can hold: control characters become U+FFFD.

    >>> xml_text("a\\x00b <c>")
    'a\\ufffdb <c>'
    """
    return _NOT_XML.sub("\ufffd", str(value))


def _reason(record: TrialRecord) -> str:
    if record.errored:
        text = f"error: {record.error or 'unknown error'}"
    else:
        failing = [g for g in record.grader_results if not g.passed]
        parts = [f"{g.name}: {g.reason or f'score {g.score:g}'}" for g in failing]
        text = "; ".join(parts) or f"{record.verdict} (score {record.score})"
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def _property(parent: ET.Element, name: str, value: object) -> None:
    ET.SubElement(parent, "property", name=xml_text(name), value=xml_text(value))


def _testcase(suite: str, case: CaseResult, records: Sequence[TrialRecord]) -> tuple[ET.Element, str]:
    """The case's testcase element and its outcome (passed, failure, error, skipped)."""
    latency = math.fsum(r.latency_s for r in records if r.latency_s is not None)
    element = ET.Element(
        "testcase",
        classname=xml_text(f"{suite}.{case.target}"),
        name=xml_text(case.eval_id),
        time=f"{latency:.3f}",
    )
    properties = ET.SubElement(element, "properties")
    scored = case.total_attempts
    flaky = 0 < case.passed_attempts < scored
    _property(properties, "verdict", case.verdict)
    _property(properties, "passed", f"{case.passed_attempts}/{scored}")
    _property(properties, "pass_rate", "" if not scored else f"{case.passed_attempts / scored:.6g}")
    _property(properties, "flaky", str(flaky).lower())
    _property(properties, "errored", case.errored_attempts)
    if case.category:
        _property(properties, "category", case.category)
    for record in records:
        score = "" if record.score is None else f" score={record.score:g}"
        _property(properties, f"trial.{record.trial}", f"{record.verdict}{score}")
    failing = [r for r in records if r.errored or r.passed is False]
    body = "\n".join(f"trial {r.trial}: {_reason(r)}" for r in failing)
    if case.verdict == "fail":
        message = f"{case.eval_id} failed on {scored - case.passed_attempts} of {scored} scored trials"
        ET.SubElement(element, "failure", message=xml_text(message), type="fail").text = xml_text(body)
        return element, "failure"
    if case.verdict == "error":
        message = f"every trial of {case.eval_id} errored ({case.errored_attempts})"
        ET.SubElement(element, "error", message=xml_text(message), type="error").text = xml_text(body)
        return element, "error"
    if case.verdict == "skipped":
        ET.SubElement(element, "skipped", message="the cost limit stopped this case before any trial")
        return element, "skipped"
    return element, "passed"


def _counts(element: ET.Element, outcomes: Sequence[str]) -> None:
    element.set("tests", str(len(outcomes)))
    for name, key in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        element.set(name, str(outcomes.count(key)))


def _testsuite(root: ET.Element, report: RunReport, target: str) -> list[str]:
    """One target's ``testsuite`` (a testcase per case, its trials read from the store case by case);
    the outcome of each testcase."""
    suite = report.suite.name
    element = ET.SubElement(root, "testsuite", name=xml_text(f"{suite} · {target}"))
    properties = ET.SubElement(element, "properties")
    _property(properties, "run_id", report.run_id)
    _property(properties, "target", target)
    if report.suite.judge_targets():  # graded by an llm_judge: its verdicts, not checked ones
        from trialscore.results.judged import JUDGE_ONLY

        _property(properties, "calibration", JUDGE_ONLY)
    outcomes = []
    times = []
    for case in (case for case in report.cases if case.target == target):
        records = list(report.iter_records(target, case.eval_id))  # one case at a time, trial order
        times += [record.started_at for record in records if record.started_at]
        testcase, outcome = _testcase(suite, case, records)
        element.append(testcase)
        outcomes.append(outcome)
    if times:
        element.set("timestamp", min(times).replace(microsecond=0, tzinfo=None).isoformat())
    _counts(element, outcomes)
    return outcomes


def run_junit(report: RunReport) -> str:
    """The JUnit XML document of a completed run (see the module docstring for its shape)."""
    suite = report.suite.name
    root = ET.Element("testsuites", name=xml_text(f"trialscore {suite}"))
    everything: list[str] = []
    with report.reader.session():
        for target in report.settings.get("targets", []):
            everything += _testsuite(root, report, target)
    _counts(root, everything)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
