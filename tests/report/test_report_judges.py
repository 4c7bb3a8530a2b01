"""The report's judges panel: agreement with intervals, flip rate per case, the judge's bias against
labels."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_report_label_page import HOSTILE, _run

from tests.cli_runner import CliRunner
from tests.report.conftest import needs_browser
from trialscore.cli import app
from trialscore.report.panels.judges import judges_panel
from trialscore.results.judged import JUDGE_ONLY

runner = CliRunner()


def test_a_judged_run_gets_the_panel_with_the_figures_of_the_agreement_command(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    panel = judges_panel(run)
    assert panel is not None and panel["calibration"] == JUDGE_ONLY and panel["bias"] == []
    (found,) = panel["sets"]
    assert found["intra"] == [] and found["inter"] is None  # one judge, its repeat 1 always errored
    assert panel["flips"] == [] and panel["flip_cases"] == 0
    result = runner.invoke(app, ["report", str(run), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "r.html").read_text()
    assert 'id="h-judges"' in html and f"{JUDGE_ONLY}." in html
    assert HOSTILE not in html
    plain = tmp_path / "plain.csv"
    plain.write_text("case_id,trial,passed\nq,0,1\nq,1,0\n")
    assert judges_panel(plain) is None
    runner.invoke(app, ["report", str(plain), "--out", str(tmp_path / "p.html")])
    assert 'id="h-judges"' not in (tmp_path / "p.html").read_text()


def test_a_run_no_judge_graded_is_not_read_again_for_the_panel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported run's grader results, read with its trials, say that no llm_judge listed calls."""
    import trialscore.results.judged as judged
    from trialscore.results.records import GraderResult, TrialRecord

    lines = [
        TrialRecord(
            case_id=f"q{i}",
            trial=t,
            target="m",
            passed=t > 0,
            verdict="pass" if t else "fail",
            grader_results=(GraderResult(name="exact", score=float(t > 0), passed=t > 0),),
        ).to_json_line()
        for i in range(3)
        for t in range(2)
    ]
    path = tmp_path / "trials.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(judged, "judged_inputs", lambda sources: pytest.fail("read again"))
    result = runner.invoke(app, ["report", str(path), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert 'id="h-judges"' not in (tmp_path / "r.html").read_text()
    judged_run = _run(tmp_path / "judged")  # its grader results list calls: read as before
    monkeypatch.undo()
    result = runner.invoke(app, ["report", str(judged_run), "--out", str(tmp_path / "j.html")])
    assert result.exit_code == 0, result.output
    assert 'id="h-judges"' in (tmp_path / "j.html").read_text()


@pytest.fixture
def flipping(tmp_path: Path) -> Path:
    from trialscore.results.records import GraderResult, JudgeGrade, TrialRecord

    lines = []
    for i in range(20):
        for t in range(4):
            said = [(i * t + r) % 5 != 0 for r in range(3)] if i % 4 else [True, True, True]
            calls = tuple(
                JudgeGrade(judge="gpt", repeat=r, score=float(p), passed=p) for r, p in enumerate(said)
            )
            calls += (JudgeGrade(judge="claude", repeat=0, score=float(said[0]), passed=said[0]),)
            passed = sum(said) >= 2
            grade = GraderResult(name="judge", score=float(passed), passed=passed, calls=calls)
            lines.append(
                TrialRecord(
                    case_id=f"case-{i:02d}",
                    trial=t,
                    target="m",
                    passed=passed,
                    verdict="pass" if passed else "fail",
                    grader_results=(grade,),
                ).to_json_line()
            )
    folder = tmp_path / "flip"
    folder.mkdir()
    (folder / "trials.jsonl").write_text("\n".join(lines) + "\n")
    labels = ["case_id,trial,passed"] + [
        f"case-{i:02d},{t},{'true' if (i + t) % 2 else 'false'}" for i in range(8) for t in range(4)
    ]
    (folder / "labels.csv").write_text("\n".join(labels) + "\n")
    return folder


def test_flip_rates_agreement_and_bias_against_labels(flipping: Path) -> None:
    panel = judges_panel(flipping, flipping / "labels.csv")
    assert panel is not None
    (found,) = panel["sets"]
    assert (
        found["judges"] == ["gpt", "claude"] and found["inter"] and [j for j, _ in found["intra"]] == ["gpt"]
    )
    # Flips: a trial flips when gpt's three calls disagree.
    flips = {row["case"]: row for row in panel["flips"]}
    for i in range(20):
        own = [[(i * t + r) % 5 != 0 for r in range(3)] if i % 4 else [True] * 3 for t in range(4)]
        flipped = sum(len(set(calls)) > 1 for calls in own)
        if f"case-{i:02d}" in flips:
            assert (flips[f"case-{i:02d}"]["flipped"], flips[f"case-{i:02d}"]["trials"]) == (flipped, 4)
    rates = [row["rate"] for row in panel["flips"]]
    assert rates == sorted(rates, reverse=True) and panel["flip_cases"] == 20
    (bias,) = panel["bias"]
    assert bias["labelled_items"] == 8 and bias["items"] == 20
    assert bias["bias"]["low"] < bias["bias"]["estimate"] < bias["bias"]["high"]
    assert panel["calibration"].startswith("calibrated against human labels")


@pytest.mark.slow
@needs_browser
@pytest.mark.timeout(300)
def test_the_panel_opens_offline_without_problems(tmp_path: Path, flipping: Path, open_page) -> None:
    out = tmp_path / "r.html"
    result = runner.invoke(
        app, ["report", str(flipping), "--out", str(out), "--human", str(flipping / "labels.csv")]
    )
    assert result.exit_code == 0, result.output
    page = open_page(out)
    text = page.eval("document.getElementById('judges').innerText")
    assert (
        "Flip rate per case" in text
        and "The judge against human labels" in text
        and "gpt with itself" in text
    )
    assert "judge: gpt, claude on 20 items" in text and "\nm\t8/20\t" in text  # the counts, not dict methods
    assert page.problems() == []
