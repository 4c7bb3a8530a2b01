"""``--cluster-col`` end to end through Typer's CliRunner: clustered SE by hand, t at G - 1 df, errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from tests.cli_runner import CliRunner
from trialscore.cli import app

runner = CliRunner()

# six questions on three passages, two trials each; per-item pass rates 1, .5 | 0, 1 | .5, 0
BASELINE = {"q1": [1, 1], "q2": [1, 0], "q3": [0, 0], "q4": [1, 1], "q5": [0, 1], "q6": [0, 0]}
# candidate per-item rates 1, 1 | .5, 1 | 1, .5: differences 0, .5 | .5, 0 | .5, .5
CANDIDATE = {"q1": [1, 1], "q2": [1, 1], "q3": [1, 0], "q4": [1, 1], "q5": [1, 1], "q6": [0, 1]}
PASSAGE = {"q1": "p1", "q2": "p1", "q3": "p2", "q4": "p2", "q5": "p3", "q6": "p3"}


def _write(path: Path, outcomes: dict[str, list[int]], passage: dict[str, str] = PASSAGE) -> Path:
    lines = ["case_id,trial,passed,passage"]
    lines += [
        f"{item},{trial},{value},{passage[item]}"
        for item, row in outcomes.items()
        for trial, value in enumerate(row)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_score_uses_the_clustered_se_with_t_at_g_minus_1_df(tmp_path):
    path = _write(tmp_path / "base.csv", BASELINE)
    payload = _json("score", str(path), "--metric", "avg", "--cluster-col", "passage", "--level", "0.5")
    (metric,) = payload["groups"][0]["metrics"]
    interval = metric["interval"]
    # by hand: mean 0.5; residuals .5, 0 | -.5, .5 | 0, -.5; cluster sums .5, 0, -.5
    se = math.sqrt((0.5**2 + 0.0**2 + 0.5**2) / 6**2 * 3 / 2)
    assert se == pytest.approx(0.1443375673, abs=1e-10)
    assert interval["se"] == pytest.approx(se, abs=1e-12)
    quantile = 0.8164965809  # t with 2 df at 0.75, i.e. 1 / sqrt(1.5)
    assert interval["low"] == pytest.approx(0.5 - quantile * se, abs=1e-9)
    assert interval["high"] == pytest.approx(0.5 + quantile * se, abs=1e-9)
    assert interval["method"] == "cluster-robust t, 3 clusters, df 2" and interval["n"] == 6
    assert payload["ci"]["cluster_col"] == "passage"
    table = runner.invoke(app, ["score", str(path), "--cluster-col", "passage"])
    assert table.exit_code == 0 and "cluster-robust t, 3 clusters, df 2" in table.stdout


def test_compare_clusters_the_paired_difference(tmp_path):
    base = _write(tmp_path / "base.csv", BASELINE)
    cand = _write(tmp_path / "cand.csv", CANDIDATE)
    (comparison,) = _json("compare", str(base), str(cand), "--cluster-col", "passage")["comparisons"]
    # differences 0, .5 | .5, 0 | .5, .5: mean 1/3, cluster sums of residuals -1/6, -1/6, 1/3
    se = math.sqrt(((1 / 6) ** 2 + (1 / 6) ** 2 + (1 / 3) ** 2) / 36 * 3 / 2)
    assert se == pytest.approx(1 / 12)
    # the clustered SE is floored by the noisier run's trial noise, as in the plain paired test
    floor = comparison["se_floor"]
    assert 0 < floor and comparison["se"] == pytest.approx(max(se, floor))
    used = comparison["se"]
    assert comparison["delta"] == pytest.approx(1 / 3)
    p_value = 2 * scipy.stats.t.sf((1 / 3) / used, 2)  # t at G - 1 = 2 df
    assert comparison["p_value"] == pytest.approx(p_value) and comparison["verdict"] == "within_noise"
    half = scipy.stats.t.ppf(0.975, 2) * used
    assert comparison["interval"]["low"] == pytest.approx(1 / 3 - half)
    assert comparison["interval"]["low"] < 0 < comparison["interval"]["high"]
    assert comparison["design"] == "paired, clustered" and "3 clusters, df 2" in comparison["rule"]
    # the same data unclustered: paired t at 5 df calls it significant
    plain = _json("compare", str(base), str(cand), "--permutations", "0")["comparisons"][0]
    assert plain["p_value"] < 0.05


def test_an_item_in_two_clusters_is_an_error_naming_file_item_and_values(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("case_id,trial,passed,passage\nq1,0,1,p1\nq1,1,0,p2\nq2,0,1,p2\n")
    result = runner.invoke(app, ["score", str(path), "--cluster-col", "passage"])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert str(path) in message and "item 'q1'" in message and "'p1'" in message and "'p2'" in message
    base = _write(tmp_path / "base.csv", BASELINE)
    moved = _write(tmp_path / "moved.csv", CANDIDATE, {**PASSAGE, "q3": "p9"})
    result = runner.invoke(app, ["compare", str(base), str(moved), "--cluster-col", "passage"])
    message = " ".join(result.output.split())
    assert result.exit_code == 2 and "item 'q3'" in message and "'p2'" in message and "'p9'" in message
    assert str(moved) in message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ci", "bootstrap"], "cannot be combined with --ci bootstrap"),
        (["--cluster-col", "nope"], "--cluster-col 'nope' is not a column"),
    ],
)
def test_cluster_col_errors(tmp_path, args, message):
    path = _write(tmp_path / "base.csv", BASELINE)
    result = runner.invoke(app, ["score", str(path), "--cluster-col", "passage", *args])
    assert result.exit_code == 2 and message in " ".join(result.output.split())


def test_one_cluster_and_wide_matrices_are_refused(tmp_path):
    path = _write(tmp_path / "one.csv", BASELINE, dict.fromkeys(PASSAGE, "p1"))
    result = runner.invoke(app, ["score", str(path), "--cluster-col", "passage"])
    assert result.exit_code == 2 and "at least 2 clusters" in " ".join(result.output.split())
    matrix = tmp_path / "R.npy"
    np.save(matrix, np.array([[1, 0], [1, 1]]))
    result = runner.invoke(app, ["score", str(matrix), "--cluster-col", "passage"])
    assert result.exit_code == 2 and "needs a long file" in " ".join(result.output.split())
