"""The one reader's trial detail: for every format, the trials it keeps are the trials it counts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trialscore.errors import EvaluationError
from trialscore.results.counts import ItemCounts
from trialscore.results.readers import read_counts
from trialscore.results.trials import TRIAL_FIELDS

FIXTURES = Path(__file__).parent / "fixtures"
TOOL_LOGS = {
    "deepeval": "deepeval/runs",
    "harbor": "harbor/jobs",
    "helm": "helm/benchmark_output",
    "lm-eval": "lm-eval/out",
    "openai-evals": "openai-evals/logs",
    "promptfoo": "promptfoo/results.jsonl",
    "swe-bench": "swe-bench/reports",
    "tau-bench": "tau-bench/tool-calling-gpt-4o-mini-0.0_range_0-3_user-gpt-4o-llm_1122203000.json",
    "tau2-bench": "tau2-bench/airline_llm_agent_gpt-4.1-mini_user_simulator_gpt-4.1.json",
}


def _agree(counts: ItemCounts) -> None:
    """Each counted row's trials: as many as it counts, its passes and errors, in trial order."""
    trials = counts.trials
    assert trials is not None
    starts = trials.starts.tolist()
    assert len(starts) == counts.item.size + 1 and starts[-1] == len(trials.verdicts) == len(trials.trial)
    for row in range(counts.item.size):
        letters = trials.verdicts[starts[row] : starts[row + 1]]
        assert len(letters) == counts.graded[row] + counts.errored[row]
        assert (letters.count("p"), letters.count("e")) == (counts.c[row], counts.errored[row])
        indices = trials.trial[starts[row] : starts[row + 1]]
        assert indices == sorted(indices)
    for name in ("score", "cost", "latency"):
        assert getattr(trials, name).shape == (len(trials.verdicts),)


@pytest.mark.slow
@pytest.mark.parametrize("tool", list(TOOL_LOGS))
def test_every_tool_log_keeps_the_trials_it_counts(tool: str) -> None:
    path = FIXTURES / TOOL_LOGS[tool]
    counted = read_counts([path], group_targets=True)
    detailed = read_counts([path], group_targets=True, detail=True)
    _agree(detailed)
    assert detailed.stats.rows_read == counted.stats.rows_read
    assert int(detailed.c.sum()) == int(counted.c.sum())
    assert int(detailed.errored.sum()) == int(counted.errored.sum())
    assert "target" in detailed.by and detailed.trials is not None and detailed.trials.fields


def test_file_formats_keep_their_trials_in_trial_order_or_input_order(tmp_path: Path) -> None:
    rows = [
        {"case_id": "b", "trial": 1, "passed": True, "score": 0.9, "latency": 2.5},
        {"case_id": "a", "trial": 1, "passed": None, "error": "timeout"},
        {"case_id": "a", "trial": 0, "passed": False, "score": 0.1, "cost": 0.25},
        {"case_id": "b", "trial": 0, "passed": False, "score": 0.2},
    ]
    parquet = tmp_path / "t.parquet"
    names = dict.fromkeys(name for row in rows for name in row)
    pq.write_table(pa.Table.from_pylist([dict.fromkeys(names) | row for row in rows]), parquet)
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for path in (parquet, jsonl):
        counts = read_counts([path], detail=True)
        _agree(counts)
        trials = counts.trials
        assert trials is not None
        assert (counts.item.tolist(), trials.verdicts, trials.trial) == (["a", "b"], "fefp", [0, 1, 0, 1])
        assert trials.error == [None, "timeout", None, None]
        np.testing.assert_array_equal(trials.score, [0.1, np.nan, 0.2, 0.9])
        np.testing.assert_array_equal(trials.cost, [0.25, np.nan, np.nan, np.nan])
        np.testing.assert_array_equal(trials.latency, [np.nan, np.nan, np.nan, 2.5])
        assert trials.detailed and {"score", "cost", "latency", "error"} <= trials.fields
    # no trial column: the input's order, numbered 0, 1, ...
    csv = tmp_path / "t.csv"
    csv.write_text("case_id,passed\nq1,0\nq2,1\nq1,1\nq1,\n")
    counts = read_counts([csv], detail=())
    _agree(counts)
    assert counts.trials is not None and (counts.trials.verdicts, counts.trials.trial) == (
        "fpep",
        [0, 1, 2, 0],
    )
    assert not counts.trials.detailed and counts.trials.fields == frozenset()
    # a wide matrix counts only: passes, then failures, then errors
    wide = tmp_path / "t.csv"
    wide.write_text("1,0,1\n0,nan,0\n")
    counts = read_counts([wide], detail=True)
    _agree(counts)
    assert counts.trials is not None and counts.trials.verdicts == "ppfffe"


def test_skipped_rows_are_left_out_of_the_trials_as_of_the_counts(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("case_id,trial,passed\na,0,1\na,1,maybe\na,2,0\nb,0,1\n")
    counts = read_counts([path], skip_invalid=True, detail=True)
    _agree(counts)
    assert counts.stats.rows_skipped == 1 and counts.trials is not None
    assert (counts.trials.verdicts, counts.trials.trial) == ("pfp", [0, 2, 0])


def test_a_scorer_picked_keeps_its_own_trials(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("case_id,trial,scorer,passed\na,0,x,1\na,0,y,0\na,1,x,0\na,1,y,0\n")
    counts = read_counts([path], scorer="x", detail=True)
    _agree(counts)
    assert counts.trials is not None and counts.trials.verdicts == "pf"


def test_detail_names_known_fields_only(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("case_id,passed\na,1\n")
    with pytest.raises(EvaluationError, match=r"detail must name fields among target, .*; got 'seeds'"):
        read_counts([path], detail=("seeds",))
    assert set(TRIAL_FIELDS) >= {
        "score",
        "cost",
        "latency",
        "output",
        "error",
        "graders",
        "started_at",
        "tokens",
        "steps",
        "tool_calls",
    }
