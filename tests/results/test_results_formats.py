"""Seed-003 per-case results, wide matrices, and real inspect_ai logs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from _readers import by_item

from trialscore.core.bank import Bank
from trialscore.errors import EvaluationError
from trialscore.results.columns import ColumnMap
from trialscore.results.readers import read_counts

SEED_003_CASES = [
    {
        "eval_id": "case-1",
        "target": "agent-a",
        "score": 0.8,
        "verdict": "pass",
        "trials": [
            {"attempt": 0, "score": 0.6, "verdict": "borderline"},
            {"attempt": 1, "score": 0.9, "verdict": "pass"},
            {"attempt": 2, "score": 0.7, "verdict": "borderline"},
        ],
        "aggregation": {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 3},
    },
    {
        "eval_id": "case-2",
        "target": "agent-a",
        "score": 0.0,
        "verdict": "fail",
        "cost_limited": True,
        "trials": [{"attempt": 0, "score": 0.0, "verdict": "fail", "cost_usd": 4.0}],
        "aggregation": {"strategy": "pass_at_k", "passed_attempts": 0, "total_attempts": 1},
    },
    {"eval_id": "case-3", "target": "agent-b", "score": 0.8, "verdict": "pass"},
    {
        "eval_id": "case-1",
        "target": "agent-b",
        "verdict": "fail",
        "trials": [
            {"attempt": 0, "score": None, "verdict": "error"},
            {"attempt": 1, "score": 0.2, "verdict": "fail"},
        ],
    },
]


@pytest.mark.parametrize("layout", ["jsonl", "array"])
def test_seed_003_cases_become_trials(tmp_path, layout):
    if layout == "jsonl":
        path = tmp_path / "results.jsonl"
        path.write_text("".join(json.dumps(case) + "\n" for case in SEED_003_CASES))
    else:
        path = tmp_path / "results.json"
        path.write_text(json.dumps(SEED_003_CASES, indent=2))
    counts = read_counts([path], by=["target"])
    assert by_item(counts) == {
        ("agent-a", "case-1"): (3, 1, 0),  # borderline is not a pass (seed 003: passed_attempts = 1)
        ("agent-a", "case-2"): (1, 0, 0),  # cost-limited: the one trial that ran
        ("agent-b", "case-1"): (1, 0, 1),  # the errored attempt is counted apart
        ("agent-b", "case-3"): (1, 1, 0),  # single-trial shape: one trial
    }
    assert counts.stats.rows_read == 7
    assert counts.stats.rows_errored == 1
    # the aggregation block agrees with our count of passed attempts
    assert SEED_003_CASES[0]["aggregation"]["passed_attempts"] == by_item(counts)[("agent-a", "case-1")][1]


def test_seed_003_scores_with_a_threshold(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in SEED_003_CASES))
    counts = read_counts([path], by=["target"], columns=ColumnMap(threshold=0.7))
    assert by_item(counts)[("agent-a", "case-1")] == (3, 2, 0)


def test_seed_003_bad_cases_are_named_or_skipped(tmp_path):
    path = tmp_path / "results.jsonl"
    lines = [
        json.dumps(SEED_003_CASES[0]),
        json.dumps({"eval_id": "case-9", "trials": "three"}),
        "{broken",
        json.dumps({"eval_id": "case-8", "trials": [{"attempt": 0, "verdict": "maybe"}]}),
    ]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        EvaluationError, match=r"results\.jsonl line 2: field 'trials' must be a non-empty list"
    ):
        read_counts([path])
    counts = read_counts([path], skip_invalid=True)
    assert by_item(counts) == {("case-1",): (3, 1, 0)}
    stats = counts.stats
    assert (stats.rows_read, stats.rows_skipped, stats.rows_used) == (6, 3, 3)
    (tmp_path / "verdict.jsonl").write_text(lines[3] + "\n")
    with pytest.raises(
        EvaluationError,
        match=r"verdict\.jsonl line 1 trial 1: field 'verdict' must be pass, fail, borderline",
    ):
        read_counts([tmp_path / "verdict.jsonl"])


def test_wide_npy_npz_and_csv_match_bank_from_matrix(tmp_path):
    rng = np.random.default_rng(4)
    first = (rng.random((30, 8)) < 0.6).astype(np.int8)
    second = rng.random((30, 8)) < 0.3
    np.save(tmp_path / "a.npy", first)
    np.savez(tmp_path / "b.npz", model_x=first, model_y=second)
    np.savetxt(tmp_path / "c.csv", first, fmt="%d", delimiter=",", header="items x trials")
    np.savetxt(tmp_path / "d.tsv", first, fmt="%d", delimiter="\t")
    expected = Bank.from_matrix(first)
    for name in ("a.npy", "c.csv", "d.tsv"):
        counts = read_counts([tmp_path / name])
        (group,) = counts.groups()
        assert group.item.tolist() == sorted(str(index) for index in range(30))  # items sort as text
        rows = [int(item) for item in group.item]
        assert group.c.tolist() == expected.c[rows].tolist()
        assert group.n.tolist() == expected.n[rows].tolist()
        assert counts.stats.rows_read == first.size
    split = list(read_counts([tmp_path / "b.npz"], by=["file"]).groups())
    assert [group.key[0][1] for group in split] == [
        f"{tmp_path / 'b.npz'}:model_x",
        f"{tmp_path / 'b.npz'}:model_y",
    ]
    rows = [int(item) for item in split[1].item]
    assert split[1].c.tolist() == Bank.from_matrix(second).c[rows].tolist()


def test_wide_nan_marks_errored_trials_and_bad_entries_are_named(tmp_path):
    matrix = np.array([[1.0, np.nan, 0.0], [np.nan, np.nan, np.nan], [1.0, 1.0, 1.0]])
    np.save(tmp_path / "m.npy", matrix)
    counts = read_counts([tmp_path / "m.npy"])
    assert by_item(counts) == {("0",): (2, 1, 1), ("1",): (0, 0, 3), ("2",): (3, 3, 0)}
    (group,) = counts.groups()
    assert group.items_all_errored == 1
    assert group.bank().n.tolist() == [2, 3]
    np.save(tmp_path / "bad.npy", np.array([[1, 0], [2, 1]]))
    with pytest.raises(
        EvaluationError,
        match=r"bad\.npy must be binary \(0 or 1, NaN for an errored trial\); got 2 at item 1, trial 0",
    ):
        read_counts([tmp_path / "bad.npy"])
    (tmp_path / "ragged.csv").write_text("1,0,1\n1,0\n")
    with pytest.raises(
        EvaluationError, match=r"ragged\.csv line 2: cannot read an items x trials 0/1 matrix: 2 values"
    ):
        read_counts([tmp_path / "ragged.csv"])


def _inspect_log(tmp_path, log_format: str, name: str = "tiny"):
    """A real inspect_ai log in ``tmp_path / "logs"``: mockllm gets q1 right twice of 3 epochs, q2 never."""
    pytest.importorskip("inspect_ai", reason="the inspect extra (inspect_ai) is not installed")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    answers = {"2+2?": ["4", "4", "5"], "3+3?": ["9", "9", "9"]}
    asked: Counter[str] = Counter()

    def reply(messages, tools, tool_choice, config):
        question = messages[-1].text
        answer = answers[question][asked[question]]
        asked[question] += 1
        output = ModelOutput.from_content(model="mockllm", content=answer)
        # usage given up front, so mockllm does not estimate tokens (which needs a download)
        output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return output

    task = Task(
        dataset=[Sample(input="2+2?", target="4", id="q1"), Sample(input="3+3?", target="6", id="q2")],
        solver=generate(),
        scorer=match(),
        epochs=3,
        name=name,
    )
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/model", custom_outputs=reply),
        log_dir=str(tmp_path / "logs"),
        log_format=log_format,
        display="none",
    )
    assert log.status == "success"
    return log.location


@pytest.fixture(scope="module")
def tiny_eval(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The task tiny's real ``.eval`` log (in the folder ``logs`` of the path given), written once for
    the module (an eval takes inspect_ai about a third of a second): one test reads it alone, another
    with a log of its own beside it, as a folder."""
    base = tmp_path_factory.mktemp("inspect")
    return base, _inspect_log(base, "eval")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside inspect_ai
@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_real_inspect_ai_log_epochs_become_trials(tmp_path, log_format, request):
    if log_format == "eval":
        _, location = request.getfixturevalue("tiny_eval")
    else:
        location = _inspect_log(tmp_path, log_format)
    counts = read_counts([location], by=["target", "scorer"])
    assert by_item(counts) == {
        ("mockllm/model", "match", "q1"): (3, 2, 0),
        ("mockllm/model", "match", "q2"): (3, 0, 0),
    }
    assert counts.stats.rows_read == 6
    suite = read_counts([location], by=["suite"])
    assert [group.label for group in suite.groups()] == ["suite=tiny"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside inspect_ai
def test_a_folder_of_inspect_ai_logs_reads_every_log(tiny_eval):
    from tests.cli_runner import CliRunner
    from trialscore.cli import app
    from trialscore.results.formats import detect_format

    base, tiny = tiny_eval
    logs = [tiny, _inspect_log(base, "json", "small")]
    folder = base / "logs"
    (folder / "notes.json").write_text('{"about": "not a log"}\n')
    (folder / "README.txt").write_text("eval logs of the tiny and small tasks\n")
    assert detect_format(folder).NAME == "inspect"
    counts = read_counts([folder], by=["suite"])
    assert by_item(counts) == {
        ("small", "q1"): (3, 2, 0),
        ("small", "q2"): (3, 0, 0),
        ("tiny", "q1"): (3, 2, 0),
        ("tiny", "q2"): (3, 0, 0),
    }
    assert sorted(counts.stats.sources) == sorted(str(log).removeprefix("file://") for log in logs)
    assert counts.stats.rows_read == 12
    result = CliRunner().invoke(app, ["score", str(folder), "--by", "file", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["groups"]) == 2
