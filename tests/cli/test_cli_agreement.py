"""``trialscore agreement``: judge panels and repeats of the runner, scorers of an inspect_ai log, long
tables; each figure with its interval, inter-judge and intra-judge apart, equal to the reference
libraries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.cli._judged_trials import judged_line
from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.results.records import JudgeGrade, TrialRecord

runner = CliRunner()
#: What the mock model answers to ``N+N?`` by N mod 3: exact, in words (only includes passes), wrong.
WORDS = ("{n}", "the answer is {n}", "-1")
FIGURES = ("percent_agreement", "fleiss_kappa", "krippendorff_alpha", "pabak")


def _judged_run(path: Path, items: int = 60, trials: int = 3, seed: int = 0) -> dict[tuple, float]:
    """A runner trials.jsonl: two targets, a panel of two judges with three calls each (some errored);
    returns every answered call's grade by (case, target, trial, judge, repeat)."""
    rng = np.random.default_rng(seed)
    truth = rng.random((items, 1)) < rng.beta(0.6, 0.4, (items, 1))
    grades: dict[tuple, float] = {}
    lines = []
    for target in ("m1", "m2"):
        for i in range(items):
            for t in range(trials):
                right = bool(rng.random() < 0.5) if truth[i, 0] else bool(rng.random() < 0.2)
                calls = []
                for judge, accuracy in (("gpt", 0.9), ("claude", 0.8)):
                    for r in range(3):
                        if rng.random() < 0.05:
                            calls.append(JudgeGrade(judge=judge, repeat=r, error="HTTP 500"))
                            continue
                        said = right if rng.random() < accuracy else not right
                        calls.append(JudgeGrade(judge=judge, repeat=r, score=float(said), passed=said))
                        grades[(f"q{i}", target, t, judge, r)] = float(said)
                passed = float(np.mean([c.passed for c in calls if c.passed is not None])) >= 0.5
                lines.append(judged_line(f"q{i}", t, target, calls, passed))
    path.write_text("\n".join(lines) + "\n")
    return grades


def _units(grades: dict[tuple, float], coders: list[tuple[str, int]]) -> tuple[np.ndarray, list[str]]:
    """Units (case, target, trial) x coders (judge, repeat), NaN where missing, in the reader's order."""
    keys = list(dict.fromkeys((case, target, trial) for case, target, trial, _, _ in grades))
    keys.sort(key=lambda key: (int(key[0][1:]), key[1], key[2]))
    matrix = np.array([[grades.get((*key, *coder), np.nan) for coder in coders] for key in keys])
    keep = (~np.isnan(matrix)).sum(axis=1) >= 2
    return matrix[keep], [key[0] for key, kept in zip(keys, keep, strict=True) if kept]


@pytest.mark.slow
def test_a_judged_run_gives_inter_and_intra_judge_agreement_equal_to_the_references(tmp_path: Path) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    from sklearn.metrics import cohen_kappa_score

    grades = _judged_run(tmp_path / "trials.jsonl")
    result = runner.invoke(
        app, ["agreement", str(tmp_path / "trials.jsonl"), "-f", "json", "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    (found,) = payload["sets"]
    assert found["name"] == "judge" and found["source"] == "judge calls"
    assert found["judges"] == ["gpt", "claude"] and found["targets"] == ["m1", "m2"]
    inter = found["inter"]
    for key in (*FIGURES, "prevalence_index"):
        figure = inter[key]
        assert set(figure) == {"estimate", "low", "high", "level"} and figure["level"] == 0.95
        assert figure["low"] <= figure["estimate"] <= figure["high"] and figure["low"] < figure["high"]
    # Inter-judge: each judge's first answered call; the reference on the same units.
    first = {}
    for (case, target, trial, judge, _), value in sorted(grades.items(), key=lambda kv: kv[0][4]):
        first.setdefault((case, target, trial, judge), value)
    first_grades = {(*key, 0): value for key, value in first.items()}
    matrix, _ = _units(first_grades, [("gpt", 0), ("claude", 0)])
    alpha = krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="nominal")
    assert inter["krippendorff_alpha"]["estimate"] == pytest.approx(alpha, abs=1e-12)
    both = ~np.isnan(matrix).any(axis=1)
    kappa = cohen_kappa_score(matrix[both, 0], matrix[both, 1])
    (pair,) = inter["cohen_kappa"]
    assert (pair["first"], pair["second"], pair["units"]) == ("gpt", "claude", int(both.sum()))
    assert pair["estimate"] == pytest.approx(kappa, abs=1e-12)
    # Intra-judge: each judge's three calls on the same output.
    assert set(found["intra"]) == {"gpt", "claude"}
    for judge in ("gpt", "claude"):
        own, _ = _units(grades, [(judge, r) for r in range(3)])
        alpha = krippendorff.alpha(reliability_data=own.T, level_of_measurement="nominal")
        assert found["intra"][judge]["krippendorff_alpha"]["estimate"] == pytest.approx(alpha, abs=1e-12)
        assert found["intra"][judge]["items"] == 60
    table = runner.invoke(app, ["agreement", str(tmp_path), "--resamples", "200"])
    assert table.exit_code == 0, table.output
    assert "judge (judge calls): inter-judge, each judge's first call" in table.stdout
    assert "intra-judge gpt, its repeated calls on the same output" in table.stdout
    assert "Cohen's kappa gpt vs claude" in table.stdout
    assert "percentile bootstrap over 60 items (200 resamples, seed 0)" in table.stdout


def test_a_long_table_with_a_repeat_column_equals_statsmodels_and_krippendorff(tmp_path: Path) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rng = np.random.default_rng(3)
    levels = rng.integers(0, 5, size=(40, 2))
    rows = ["case_id,trial,rater,call,score"]
    scores = {}
    for i in range(40):
        for t in range(2):
            for rater in ("a", "b", "c"):
                value = int(np.clip(levels[i, t] + rng.integers(-1, 2), 0, 4)) / 4
                scores[(i, t, rater)] = value
                rows.append(f"item{i},{t},{rater},0,{value}")
                rows.append(f"item{i},{t},{rater},1,{value if rng.random() < 0.7 else 1 - value}")
    path = tmp_path / "grades.csv"
    path.write_text("\n".join(rows) + "\n")
    args = ["agreement", str(path), "--judge-col", "rater", "--repeat-col", "call", "--grade", "score"]
    result = runner.invoke(app, [*args, "--scale", "ordinal", "-f", "json", "--resamples", "100"])
    assert result.exit_code == 0, result.output
    (found,) = json.loads(result.stdout)["sets"]
    assert found["source"] == "long table" and found["name"] == "judge column 'rater'"
    matrix = np.array([[scores[(i, t, r)] for r in "abc"] for i in range(40) for t in range(2)])
    alpha = krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="ordinal")
    assert found["inter"]["krippendorff_alpha"]["estimate"] == pytest.approx(alpha, abs=1e-12)
    codes = np.searchsorted(np.unique(matrix), matrix)
    assert found["inter"]["fleiss_kappa"]["estimate"] == pytest.approx(
        fleiss_kappa(aggregate_raters(codes)[0]), abs=1e-12
    )
    assert set(found["intra"]) == {"a", "b", "c"}
    assert found["intra"]["a"]["coders"] == ["repeat 0", "repeat 1"]


@pytest.mark.slow
def test_two_scorers_of_an_inspect_log_are_two_judges(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the inspect extra (inspect_ai) is not installed")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate

    def reply(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        output = ModelOutput.from_content(
            model="mockllm",
            content=WORDS[int(messages[-1].text.split("+")[0]) % 3].format(
                n=2 * int(messages[-1].text.split("+")[0])
            ),
        )
        output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)  # no tokenizer download
        return output

    dataset = [Sample(input=f"{i}+{i}?", target=str(2 * i), id=f"q{i}") for i in range(2, 8)]
    inspect_eval(  # match wants the exact answer, includes finds it in the text: they disagree
        Task(dataset=dataset, solver=generate(), scorer=[match(), includes()], epochs=3, name="arith"),
        model=get_model("mockllm/model", custom_outputs=reply),
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=1,
        ctl_server=False,  # no control channel (its web server) for an eval nobody steers
    )
    result = runner.invoke(app, ["agreement", str(tmp_path / "logs"), "-f", "json", "--resamples", "100"])
    assert result.exit_code == 0, result.output
    (found,) = json.loads(result.stdout)["sets"]
    assert found["source"] == "scorers" and sorted(found["judges"]) == ["includes", "match"]
    assert found["inter"]["units"] == 18 and found["inter"]["items"] == 6
    assert found["intra"] == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "case_id,trial,passed\nq1,0,1\nq2,0,0\n",
            "'judge' is not a column of the inputs and they hold one grade",
        ),
        ("case_id,trial,judge,passed\nq1,0,a,1\nq1,0,b,maybe\n", "line 3: field 'passed'"),
        ("case_id,trial,judge,passed\nq1,0,a,1\nq2,0,a,0\n", "one judge and one call per output"),
    ],
)
def test_bad_inputs_get_one_line_and_exit_2(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "grades.csv"
    path.write_text(content)
    result = runner.invoke(app, ["agreement", str(path)])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1 or "--judge-col" in result.stderr


def test_a_run_without_judge_calls_says_what_agreement_needs(tmp_path: Path) -> None:
    record = TrialRecord(case_id="q", trial=0, passed=True, verdict="pass")
    (tmp_path / "trials.jsonl").write_text(record.to_json_line() + "\n")
    result = runner.invoke(app, ["agreement", str(tmp_path / "trials.jsonl")])
    assert result.exit_code == 2
    assert "holds no judge calls; agreement needs trials graded by an llm_judge" in result.stderr
