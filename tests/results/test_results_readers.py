"""Long-format readers (CSV, JSON Lines, JSON arrays, Parquet, records): counts, mapping, bad input."""

from __future__ import annotations

import json
import re
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trialscore.errors import EvaluationError
from trialscore.results.columns import ColumnMap
from trialscore.results.readers import count_records, read_counts
from trialscore.results.records import TrialRecord, verdict_of


def _random_rows(seed: int = 7, models: int = 3, cases: int = 25, trials: int = 6) -> list[dict]:
    """Trials with per-case pass rates, some errored (passed None), shuffled."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in range(models):
        for case in range(cases):
            rate = rng.random()
            for trial in range(trials):
                draw = rng.random()
                passed = None if draw < 0.08 else bool(rng.random() < rate)
                rows.append(
                    {
                        "case_id": f"case-{case:03d}",
                        "trial": trial,
                        "target": f"model-{model}",
                        "category": ["math", "code"][case % 2],
                        "passed": passed,
                    }
                )
    order = rng.permutation(len(rows))
    return [rows[index] for index in order]


def _expected(rows: list[dict], by: list[str]) -> dict[tuple, tuple[int, int, int]]:
    """(group..., item) -> (graded, passed, errored), counted in plain Python."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        key = (*[row[name] for name in by], row["case_id"])
        entry = counts[key]
        if row["passed"] is None:
            entry[2] += 1
        else:
            entry[0] += 1
            entry[1] += int(row["passed"])
    return {key: tuple(value) for key, value in counts.items()}


def _observed(counts) -> dict[tuple, tuple[int, int, int]]:
    result = {}
    for group in counts.groups():
        values = tuple(value for _, value in group.key)
        for item, graded, passed, errored in zip(
            group.item, group.graded, group.c, group.errored, strict=True
        ):
            result[(*values, item)] = (int(graded), int(passed), int(errored))
    return result


def _write_csv(path, rows: list[dict]) -> None:
    names = list(rows[0])
    lines = [",".join(names)]
    for row in rows:
        cells = []
        for name in names:
            value = row[name]
            cells.append("" if value is None else str(int(value)) if isinstance(value, bool) else str(value))
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")


def _write_jsonl(path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _write_parquet(path, rows: list[dict]) -> None:
    pq.write_table(pa.Table.from_pylist(rows), path)


@pytest.mark.parametrize("writer", [_write_csv, _write_jsonl, _write_parquet])
@pytest.mark.parametrize("by", [["target"], ["target", "category"]])
def test_long_formats_count_exactly_like_python(tmp_path, writer, by):
    rows = _random_rows()
    path = (
        tmp_path / f"trials.{ {_write_csv: 'csv', _write_jsonl: 'jsonl', _write_parquet: 'parquet'}[writer] }"
    )
    writer(path, rows)
    counts = read_counts([path], by=by)
    assert _observed(counts) == _expected(rows, by)
    errored = sum(row["passed"] is None for row in rows)
    assert counts.stats.rows_read == len(rows)
    assert counts.stats.rows_errored == errored
    assert counts.stats.rows_used == len(rows) - errored
    assert counts.stats.rows_skipped == 0
    labels = [group.label for group in counts.groups()]
    assert labels == sorted(labels)


def test_errored_trials_counted_as_failures_on_request(tmp_path):
    rows = _random_rows(seed=3)
    path = tmp_path / "t.parquet"
    _write_parquet(path, rows)
    excluded = read_counts([path], by=["target"])
    failed = read_counts([path], by=["target"], errors="fail")
    assert failed.stats.rows_used == len(rows)
    for left, right in zip(excluded.groups(), failed.groups(), strict=True):
        assert (right.n == left.n + left.errored).all()
        assert (right.bank().c == left.c[right.n > 0]).all()
        assert right.trials == left.trials + left.errored_trials


@pytest.mark.parametrize("files", [1, 2])
def test_an_item_whose_every_trial_errored_has_zero_passes(tmp_path, files):
    rows = [
        {"case_id": "a", "trial": 0, "passed": True},
        {"case_id": "b", "trial": 0, "passed": None, "errored": True},
        {"case_id": "b", "trial": 1, "passed": None, "errored": True},
    ]
    paths = []
    for index in range(files):
        paths.append(tmp_path / f"t{index}.jsonl")
        _write_jsonl(paths[-1], [{**row, "trial": row["trial"] + 2 * index} for row in rows])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from a NULL count cast to an integer
        counts = read_counts(paths, errors="fail")
    assert counts.c.tolist() == [files, 0] and counts.errored.tolist() == [0, 2 * files]
    assert (counts.groups().__next__().n == [files, 2 * files]).all()


def test_records_jsonl_from_the_runner_matches_count_records(tmp_path):
    records = [
        TrialRecord(
            case_id=row["case_id"],
            trial=row["trial"],
            target=row["target"],
            category=row["category"],
            passed=row["passed"],
            verdict=verdict_of(row["passed"]),
            error="timeout" if row["passed"] is None else None,
        )
        for row in _random_rows(seed=11)
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(record.to_json_line() + "\n" for record in records))
    from_file = read_counts([path], by=["target"])
    in_memory = count_records(records, by=["target"])
    assert _observed(from_file) == _observed(in_memory)
    assert from_file.stats.rows_errored == sum(record.errored for record in records)


def test_count_records_rejects_unknown_group_and_empty_input():
    with pytest.raises(EvaluationError, match=r"by must name TrialRecord fields among .*; got 'model'"):
        count_records([TrialRecord(case_id="a", trial=0, passed=True, verdict="pass")], by=["model"])
    with pytest.raises(EvaluationError, match="records must hold at least one TrialRecord"):
        count_records([])


def test_column_mapping_options(tmp_path):
    path = tmp_path / "custom.csv"
    path.write_text("task,rep,ok,llm\nq1,0,true,a\nq1,1,false,a\nq2,0,TRUE,a\nq2,1,1.0,b\n")
    counts = read_counts([path], by=["llm"], columns=ColumnMap(item="task", trial="rep", passed="ok"))
    assert _observed(counts) == {("a", "q1"): (2, 1, 0), ("a", "q2"): (1, 1, 0), ("b", "q2"): (1, 1, 0)}
    with pytest.raises(EvaluationError, match=r"columns\.item 'nope' is not a column of the file"):
        read_counts([path], columns=ColumnMap(item="nope"))
    with pytest.raises(EvaluationError, match="by column 'model' is not a column of the file"):
        read_counts([path], by=["model"], columns=ColumnMap(item="task", passed="ok"))


def test_score_threshold_and_verdict_outcomes(tmp_path):
    path = tmp_path / "scored.jsonl"
    rows = [
        {"case_id": "a", "trial": 0, "score": 0.9, "verdict": "pass"},
        {"case_id": "a", "trial": 1, "score": 0.6, "verdict": "borderline"},
        {"case_id": "a", "trial": 2, "score": None, "verdict": "error"},
        {"case_id": "b", "trial": 0, "score": 0.7, "verdict": "fail"},
    ]
    _write_jsonl(path, rows)
    by_verdict = read_counts([path])
    assert _observed(by_verdict) == {("a",): (2, 1, 1), ("b",): (1, 0, 0)}
    by_score = read_counts([path], columns=ColumnMap(threshold=0.65))
    assert _observed(by_score) == {("a",): (2, 1, 1), ("b",): (1, 1, 0)}
    with pytest.raises(
        EvaluationError, match=r"a score column .* turns into pass/fail only with a threshold"
    ):
        ColumnMap(score="score")
    with pytest.raises(EvaluationError, match=r"threshold must be a number in \[0, 1\]; got 1\.5"):
        ColumnMap(threshold=1.5)


def test_json_array_of_trial_rows(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([{"case_id": "a", "passed": True}, {"case_id": "a", "passed": False}]))
    assert _observed(read_counts([path])) == {("a",): (2, 1, 0)}


@pytest.mark.parametrize(
    ("suffix", "content", "message"),
    [
        (
            "csv",
            "case_id,trial,passed\na,0,1\na,1,yes\n",
            r"bad\.csv line 3: field 'passed' must be true/false or 1/0 .*; got 'yes' \(1 invalid row in all",
        ),
        (
            "csv",
            "case_id,trial,passed\na,0,1\n,1,0\n",
            r"bad\.csv line 3: field 'case_id' must be a non-empty",
        ),
        ("csv", "case_id,trial,passed\na,0,1\n\na,-1,0\n", r"bad\.csv line 4: field 'trial' must be a whole"),
        (
            "csv",
            "case_id,trial,passed\na,0,1\na,1,0,7\n",
            r"bad\.csv line 3: the row has 4 fields, the header 3: '7' has no column \(1 bad row in all",
        ),
        (
            "jsonl",
            '{"case_id": "a", "trial": 0, "passed": true}\n\n{"case_id": "a", "trial": 1.5, "passed": 1}\n',
            r"bad\.jsonl line 3: field 'trial' must be a whole number >= 0; got '1\.5'",
        ),
        (
            "jsonl",
            '{"case_id": "a", "trial": 0, "passed": true}\n{"case_id": "a", "trial": 1, "passed": tru}\n',
            r"bad\.jsonl line 2: not valid JSON",
        ),
        (
            "jsonl",
            '{"case_id": "a", "trial": 0, "passed": true}\n[1, 2]\n',
            r"bad\.jsonl line 2: expected a JSON object; got list",
        ),
    ],
)
def test_bad_rows_name_file_line_field_and_value(tmp_path, suffix, content, message):
    path = tmp_path / f"bad.{suffix}"
    path.write_text(content)
    with pytest.raises(EvaluationError, match=message):
        read_counts([path])


def test_bad_parquet_row_is_named_by_row_number(tmp_path):
    path = tmp_path / "bad.parquet"
    _write_parquet(
        path, [{"case_id": "a", "trial": 0, "passed": 1}, {"case_id": "a", "trial": 1, "passed": 2}]
    )
    with pytest.raises(
        EvaluationError, match=r"bad\.parquet row 2: field 'passed' must be true/false .*; got '2'"
    ):
        read_counts([path])


def test_skip_invalid_counts_every_skipped_row(tmp_path):
    path = tmp_path / "mixed.jsonl"
    lines = [
        '{"case_id": "a", "trial": 0, "passed": true}',
        '{"case_id": "a", "trial": 1, "passed": "maybe"}',
        "not json at all",
        '{"case_id": "a", "trial": 2, "passed": null}',
        '{"case_id": "b", "trial": 0, "passed": false}',
        '{"case_id": "", "trial": 0, "passed": false}',
    ]
    path.write_text("\n".join(lines) + "\n")
    counts = read_counts([path], skip_invalid=True)
    assert _observed(counts) == {("a",): (1, 1, 1), ("b",): (1, 0, 0)}
    stats = counts.stats
    assert (stats.rows_read, stats.rows_skipped, stats.rows_errored, stats.rows_used) == (6, 3, 1, 2)
    assert stats.first_skipped is not None and "mixed.jsonl line 3: not valid JSON" in stats.first_skipped


def test_skip_invalid_on_csv_counts_rejected_lines(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("case_id,trial,passed\na,0,1\na,1,0,9\na,2,x\nb,0,0\n")
    counts = read_counts([path], skip_invalid=True)
    assert _observed(counts) == {("a",): (1, 1, 0), ("b",): (1, 0, 0)}
    assert (counts.stats.rows_read, counts.stats.rows_skipped, counts.stats.rows_used) == (4, 2, 2)
    assert counts.stats.first_skipped is not None and "line 4: field 'passed'" in counts.stats.first_skipped


def test_repeated_trials_are_refused_unless_allowed(tmp_path):
    rows = _random_rows(seed=5, models=2, cases=3, trials=4)
    path = tmp_path / "t.parquet"
    _write_parquet(path, rows)
    with pytest.raises(
        EvaluationError, match=r"has 8 trials but its trial indices span only 0\.\.3.*\(e\.g\. by target\)"
    ):
        read_counts([path])
    pooled = read_counts([path], allow_repeated_trials=True)
    assert _observed(pooled) == _expected(rows, [])
    with pytest.raises(EvaluationError, match="some \\(item, trial\\) pairs repeat"):
        read_counts([path, path], by=["target"])


def test_files_pool_per_item_and_file_key_separates_them(tmp_path):
    rows = _random_rows(seed=9, models=1)
    first = [row for row in rows if row["trial"] < 3]
    second = [row for row in rows if row["trial"] >= 3]
    _write_csv(tmp_path / "a.csv", first)
    _write_parquet(tmp_path / "b.parquet", second)
    pooled = read_counts([tmp_path / "a.csv", tmp_path / "b.parquet"], by=["target"])
    assert _observed(pooled) == _expected(rows, ["target"])
    assert pooled.stats.sources == (str(tmp_path / "a.csv"), str(tmp_path / "b.parquet"))
    split = read_counts([tmp_path / "a.csv", tmp_path / "b.parquet"], by=["file"])
    assert [group.key[0][1] for group in split.groups()] == [
        str(tmp_path / "a.csv"),
        str(tmp_path / "b.parquet"),
    ]
    assert sum(group.trials for group in split.groups()) == pooled.stats.rows_used


def test_unknown_missing_and_empty_files(tmp_path):
    with pytest.raises(EvaluationError, match="no such file"):
        read_counts([tmp_path / "absent.csv"])
    (tmp_path / "x.xlsx").write_text("")
    with pytest.raises(EvaluationError, match=r"unknown file type '\.xlsx'"):
        read_counts([tmp_path / "x.xlsx"])
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(EvaluationError, match="the file is empty"):
        read_counts([tmp_path / "empty.jsonl"])
    with pytest.raises(EvaluationError, match="no input"):
        read_counts([])
    with pytest.raises(EvaluationError, match="errors must be 'exclude' or 'fail'"):
        read_counts([tmp_path / "x.xlsx"], errors="drop")


def test_text_spellings_of_trials_and_outcomes(tmp_path):
    path = tmp_path / "spellings.csv"
    rows = [
        ("a", "0", "true"),
        ("a", "007", "TRUE"),
        ("a", " 2 ", " 1 "),
        ("a", "3.0", "0.0"),
        ("a", "4", "t"),
        ("a", "5", "False"),
        ("a", "6", "f"),
        ("a", "8", ""),
    ]
    path.write_text("case_id,trial,passed\n" + "\n".join(",".join(row) for row in rows) + "\n")
    counts = read_counts([path])
    assert _observed(counts) == {("a",): (7, 4, 1)}
    for trial, passed, field in [("1.5", "1", "trial"), ("-1", "1", "trial"), ("2", "yes", "passed")]:
        path.write_text(f"case_id,trial,passed\na,0,1\na,{trial},{passed}\n")
        with pytest.raises(EvaluationError, match=f"line 3: field '{field}'"):
            read_counts([path])


def test_missing_group_values_form_their_own_group(tmp_path):
    path = tmp_path / "groups.jsonl"
    rows = [
        {"case_id": "a", "trial": 0, "category": "math", "passed": True},
        {"case_id": "a", "trial": 1, "category": "math", "passed": False},
        {"case_id": "b", "trial": 0, "passed": True},
        {"case_id": "b", "trial": 1, "category": None, "passed": True},
    ]
    _write_jsonl(path, rows)
    groups = list(read_counts([path], by=["category"]).groups())
    assert [(group.label, group.key) for group in groups] == [
        ("category=math", (("category", "math"),)),
        ("category=—", (("category", None),)),
    ]
    assert [group.c.tolist() for group in groups] == [[1], [2]]


def test_repeated_case_trial_rows_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    rows = [("a", 0, True), ("a", 0, False), ("b", 0, True), ("b", 1, True)]
    path.write_text("".join(json.dumps({"case_id": c, "trial": t, "passed": p}) + "\n" for c, t, p in rows))
    with pytest.raises(EvaluationError, match=rf"^{re.escape(str(path))}: item 'a' has 2 trials"):
        read_counts([path])


def _trials_file(path: Path, targets: list[str | None]) -> Path:
    rows = []
    for index, target in enumerate(targets):
        for item in range(3):
            for trial in range(2):
                row: dict[str, object] = {
                    "case_id": f"c{item}",
                    "trial": trial,
                    "passed": (item + trial + index) % 2 == 0,
                }
                if target is not None:
                    row["target"] = target
                rows.append(row)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_group_targets_groups_several_targets_and_pools_one(tmp_path: Path) -> None:
    two = read_counts([_trials_file(tmp_path / "two.jsonl", ["m1", "m2"])], group_targets=True)
    assert two.by == ("target",)
    assert [(g.label, g.n.tolist(), g.c.tolist()) for g in two.groups()] == [
        ("target=m1", [2, 2, 2], [1, 1, 1]),
        ("target=m2", [2, 2, 2], [1, 1, 1]),
    ]
    assert any("grouped by target: the inputs hold 2 targets" in note for note in two.stats.notes)
    one = read_counts([_trials_file(tmp_path / "one.jsonl", ["m1"])], group_targets=True)
    assert one.by == () and one.item.tolist() == ["c0", "c1", "c2"] and not one.stats.notes
    none = read_counts([_trials_file(tmp_path / "none.jsonl", [None])], group_targets=True)
    assert none.by == () and none.graded.tolist() == [2, 2, 2]


def test_group_targets_keeps_an_input_without_targets_apart(tmp_path: Path) -> None:
    named = _trials_file(tmp_path / "named.jsonl", ["m1"])
    bare = _trials_file(tmp_path / "bare.jsonl", [None])
    counts = read_counts([named, bare], group_targets=True)
    assert [g.label for g in counts.groups()] == ["target=m1", "target=—"]  # "—": no target named


def test_group_targets_joins_explicit_grouping_and_yields_to_pooling(tmp_path: Path) -> None:
    path = _trials_file(tmp_path / "two.jsonl", ["m1", "m2"])
    by_file = read_counts([path], by=["file"], group_targets=True)  # per file, and per target within it
    assert by_file.by == ("target", "file") and [g.label for g in by_file.groups()] == [
        f"target=m1, file={path}",
        f"target=m2, file={path}",
    ]
    with pytest.raises(EvaluationError, match=r"\(e\.g\. by target\)"):
        read_counts([path], by=["file"])  # the library adds no target groups unasked
    pooled = read_counts([path], group_targets=True, allow_repeated_trials=True)
    assert pooled.by == () and pooled.graded.tolist() == [4, 4, 4]
    with pytest.raises(EvaluationError, match=r"\(e\.g\. by target\)"):
        read_counts([path])  # the library pools nothing unasked either: repeated (item, trial) is an error


def test_a_tool_folder_with_two_models_scores_per_model_with_no_flags() -> None:
    from tests.cli_runner import CliRunner
    from trialscore.cli import app

    folder = Path(__file__).parent / "fixtures" / "lm-eval" / "out"
    result = CliRunner().invoke(app, ["score", str(folder), "-f", "json"])
    assert result.exit_code == 0, result.output
    labels = [group["label"] for group in json.loads(result.stdout)["groups"]]
    assert labels == ["target=model-a", "target=model-b"]
