"""lm-evaluation-harness ``--log_samples`` output is read with no flags (format ``lm-eval``).

The fixtures under ``fixtures/lm-eval/out`` were written by the real ``lm_eval``
0.4.13 with its ``dummy`` model (``make_fixtures.sh`` beside them): model-a ran
three seeds, model-b two, each on two tiny local tasks.  ``tiny_mc/0`` is flaky,
``tiny_gen/1`` always fails, ``tiny_gen/0`` always passes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _big_logs import big_lm_eval, lm_eval_truth
from _readers import reading_peaks

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import FORMATS, detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()

OUT = Path(__file__).parent / "fixtures" / "lm-eval" / "out"
MODEL_A = OUT / "model-a"
MODEL_B = OUT / "model-b"
FIRST_MC = MODEL_A / "samples_tiny_mc_2026-11-22T20-27-17.018505.jsonl"


def _counts(path: Path, by: list[str] | None = None, **options) -> dict[tuple, tuple[int, int, int]]:
    counts = read_counts([path], by=by or [], **options)
    keys = zip(*(values.tolist() for values in counts.group_values), counts.item.tolist(), strict=True)
    return {
        key: (int(n), int(c), int(e))
        for key, n, c, e in zip(keys, counts.graded, counts.c, counts.errored, strict=True)
    }


def _score(*args: str) -> dict:
    result = runner.invoke(app, ["score", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _pass_at_1(payload: dict) -> dict[str, float]:
    return {
        group["label"]: next(m["estimate"] for m in group["metrics"] if m["label"] == "pass@1")
        for group in payload["groups"]
    }


def test_a_samples_file_a_model_folder_and_the_folder_above_are_detected():
    order = list(FORMATS)
    for path in (FIRST_MC, MODEL_A, OUT):
        assert detect_format(path).NAME == "lm-eval"
        earlier = order[: order.index("lm-eval")]
        assert [name for name in earlier if FORMATS[name].sniff(path)] == [], path


def test_each_run_is_a_trial_of_every_doc():
    assert _counts(MODEL_A) == {
        ("tiny_gen/0",): (3, 3, 0),
        ("tiny_gen/1",): (3, 0, 0),
        ("tiny_mc/0",): (3, 2, 0),
        ("tiny_mc/1",): (3, 3, 0),
        ("tiny_mc/2",): (3, 3, 0),
    }


def test_the_folder_above_has_target_and_category_group_keys():
    counts = _counts(OUT, by=["target", "category"])
    assert counts[("model-a", "tiny_mc", "tiny_mc/0")] == (3, 2, 0)
    assert counts[("model-b", "tiny_mc", "tiny_mc/0")] == (2, 1, 0)
    assert counts[("model-b", "tiny_gen", "tiny_gen/1")] == (2, 0, 0)
    assert len(counts) == 10


def test_score_with_no_flags_gives_each_models_pass_at_1():
    assert _pass_at_1(_score(str(MODEL_A))) == {"all": pytest.approx(11 / 15)}
    assert _pass_at_1(_score(str(MODEL_B))) == {"all": pytest.approx(0.7)}
    assert _pass_at_1(_score(str(OUT), "--by", "target")) == {
        "target=model-a": pytest.approx(11 / 15),
        "target=model-b": pytest.approx(0.7),
    }


def test_from_lm_eval_reads_a_renamed_samples_file(tmp_path):
    renamed = tmp_path / "whatever.dat"
    shutil.copy(FIRST_MC, renamed)
    payload = _score(str(renamed), "--from", "lm-eval", "--by", "category")
    assert payload["groups"][0]["group"] == {"category": "whatever"}
    assert payload["groups"][0]["items"] == 3


def test_compare_two_models():
    result = runner.invoke(app, ["compare", str(MODEL_A), str(MODEL_B), "-f", "json"])
    assert result.exit_code == 0, result.output
    comparison = json.loads(result.stdout)["comparisons"][0]
    assert comparison["baseline"] == pytest.approx(11 / 15) and comparison["candidate"] == pytest.approx(0.7)


def _sample(doc_id: int, **fields) -> str:
    sample = {"doc_id": doc_id, "doc": {}, "target": "x", "filter": "none", "metrics": ["f1"]}
    return json.dumps({**sample, **fields})


def test_an_empty_value_is_an_errored_trial_and_a_partial_score_fails(tmp_path):
    path = tmp_path / "samples_qa_2026-01-01T00-00-00.000001.jsonl"
    path.write_text("\n".join([_sample(0, f1=None), _sample(1, f1=0.5), _sample(2, f1=1.0)]) + "\n")
    assert _counts(path) == {("qa/0",): (0, 0, 1), ("qa/1",): (1, 0, 0), ("qa/2",): (1, 1, 0)}


def test_only_the_first_filter_of_a_task_is_read(tmp_path):
    path = tmp_path / "samples_gsm_2026-01-01T00-00-00.000001.jsonl"
    lines = [_sample(0, f1=1.0, filter="strict"), _sample(0, f1=0.0, filter="flexible")]
    path.write_text("\n".join(lines) + "\n")
    assert _counts(path) == {("gsm/0",): (1, 1, 0)}


def test_a_sample_without_its_metric_is_one_line_naming_file_line_and_field(tmp_path):
    path = tmp_path / "samples_qa_2026-01-01T00-00-00.000001.jsonl"
    path.write_text(_sample(0, f1=1.0) + "\n" + _sample(1, acc=1.0) + "\n")
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"error: {path} line 2: field 'f1' (the task's primary metric) is missing "
        "(--skip-invalid skips and counts bad samples)"
    ]
    path.write_text(_sample(0, f1=3.0) + "\n")
    with pytest.raises(EvaluationError, match=r"line 1: field 'f1' .* must be a number in \[0, 1\]"):
        read_counts([path])


def test_other_formats_are_not_taken_for_lm_eval(tmp_path):
    rows = [{"case_id": "a", "trial": 0, "passed": True}, {"case_id": "b", "trial": 0, "passed": False}]
    samples = {
        "jsonl": "".join(json.dumps(row) + "\n" for row in rows),
        "json-array": json.dumps(rows),
        "cases": json.dumps({"eval_id": "a", "verdict": "pass"}) + "\n",
        "csv": "case_id,trial,passed\na,0,1\n",
        "wide": "1,0\n1,1\n",
    }
    for name, text in samples.items():
        path = tmp_path / f"samples_{name}_2026-01-01T00-00-00.000001.jsonl"
        path.write_text(text)
        assert not FORMATS["lm-eval"].sniff(path), name
        assert detect_format(path).NAME == name
    parquet = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    assert not FORMATS["lm-eval"].sniff(parquet)
    assert not FORMATS["lm-eval"].sniff(tmp_path)  # its samples_* files are not lm_eval samples


RUNS = OUT.parent / "runs"


def _own_counts(root: Path) -> dict[tuple, tuple[int, int, int]]:
    """(model, task/doc) -> (runs, passes, 0) from the samples files themselves (the tool's records),
    the primary metric of each task (acc, exact_match) equal to 1 on a pass."""
    primary = {"tiny_mc": "acc", "tiny_gen": "exact_match"}
    out: dict[tuple, list[int]] = {}
    for path in root.rglob("samples_*.jsonl"):
        task = path.name.split("_20")[0].removeprefix("samples_")
        for line in path.read_text().splitlines():
            sample = json.loads(line)
            counts = out.setdefault((path.parent.name, f"{task}/{sample['doc_id']}"), [0, 0, 0])
            counts[0] += 1
            counts[1] += sample[primary[task]] == 1
    return {key: (n, c, e) for key, (n, c, e) in out.items()}


def test_one_output_path_per_seed_makes_each_run_folder_a_trial() -> None:
    assert (RUNS / "VERSION").read_text() == "lm-eval 0.4.13\n"
    assert detect_format(RUNS).NAME == "lm-eval"
    counts = read_counts([RUNS], group_targets=True)
    assert counts.by == ("target",)
    assert _counts(RUNS, by=["target"]) == _own_counts(RUNS)
    assert {n for n, _, _ in _own_counts(RUNS).values()} == {2, 3}  # model-a ran 3 seeds, model-b 2
    # each run's mean of the task's metric is what lm_eval printed for it in results_<date>.json
    by_run = read_counts([RUNS], by=["target", "run", "category"])
    for group in by_run.groups():
        key = dict(group.key)
        (results,) = RUNS.glob(f"seed*/{key['target']}/results_{key['run']}.json")
        metric = {"tiny_mc": "acc,none", "tiny_gen": "exact_match,none"}[key["category"]]
        recorded = json.loads(results.read_text())["results"][key["category"]][metric]
        assert group.c.sum() / group.n.sum() == pytest.approx(recorded)


# ------------------------------------------------------------- large samples files, read a line at a time


@pytest.mark.slow
def test_grown_samples_files_count_what_their_lines_say(tmp_path):
    """lm_eval 0.4.13's samples grown to 3 runs of 1,500 docs (tests/results/_big_logs.py): each doc's
    graded, passed and errored trials over the runs."""
    folder = big_lm_eval(tmp_path / "model-a", 1500, runs=3, text_chars=100)
    truth = lm_eval_truth(1500, runs=3)
    assert _counts(folder) == {(item,): value for item, value in truth.items()}
    assert sum(value[2] for value in truth.values()) > 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_samples_file_is_read_one_line_at_a_time_not_whole(tmp_path):
    """Memory grows with the number of docs, not with the file: 2,000 lines of 32 KB of prompt and output
    (64 MB) take about the memory of the same docs with no text (measured in child processes)."""
    big = big_lm_eval(tmp_path / "big" / "model-a", 2000, text_chars=32_000)
    small = big_lm_eval(tmp_path / "small" / "model-a", 2000, text_chars=10)
    size = sum(path.stat().st_size for path in big.iterdir()) / 2**20
    (rows, peak), (small_rows, small_peak) = reading_peaks(big, small)
    assert rows == small_rows == 2000 and size > 60
    assert peak - small_peak < size / 4, (peak, small_peak, size)
