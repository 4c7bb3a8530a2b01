"""HELM run folders (fixtures written by helm-run in fixtures/helm/make_fixtures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _readers import by_item, pass1, score_json

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import FORMATS, detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()

FIXTURES = Path(__file__).parent / "fixtures"
OUTPUT = FIXTURES / "helm" / "benchmark_output"
SUITE = OUTPUT / "runs" / "v1"
CLASSIFY1 = SUITE / "simple_classification:model=simple_model1"
CLASSIFY2 = SUITE / "simple_classification:model=simple_model2"
MCQA1 = SUITE / "simple_mcqa:model=simple_model1"


def _ids(folder: Path) -> list[str]:
    entries = json.loads((folder / "per_instance_stats.json").read_text(encoding="utf-8"))
    return sorted({entry["instance_id"] for entry in entries})


def test_counts_per_item_target_and_category() -> None:
    counts = read_counts([OUTPUT], by=("target", "category"))
    expected = {}
    # outcomes of train trials 0..2 per instance, as make_fixtures.py set them (E = failed request)
    for folder, target, outcomes in (
        (CLASSIFY1, "simple/model1", ["111", "101", "000", "1E1"]),
        (CLASSIFY2, "simple/model2", ["111", "001", "000", "110"]),
        (MCQA1, "simple/model1", ["100", "111", "000", "111"]),
    ):
        scenario = folder.name.split(":")[0]
        for instance, row in zip(_ids(folder), outcomes, strict=True):
            key = (target, scenario, f"{scenario}/{instance}")
            expected[key] = (row.count("1") + row.count("0"), row.count("1"), row.count("E"))
    assert by_item(counts) == expected
    # the flaky, the always-failing and the errored instance are all there
    values = set(expected.values())
    assert {(3, 2, 0), (3, 0, 0), (2, 2, 1)} <= values
    assert counts.stats.rows_read == 36 and counts.stats.rows_errored == 1


@pytest.mark.slow
def test_score_with_no_flags() -> None:
    assert detect_format(CLASSIFY1).NAME == "helm"
    assert detect_format(CLASSIFY1 / "per_instance_stats.json").NAME == "helm"
    assert detect_format(OUTPUT).NAME == "helm"
    assert pass1(score_json(str(CLASSIFY1))) == {"all": pytest.approx((1 + 2 / 3 + 0 + 1) / 4)}
    assert pass1(score_json(str(SUITE), "--by", "target,category")) == {
        "target=simple/model1, category=simple_classification": pytest.approx((1 + 2 / 3 + 0 + 1) / 4),
        "target=simple/model1, category=simple_mcqa": pytest.approx((1 / 3 + 1 + 0 + 1) / 4),
        "target=simple/model2, category=simple_classification": pytest.approx((1 + 1 / 3 + 0 + 2 / 3) / 4),
    }
    assert score_json(str(MCQA1), "--from", "helm")["rows"]["rows_read"] == 12


def test_compare_two_models() -> None:
    result = runner.invoke(app, ["compare", str(CLASSIFY1), str(CLASSIFY2), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["comparisons"]


def test_malformed_entry_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(CLASSIFY1, run)
    path = run / "per_instance_stats.json"
    entries = json.loads(path.read_text(encoding="utf-8"))
    entries[4]["train_trial_index"] = "two"
    path.write_text(json.dumps(entries), encoding="utf-8")
    result = runner.invoke(app, ["score", str(run)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    assert f"{path} entry 5: field 'train_trial_index' must be a whole number >= 0; got 'two'" in message
    counts = read_counts([run], skip_invalid=True)
    assert counts.stats.rows_skipped == 1 and counts.stats.rows_read == 12
    entries[4]["train_trial_index"] = 1
    entries[2]["stats"] = [stat for stat in entries[2]["stats"] if stat["name"]["name"] != "exact_match"]
    path.write_text(json.dumps(entries), encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"entry 3: field 'stats' has no 'exact_match' stat"):
        read_counts([run])


def test_no_correctness_stat_is_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(CLASSIFY1, run)
    path = run / "per_instance_stats.json"
    entries = json.loads(path.read_text(encoding="utf-8"))
    for entry in entries:
        entry["stats"] = [stat for stat in entry["stats"] if "match" not in stat["name"]["name"]]
    path.write_text(json.dumps(entries), encoding="utf-8")
    with pytest.raises(
        EvaluationError, match=r"entry 1: field 'stats' has no correctness stat \(one of exact_match"
    ):
        read_counts([run])


def test_other_formats_are_not_taken_for_helm(tmp_path: Path) -> None:
    stats = tmp_path / "per_instance_stats.json"
    shutil.copy(CLASSIFY1 / "per_instance_stats.json", stats)  # without run_spec.json beside it
    assert not FORMATS["helm"].sniff(stats) and not FORMATS["helm"].sniff(tmp_path)
    (tmp_path / "rows.json").write_text(
        '[{"instance_id": "a", "trial": 0, "passed": true}]', encoding="utf-8"
    )
    assert detect_format(tmp_path / "rows.json").NAME == "json-array"
    others = [path for path in FIXTURES.rglob("*") if "helm" not in path.parts]
    assert not [path for path in others if FORMATS["helm"].sniff(path)]


def _renamed(value: object, old: str, new: str) -> object:
    """``value`` with every key ``old`` renamed ``new``, at any depth."""
    if isinstance(value, dict):
        return {(new if key == old else key): _renamed(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, old, new) for item in value]
    return value


@pytest.mark.parametrize(
    ("file", "old", "message"),
    [
        ("run_spec.json", "adapter_spec", "run_spec.json: field 'adapter_spec' must be an object; got None"),
        (
            "per_instance_stats.json",
            "train_trial_index",
            "per_instance_stats.json entry 1: field 'train_trial_index' must be a whole number >= 0",
        ),
        (
            "scenario_state.json",
            "request_states",
            "scenario_state.json: field 'request_states' must be a list",
        ),
    ],
)
def test_a_field_that_moved_in_a_later_helm_is_named(
    tmp_path: Path, file: str, old: str, message: str
) -> None:
    """The fixtures are crfm-helm 0.5.16's (the newest release); a field renamed by a later release is
    one line naming the file and the field, exit 2."""
    run = tmp_path / "run"
    shutil.copytree(CLASSIFY1, run)
    path = run / file
    path.write_text(json.dumps(_renamed(json.loads(path.read_text(encoding="utf-8")), old, f"{old}_v2")))
    result = runner.invoke(app, ["score", str(run), "--from", "helm"])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
