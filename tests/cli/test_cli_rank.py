"""``trialscore rank --pareto`` and ``rank --metric cost-per-success`` (and the other per-success metrics),
in process: the figures against the library on the same trials, exact sums, unknown costs counted and
named (never free), seeded probabilities, the output formats and one-line errors."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.stats import compare_per_success, cost_success_front, item_totals, per_success

#: target -> (pass rate shift on the logit scale, cost level in USD)
TARGETS = {"cheap": (-0.8, 0.01), "middle": (0.0, 0.05), "strong": (1.0, 0.2), "dear": (-0.3, 0.3)}


def trial_rows(
    seed: int, items: int = 40, trials: int = 3, targets: dict[str, tuple[float, float]] = TARGETS
) -> list[dict[str, Any]]:
    """Trials of each target on the same items: per-item pass rates from Beta(4, 2) shifted per target,
    log-normal costs (sigma 1) around an item cost level."""
    rng = np.random.default_rng(seed)
    base = rng.beta(4, 2, items)
    level = rng.normal(0.0, 0.5, items)
    rows = []
    for target, (shift, cost) in targets.items():
        rate = 1 / (1 + np.exp(-(np.log(base / (1 - base)) + shift)))
        for item in range(items):
            for trial in range(trials):
                passed = bool(rng.random() < rate[item])
                rows.append(
                    {
                        "case_id": f"q{item:03d}",
                        "trial": trial,
                        "target": target,
                        "passed": passed,
                        "verdict": "pass" if passed else "fail",
                        "cost_usd": float(cost * np.exp(level[item] + rng.normal())),
                        "latency_s": float(np.exp(rng.normal())),
                    }
                )
    return rows


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def rank_json(*args: str) -> dict[str, Any]:
    result = invoke("rank", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def library_totals(rows: list[dict[str, Any]], quantity: str = "cost_usd") -> dict[str, Any]:
    """Each target's item totals straight from the rows (NaN: unknown; errored trials left out)."""
    out = {}
    for target in dict.fromkeys(row["target"] for row in rows):
        own = [row for row in rows if row["target"] == target and row.get("passed") is not None]
        values = [np.nan if row.get(quantity) is None else row[quantity] for row in own]
        out[f"target={target}"] = item_totals(
            [row["case_id"] for row in own], [row["passed"] for row in own], values
        )
    return out


def test_pareto_matches_the_library_on_the_same_trials(tmp_path: Path) -> None:
    rows = trial_rows(1)
    path = write(tmp_path / "t.jsonl", rows)
    payload = rank_json(str(path), "--pareto", "--resamples", "500", "--seed", "7")
    front = cost_success_front(library_totals(rows), replicates=500, seed=7)
    by_label = {entry["label"]: entry for entry in payload["models"]}
    assert set(by_label) == {point.target for point in front.points}
    for point in front.points:
        entry = by_label[point.target]
        assert entry["p_on_front"] == point.front_probability
        assert entry["on_front"] is point.on_front
        assert entry["pass_rate"] == point.pass_rate.to_dict()
        assert entry["cost_per_task"] == point.cost_per_task.to_dict()
        assert point.cost_per_success is not None
        assert entry["cost_per_success"] == point.cost_per_success.to_dict()
    assert payload["pareto"]["front"] == [e["label"] for e in payload["models"] if e["on_front"]]
    assert payload["pareto"] | {"method": ""} == {
        "level": 0.95, "resamples": 500, "seed": 7, "method": "", "front": payload["pareto"]["front"],
    }  # fmt: skip
    assert payload["items"] == 40 and payload["items_not_shared"] == 0 and payload["cost_unknown"] == []
    # listed cheapest first; the cheapest is always on the front (nothing costs less)
    costs = [entry["cost_per_task"]["estimate"] for entry in payload["models"]]
    assert costs == sorted(costs) and payload["models"][0]["on_front"]


def test_pareto_figures_are_the_exact_sums(tmp_path: Path) -> None:
    """Two targets, three items, costs in cents: pass rate, cost per task and per success by hand."""
    plan = {
        "a": [("q1", 1, "0.10"), ("q1", 0, "0.20"), ("q2", 1, "0.30"), ("q2", 1, "0.10"), ("q3", 0, "0.40")],
        "b": [("q1", 1, "1.00"), ("q2", 1, "2.50"), ("q2", 0, "0.50"), ("q3", 1, "1.25"), ("q3", 1, "0.75")],
    }
    rows = [
        {"case_id": case, "trial": index, "target": target, "passed": bool(passed), "cost_usd": float(cost)}
        for target, trials in plan.items()
        for index, (case, passed, cost) in enumerate(trials)
    ]
    payload = rank_json(str(write(tmp_path / "t.jsonl", rows)), "--pareto", "--resamples", "200")
    for target, trials in plan.items():
        entry = next(e for e in payload["models"] if e["label"] == f"target={target}")
        per_item: dict[str, list[int]] = {}
        for case, passed, _ in trials:
            per_item.setdefault(case, []).append(passed)
        rate = sum(Fraction(sum(v), len(v)) for v in per_item.values()) / len(per_item)
        total = sum(Fraction(cost) for _, _, cost in trials)
        solved = sum(passed for _, passed, _ in trials)
        assert entry["pass_rate"]["estimate"] == pytest.approx(float(rate), rel=1e-15)
        assert entry["cost_per_task"]["estimate"] == pytest.approx(float(total / len(trials)), rel=1e-14)
        assert entry["cost_per_success"]["estimate"] == pytest.approx(float(total / solved), rel=1e-14)
        for figure in ("pass_rate", "cost_per_task", "cost_per_success"):
            assert (
                entry[figure]["low"] < entry[figure]["estimate"] < entry[figure]["high"]
            )  # never zero-width


def test_unknown_costs_are_counted_and_named_never_free(tmp_path: Path) -> None:
    rows = trial_rows(2, items=20)
    for row in rows:
        if row["target"] == "dear":
            row["cost_usd"] = None  # this target reports no cost at all
        if row["target"] == "middle" and row["case_id"] in ("q003", "q011") and row["trial"] == 1:
            row["cost_usd"] = None
    path = write(tmp_path / "t.jsonl", rows)
    payload = rank_json(str(path), "--pareto", "--resamples", "200")
    assert [entry["label"] for entry in payload["cost_unknown"]] == ["target=dear"]
    assert payload["cost_unknown"][0]["trials"] == 60
    assert "target=dear" not in [entry["label"] for entry in payload["models"]]
    middle = next(e for e in payload["models"] if e["label"] == "target=middle")
    assert middle["unknown_cost_trials"] == 2 and middle["unknown_cost"] == ["q003 trial 1", "q011 trial 1"]
    # left out of the cost (not taken as 0): the cost per task is the mean of the known costs
    known = [r["cost_usd"] for r in rows if r["target"] == "middle" and r["cost_usd"] is not None]
    assert middle["cost_per_task"]["estimate"] == pytest.approx(sum(known) / len(known))
    table = invoke("rank", str(path), "--pareto", "--resamples", "200", "--format", "markdown").stdout
    assert "| target=dear | — | unknown | unknown | — | not placed |" in table
    assert (
        "target=middle: 2 trials of unknown cost left out (never taken as free): q003 trial 1, q011 trial 1"
        in (table)
    )
    assert "target=dear: cost unknown for every one of its 60 trials: not placed on the front" in table


@pytest.mark.slow
def test_pareto_is_seeded(tmp_path: Path) -> None:
    near = {"one": (0.0, 0.05), "two": (0.1, 0.055), "three": (-1.0, 0.01)}  # one and two are close
    path = write(tmp_path / "t.jsonl", trial_rows(3, items=25, targets=near))
    first = rank_json(str(path), "--pareto", "--resamples", "300", "--seed", "1")
    assert first == rank_json(str(path), "--pareto", "--resamples", "300", "--seed", "1")
    other = rank_json(str(path), "--pareto", "--resamples", "300", "--seed", "2")
    shares = [entry["p_on_front"] for entry in first["models"]]
    assert any(0 < share < 1 for share in shares)
    assert shares != [entry["p_on_front"] for entry in other["models"]]
    assert "300 bootstrap resamples of the 25 shared items (seed 1)" in first["pareto"]["method"]


@pytest.mark.slow
def test_pareto_table_markdown_and_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", trial_rows(4, items=20))
    payload = rank_json(str(path), "--pareto", "--resamples", "200")
    cheapest = payload["models"][0]
    rate = cheapest["pass_rate"]
    for output in ("table", "markdown"):
        text = invoke("rank", str(path), "--pareto", "--resamples", "200", "--format", output).stdout
        assert "the cost-success front" in text and "P(on front)" in text
        assert f"{rate['estimate']:.4g} [{rate['low']:.4g}, {rate['high']:.4g}]" in text
        assert "share of 200 bootstrap resamples of the 20 shared items (seed 0)" in text
        assert "rows: 240 read, 240 used" in text
    lines = invoke("rank", str(path), "--pareto", "--resamples", "200", "--format", "csv").stdout.splitlines()
    assert lines[0].startswith("model,pass_rate,pass_rate_low,pass_rate_high,cost_per_task,")
    first = lines[1].split(",")
    assert first[0] == cheapest["label"] and float(first[4]) == cheapest["cost_per_task"]["estimate"]
    assert float(first[11]) == cheapest["p_on_front"]


def test_items_not_held_by_every_target_are_left_out_and_counted(tmp_path: Path) -> None:
    rows = trial_rows(5, items=20)
    rows = [row for row in rows if not (row["target"] == "strong" and row["case_id"] in ("q000", "q001"))]
    rows += [{**rows[0], "case_id": "extra"}]
    payload = rank_json(str(write(tmp_path / "t.jsonl", rows)), "--pareto", "--resamples", "200")
    assert payload["items"] == 18 and payload["items_not_shared"] == 3


def test_errored_trials_follow_the_error_policy(tmp_path: Path) -> None:
    rows = trial_rows(6, items=10, targets={"a": (0.0, 0.1), "b": (0.5, 0.2)})
    rows[0] = {**rows[0], "passed": None, "verdict": "error", "cost_usd": 0.5}
    path = write(tmp_path / "t.jsonl", rows)
    left_out = rank_json(str(path), "--pareto", "--resamples", "200")
    failed = rank_json(str(path), "--pareto", "--resamples", "200", "--errors", "fail")
    a_out = next(e for e in left_out["models"] if e["label"] == "target=a")
    a_fail = next(e for e in failed["models"] if e["label"] == "target=a")
    own = [r for r in rows if r["target"] == "a"]
    known = [r["cost_usd"] for r in own[1:]]
    assert a_out["cost_per_task"]["estimate"] == pytest.approx(sum(known) / len(known))
    # counted as a failed trial, with what it cost
    assert a_fail["cost_per_task"]["estimate"] == pytest.approx((sum(known) + 0.5) / len(own))
    assert a_fail["pass_rate"]["estimate"] < a_out["pass_rate"]["estimate"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--pareto"],
            "rank --pareto needs each trial's cost (a cost_usd or cost column): the inputs carry none",
        ),
        (["--metric", "cost-per-success"], "rank --metric cost-per-success needs each trial's cost"),
        (["--pareto", "--metric", "pass@k"], "not by a ranked metric; got --metric (drop them"),
        (["--pareto", "--k", "3", "--ci", "wilson"], "not by a ranked metric; got --k, --ci (drop them"),
        (["--pareto", "--resamples", "10"], "--resamples must be at least 100 with --pareto"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path: Path, args: list[str], said: str) -> None:
    rows = trial_rows(7, items=10)
    for row in rows:
        del row["cost_usd"]
    result = invoke("rank", str(write(tmp_path / "t.jsonl", rows)), *args)
    assert result.exit_code == 2
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_pareto_needs_two_models_with_a_known_cost(tmp_path: Path) -> None:
    rows = trial_rows(8, items=10, targets={"a": (0.0, 0.1), "b": (0.5, 0.2)})
    for row in rows:
        if row["target"] == "b":
            row["cost_usd"] = None
    result = invoke("rank", str(write(tmp_path / "t.jsonl", rows)), "--pareto")
    assert result.exit_code == 2
    assert "needs at least 2 models with a known cost to draw a front; only target=a has one" in result.stderr


def test_rank_by_cost_per_success_lowest_first(tmp_path: Path) -> None:
    rows = trial_rows(9)
    path = write(tmp_path / "t.jsonl", rows)
    payload = rank_json(str(path), "--metric", "cost-per-success")
    assert payload["metric"] == "cost-per-success" and payload["lower_is_better"] is True
    totals = library_totals(rows)
    expected = {
        label: per_success(
            [r["case_id"] for r in rows if f"target={r['target']}" == label],
            [r["passed"] for r in rows if f"target={r['target']}" == label],
            [r["cost_usd"] for r in rows if f"target={r['target']}" == label],
        )
        for label in totals
    }
    labels = [entry["label"] for entry in payload["models"]]
    assert labels == sorted(expected, key=lambda label: expected[label].estimate)
    assert [entry["rank"] for entry in payload["models"]] == [1, 2, 3, 4]
    for entry, after in zip(payload["models"], [*payload["models"][1:], None], strict=True):
        figure = expected[entry["label"]]
        assert entry["interval"] == figure.interval.to_dict()
        assert entry["per_success"]["total"] == pytest.approx(figure.total)
        if after is None:
            assert entry["vs_next"] is None
            continue
        paired = compare_per_success(totals[after["label"]], totals[entry["label"]])
        assert entry["vs_next"]["ratio"] == pytest.approx(paired.ratio)
        assert entry["vs_next"]["interval"] == paired.interval.to_dict()
        verdict = entry["vs_next"]["verdict"]
        assert (verdict == "lower") == (paired.interval.high < 1)  # the verdict the interval beside it says
    table = invoke("rank", str(path), "--metric", "cost-per-success").stdout
    assert "rank by cost-per-success (lowest first)" in table and "lower is better" in table


def test_rank_by_latency_per_success_and_a_model_that_never_succeeds(tmp_path: Path) -> None:
    rows = trial_rows(10, items=15)
    for row in rows:
        if row["target"] == "dear":
            row.update(passed=False, verdict="fail")
    payload = rank_json(str(write(tmp_path / "t.jsonl", rows)), "--metric", "latency-per-success")
    assert payload["metric"] == "latency-per-success" and len(payload["models"]) == 3
    assert [u["label"] for u in payload["not_ranked"]] == ["target=dear"]
    assert "needs at least one solved trial" in payload["not_ranked"][0]["reason"]
    assert all(entry["per_success"]["unit"] == "s" for entry in payload["models"])


@pytest.mark.slow
def test_ties_under_each_method(tmp_path: Path) -> None:
    twin = trial_rows(11, items=10, targets={"a": (0.0, 0.1)})
    rows = (
        twin + [{**row, "target": "b"} for row in twin] + trial_rows(12, items=10, targets={"c": (0.0, 1.0)})
    )
    path = write(tmp_path / "t.jsonl", rows)
    for method, ranks in (("competition", [1, 1, 3]), ("dense", [1, 1, 2]), ("average", [1.5, 1.5, 3.0])):
        payload = rank_json(str(path), "--metric", "cost-per-success", "--method", method)
        assert [entry["rank"] for entry in payload["models"]] == ranks
    result = invoke("rank", str(path), "--metric", "cost-per-success", "--method", "compettition")
    assert result.exit_code == 2 and "did you mean 'competition'" in result.stderr


def test_rank_by_cost_per_success_names_the_unknown_trials_on_the_shared_items(tmp_path: Path) -> None:
    rows = trial_rows(13, items=12)
    rows = [row for row in rows if not (row["target"] == "dear" and row["case_id"] == "q000")]  # not shared
    for row in rows:
        if row["target"] == "middle" and (row["case_id"], row["trial"]) in (("q000", 0), ("q005", 2)):
            row["cost_usd"] = None
    path = write(tmp_path / "t.jsonl", rows)
    payload = rank_json(str(path), "--metric", "cost-per-success")
    assert payload["items"] == 11 and payload["items_not_shared"] == 1
    middle = next(e for e in payload["models"] if e["label"] == "target=middle")
    assert middle["per_success"]["unknown_trials"] == 1 and middle["per_success"]["unknown"] == [
        "q005 trial 2"
    ]
    table = invoke("rank", str(path), "--metric", "cost-per-success").stdout
    said = "target=middle: cost-per-success: 1 trial of unknown cost left out (never taken as free)"
    assert f"{said}: q005 trial 2" in table


def test_rank_by_pass_hat_k_states_its_convention(tmp_path: Path) -> None:
    rows = [
        {"case_id": f"q{i}", "trial": t, "target": target, "passed": (i + t + shift) % 3 > 0}
        for target, shift in (("a", 0), ("b", 1))
        for i in range(8)
        for t in range(4)
    ]
    path = write(tmp_path / "t.jsonl", rows)
    for errors, said in (("exclude", "errored trials left out of n"), ("fail", "counted as failed trials")):
        result = invoke("rank", str(path), "--metric", "pass^k", "--k", "2", "--errors", errors)
        assert result.exit_code == 0, result.output
        assert "pass^k: unbiased C(c,k)/C(n,k) per item" in result.output and said in result.output
