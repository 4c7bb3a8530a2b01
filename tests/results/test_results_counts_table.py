"""Counts tables (issue 24): every reading command gives the numbers of the trials to the last digit,
tables merge, Parquet datasets are read by the columns they need, bad tables are named.

The trials come from a seeded two-level model (tests/results/_scale.py): items with their own pass
rates (some saturated), ragged trials per item, errored trials, two targets, graded scores.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from _scale import counts_data, trial_table, write_parquet

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.core.metrics import Metric, metric_names, resolve_metric
from trialscore.errors import EvaluationError, MissingColumnError
from trialscore.report.context import ReportContext, ReportSettings
from trialscore.report.panels import PANELS
from trialscore.report.runs import read_run
from trialscore.results import read_counts
from trialscore.results.counts_table import check_served, graded_means
from trialscore.results.reduce import reduce_trials

runner = CliRunner()
#: The metrics built from counts (those of trial values, such as cost per success, need each trial).
OF_COUNTS = [name for name in metric_names() if resolve_metric(name, trial_values=True).needs == "counts"]


def cli(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.stdout


def same_json(raw: str, counted: str, *paths: Path) -> dict[str, Any]:
    """Both outputs parsed, with the inputs' names (and the read sources) taken out; they must be equal."""
    texts = []
    for text in (raw, counted):
        for path in paths:
            text = text.replace(json.dumps(str(path))[1:-1], "INPUT")
        texts.append(text)
    left, right = (json.loads(text) for text in texts)

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items() if key != "sources"}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    assert strip(left) == strip(right)
    return dict(left)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three runs of two targets as trial Parquet files, and each one's counts table."""
    folder = tmp_path_factory.mktemp("runs")
    out: dict[str, Path] = {}
    for index, shift in enumerate((0.0, -0.1, 0.15)):
        raw = write_parquet(trial_table(seed=index, shift=shift), folder / f"run{index}.parquet")
        out[f"raw{index}"] = raw
        out[f"counts{index}"] = folder / f"run{index}.counts.parquet"
        reduce_trials([raw], out[f"counts{index}"])
    return out


ITEM_METHODS = ("auto", "bootstrap", "bca")
#: Proportion intervals of the pooled trials: for one trial per item (refused, the same way, otherwise).
POOLED_METHODS = ("wilson", "clopper-pearson", "jeffreys", "agresti-coull")


@pytest.mark.slow
@pytest.mark.parametrize("ci", ITEM_METHODS + POOLED_METHODS)
def test_score_of_a_counts_table_equals_the_trials_for_every_metric_and_interval(runs, ci, tmp_path):
    raw_path, counts_path = runs["raw0"], runs["counts0"]
    ks = "1,2"
    if ci in POOLED_METHODS:
        refused = [runner.invoke(app, ["score", str(path), "--ci", ci]) for path in (raw_path, counts_path)]
        assert refused[0].exit_code == refused[1].exit_code == 2
        assert (
            refused[0].output == refused[1].output and "pools all trials as independent" in refused[0].output
        )
        raw_path = write_parquet(trial_table(seed=5, items=80, trials=(1, 1)), tmp_path / "one.parquet")
        counts_path = tmp_path / "one.counts.parquet"
        reduce_trials([raw_path], counts_path)
        ks = "1"
    metrics = ",".join(OF_COUNTS)
    args = ["--metric", metrics, "--k", ks, "--ci", ci, "--resamples", "400", "-f", "json"]
    raw = cli("score", str(raw_path), *args)
    counted = cli("score", str(counts_path), *args)
    payload = same_json(raw, counted, raw_path, counts_path)
    labels = {metric["label"] for group in payload["groups"] for metric in group["metrics"]}
    assert {"pass@1", "pass^1", "g-pass@1_tau=0.5", "mg-pass@1", "maj@1", "bayes", "avg"} <= labels
    if ks == "1,2":
        assert {"pass@2", "pass^2", "g-pass@2_tau=0.5", "mg-pass@2", "maj@2"} <= labels
    assert len(payload["groups"]) == 2  # one per target, as from the trials


@pytest.mark.slow
def test_score_by_category_with_errors_as_failures_and_a_table_of_rows(runs):
    args = ["--by", "category", "--errors", "fail", "--k", "1,3", "-f", "json"]
    same_json(cli("score", str(runs["raw1"]), *args), cli("score", str(runs["counts1"]), *args), runs["raw1"])
    table = ["--by", "category", "--k", "1,3", "-f", "csv"]
    raw = cli("score", str(runs["raw1"]), *table)
    assert raw.replace(str(runs["raw1"]), "") == cli("score", str(runs["counts1"]), *table)


@pytest.mark.slow
def test_a_table_reduced_with_a_score_threshold_scores_as_the_thresholded_trials(runs, tmp_path):
    counts = tmp_path / "graded.parquet"
    roles = ["--score-col", "score", "--threshold", "0.6"]
    cli("reduce", str(runs["raw0"]), "--out", str(counts), *roles)
    raw = cli("score", str(runs["raw0"]), *roles, "-f", "json")
    same_json(raw, cli("score", str(counts), "-f", "json"), runs["raw0"], counts)
    refused = runner.invoke(app, ["score", str(counts), *roles])
    assert refused.exit_code == 2
    assert "is a counts table; --score-col applies when reducing trials" in refused.output


@pytest.mark.slow
def test_compare_rank_track_and_plan_from_counts_tables_equal_the_trials(runs):
    paths = [runs[name] for name in runs]
    for extra in ([], ["--estimand", "items", "--permutations", "500"], ["--fail-on", "regression"]):
        raw = runner.invoke(app, ["compare", str(runs["raw0"]), str(runs["raw1"]), "-f", "json", *extra])
        counted = runner.invoke(
            app, ["compare", str(runs["counts0"]), str(runs["counts1"]), "-f", "json", *extra]
        )
        assert raw.exit_code == counted.exit_code and raw.exit_code in (0, 1), raw.output
        payload = same_json(raw.stdout, counted.stdout, *paths)
    verdicts = [item["verdict"] for item in payload["comparisons"]]
    assert "regression" in verdicts  # run 1 is worse by construction: the verdicts are the same ones
    same_json(
        cli("rank", str(runs["raw2"]), "-f", "json"), cli("rank", str(runs["counts2"]), "-f", "json"), *paths
    )
    dates = ["--dates", "2024-01-01,2024-01-08,2024-01-15", "--by", "category", "-f", "json"]
    raw_track = cli("track", str(runs["raw0"]), str(runs["raw1"]), str(runs["raw2"]), *dates)
    counted_track = cli("track", str(runs["counts0"]), str(runs["counts1"]), str(runs["counts2"]), *dates)
    same_json(raw_track, counted_track, *paths)
    for pilot in (["--pilot", "{0}"], ["--pilot", "{0}", "--pilot-candidate", "{1}"]):
        raw_args = [part.format(runs["raw0"], runs["raw1"]) for part in pilot]
        counted_args = [part.format(runs["counts0"], runs["counts1"]) for part in pilot]
        plan = ["--delta", "0.1", "--trials", "5", "-f", "json"]
        same_json(cli("plan", *plan, *raw_args), cli("plan", *plan, *counted_args), *paths)


def _without_strips(view: Any) -> Any:
    """A panel's view without its trial strips: a counts table has no trial order (its strip lists the
    passes, then the failures, then the errors)."""
    if isinstance(view, dict):
        return {key: _without_strips(value) for key, value in view.items() if key != "strip"}
    if isinstance(view, (list, tuple)):
        return [_without_strips(value) for value in view]
    return view


@pytest.mark.slow
def test_the_report_of_a_counts_table_has_the_figures_of_the_trials(runs):
    panels = {panel.id: panel for panel in PANELS}
    for by in ("target", "category"):
        settings = ReportSettings(by=by)
        raw = [read_run(runs[f"raw{i}"], detail=i == 2) for i in range(3)]
        counted = [read_run(runs[f"counts{i}"], detail=i == 2) for i in range(3)]
        raw_context = ReportContext(raw, read_run(runs["raw1"], detail=False), settings)
        counted_context = ReportContext(counted, read_run(runs["counts1"], detail=False), settings)
        for name in ("headline", "curves", "flaky", "trends"):
            raw_built, counted_built = (panels[name].build(c) for c in (raw_context, counted_context))
            assert raw_built is not None and counted_built is not None, name
            assert _without_strips(raw_built.view) == _without_strips(counted_built.view), name
            if name != "trends":  # the trends' data names each run by its file
                assert raw_built.data == counted_built.data, name
        raw_against, counted_against = (panels["against"].build(c) for c in (raw_context, counted_context))
        assert raw_against is not None and counted_against is not None
        for key in ("counts", "by", "rules"):  # a counts table has no outputs to diff
            assert raw_against.view[key] == counted_against.view[key], key
    assert not counted[-1].detailed  # a counts table holds no trial's output: no drawer detail
    assert sorted(case.verdicts.count("p") for case in counted[-1].cases) == sorted(
        case.verdicts.count("p") for case in raw[-1].cases
    )


def test_graded_means_from_a_counts_table_are_the_exact_sums_of_the_trials(runs, tmp_path):
    counts = tmp_path / "graded.parquet"
    reduce_trials([runs["raw0"]], counts, columns=_threshold())
    from_counts = graded_means(read_counts([counts], group_targets=True))
    from_trials = graded_means(read_counts([runs["raw0"]], columns=_threshold(), group_targets=True))
    assert from_counts == from_trials and len(from_counts) == 2
    table = pq.read_table(runs["raw0"]).to_pylist()
    for group in from_counts:
        target = dict(group.key)["target"]
        by_item: dict[str, list[float]] = {}
        for row in table:
            if row["target"] == target and row["score"] is not None:
                by_item.setdefault(row["case_id"], []).append(row["score"])
        units = [[int(np.floor(score * 1e9 + 0.5)) for score in scores] for scores in by_item.values()]
        exact = [Fraction(sum(item), 10**9 * len(item)) for item in units]
        assert group.items == len(exact) and group.trials == sum(map(len, units))
        assert group.mean == pytest.approx(float(sum(exact) / len(exact)), rel=1e-15, abs=0)
        floats = [float(np.mean(scores)) for scores in by_item.values()]
        assert abs(group.mean - float(np.mean(floats))) < 1e-9  # the unit is 1e-9 of a score
        within = [float(np.var(scores, ddof=1)) for scores in by_item.values() if len(scores) > 1]
        assert abs(group.within - float(np.mean(within))) < 1e-8
        assert group.se == pytest.approx(float(np.std(floats, ddof=1) / np.sqrt(len(floats))), abs=1e-9)


def _threshold():
    from trialscore.results.columns import ColumnMap

    return ColumnMap(score="score", threshold=0.6)


@pytest.mark.slow
def test_shards_reduced_apart_and_merged_give_the_table_of_all_trials(runs, tmp_path):
    table = pq.read_table(runs["raw0"])
    order = np.random.default_rng(7).permutation(table.num_rows)
    shards = []
    for index, part in enumerate(np.array_split(order, 3)):  # every case is spread over the shards
        shard = write_parquet(table.take(pa.array(np.sort(part))), tmp_path / f"shard{index}.parquet")
        shards.append(tmp_path / f"shard{index}.counts.parquet")
        reduce_trials([shard], shards[-1])
    whole = tmp_path / "whole.parquet"
    merged = tmp_path / "merged.parquet"
    reduce_trials([runs["raw0"]], whole)
    done = reduce_trials(shards, merged)
    assert counts_data(merged).equals(counts_data(whole))
    assert done.rows_read == table.num_rows
    together = read_counts(shards, group_targets=True)
    raw = read_counts([runs["raw0"]], group_targets=True)
    for name in ("item", "graded", "c", "errored", "score_sum", "score_sumsq"):
        assert getattr(together, name).tolist() == getattr(raw, name).tolist()
    # a shard read twice repeats its trials: named as from the trials themselves
    with pytest.raises(
        EvaluationError, match=r"trial indices span only .* some \(item, trial\) pairs repeat"
    ):
        read_counts([shards[0], shards[0]], group_targets=True)


@pytest.mark.slow
def test_hive_folders_and_globs_are_one_table_read_by_the_columns_needed(runs, tmp_path):
    table = trial_table(seed=3, output_chars=600)
    flat = write_parquet(table, tmp_path / "flat.parquet")
    root = tmp_path / "hive"
    for target in ("model-a", "model-b"):
        for run in (1, 2):
            mask = pc.and_(
                pc.equal(table["target"], target), pc.equal(pc.bit_wise_and(table["trial"], 1), run - 1)
            )
            part = table.filter(mask).drop_columns(["target"])
            write_parquet(part, root / f"run={run}" / f"model={target}" / "part-0.parquet")
    pattern = str(root / "run=*" / "model=*" / "*.parquet")
    by_model = ["--by", "model", "-f", "json", "--k", "1,2"]
    flat_json = cli("score", str(flat), "--by", "target", "-f", "json", "--k", "1,2").replace(
        "target", "model"
    )
    for source in (pattern, str(root)):
        same_json(flat_json, cli("score", source, *by_model), flat, Path(pattern), root)
    done = reduce_trials([pattern], tmp_path / "c.parquet", by=("model", "run"))
    assert done.group_columns == ("category", "model", "run")
    size = sum(path.stat().st_size for path in root.rglob("*.parquet"))
    assert 0 < done.bytes_read < 0.05 * size  # the output column (most of the bytes) is not read
    with pytest.raises(EvaluationError, match=r"no file or folder matches this pattern"):
        read_counts([str(tmp_path / "nothing-*.parquet")])


def test_a_bad_counts_table_is_one_line_naming_the_file_row_field_and_rule(runs, tmp_path):
    good = pq.read_table(runs["counts0"])
    bad = good.set_column(good.column_names.index("passed"), "passed", pc.add(good["passed"], 100))
    write_parquet(bad, tmp_path / "bad.parquet")
    with pytest.raises(
        EvaluationError,
        match=r"bad\.parquet row 1: counts table field 'passed' must be a whole number from 0 to "
        r"trials - errored; got '1\d\d'",
    ):
        read_counts([tmp_path / "bad.parquet"])
    newer = good.set_column(0, "counts_version", pa.array([2] * good.num_rows, pa.int32()))
    write_parquet(newer, tmp_path / "v2.parquet")
    with pytest.raises(
        EvaluationError,
        match=r"field 'counts_version' is 2; this trialscore reads counts tables of version 1",
    ):
        read_counts([tmp_path / "v2.parquet"])
    with pytest.raises(
        MissingColumnError, match=r"has no group column 'run_id'.*reduce the trials again with by run_id"
    ):
        read_counts([runs["counts0"]], by=["run_id"])
    result = runner.invoke(app, ["score", str(runs["counts0"]), "--by", "run_id"])
    assert result.exit_code == 2 and "reduce the trials again with --by run_id" in result.output


def test_a_counts_table_serves_metrics_of_counts_and_refuses_those_of_trial_values():
    for name in OF_COUNTS:
        assert check_served(name).name == name
    for name in set(metric_names()) - set(OF_COUNTS):  # the per-success metrics
        with pytest.raises(EvaluationError, match=rf"metric {name} needs a value of every trial"):
            check_served(resolve_metric(name, trial_values=True))
    cost = Metric("cost", "mean cost of a trial", needs_k=False, needs="trial values", credit=None)
    with pytest.raises(
        EvaluationError, match=r"metric cost needs a value of every trial .* a counts table holds"
    ):
        check_served(cost)
