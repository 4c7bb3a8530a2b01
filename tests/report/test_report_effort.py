"""The report's cost panel as data: the front's figures and probabilities as ``rank --pareto`` gives them,
per-success figures as ``score`` gives them, unknown costs named and never free, the chart's marks,
escaping, and the same bytes each time."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli_runner import CliRunner
from tests.report.conftest import write_records
from trialscore.cli import app
from trialscore.report import ReportSettings, build_report
from trialscore.report._numbers import number
from trialscore.report.context import ReportContext
from trialscore.report.panels import PANELS
from trialscore.report.panels.effort import RESAMPLES, SEED, _Axis, effort_panel
from trialscore.report.runs import read_run
from trialscore.stats import cost_success_front, item_totals, per_success

HOSTILE = '<img src=x onerror="alert(1)">&amp;'
#: target -> (pass rate, cost level in USD)
TARGETS = {"cheap": (0.5, 0.01), "middle": (0.7, 0.05), "strong": (0.85, 0.2), "dear": (0.6, 0.3)}


def agent_rows(
    seed: int, cases: int = 30, trials: int = 3, targets: dict[str, tuple[float, float]] = TARGETS
) -> list[dict[str, Any]]:
    """Trial records of each target on the same cases: costs log-normal (sigma 1), some latencies."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.0, cases)
    rows = []
    for target, (rate, cost) in targets.items():
        for case in range(cases):
            chance = 1 / (1 + np.exp(-(np.log(rate / (1 - rate)) - difficulty[case])))
            for trial in range(trials):
                passed = bool(rng.random() < chance)
                rows.append(
                    {
                        "case_id": f"case-{case:02d}",
                        "trial": trial,
                        "target": target,
                        "verdict": "pass" if passed else "fail",
                        "cost_usd": float(cost * rng.lognormal(0.0, 1.0)),
                        "latency_s": float(rng.lognormal(0.0, 0.5)),
                        "output": "ok",
                    }
                )
    return rows


def panel_of(path: Path, **settings: Any) -> dict[str, Any] | None:
    return effort_panel(ReportContext([read_run(path)], None, ReportSettings(**settings)))


def section(html: str) -> str:
    found = re.search(r'<section id="cost".*?</section>', html, re.S)
    assert found is not None
    return found.group(0)


def test_the_front_is_the_one_rank_pareto_gives(tmp_path: Path) -> None:
    rows = agent_rows(1)
    path = write_records(tmp_path / "t.jsonl", rows)
    panel = panel_of(path)
    assert panel is not None
    totals = {
        target: item_totals(
            [r["case_id"] for r in rows if r["target"] == target],
            [r["verdict"] == "pass" for r in rows if r["target"] == target],
            [r["cost_usd"] for r in rows if r["target"] == target],
        )
        for target in sorted(TARGETS)  # the page orders targets by name
    }
    front = cost_success_front(totals, replicates=RESAMPLES, seed=SEED)
    shown = {point["target"]: point for point in panel["points"]}
    for point in front.points:
        assert shown[point.target]["p"] == f"{point.front_probability:.3f}"
        assert shown[point.target]["on_front"] is point.on_front
        assert shown[point.target]["cost"]["estimate"] == f"{point.cost_per_task.estimate:.3g}"
        assert shown[point.target]["rate"]["low"] == f"{point.pass_rate.low:.3g}"
    costs = [
        point.cost_per_task.estimate for point in sorted(front.points, key=lambda p: p.cost_per_task.estimate)
    ]
    assert [p["target"] for p in panel["points"]] == [
        p.target for p in sorted(front.points, key=lambda p: p.cost_per_task.estimate)
    ] and costs == sorted(costs)
    assert panel["shared"] == 30 and panel["dropped"] == 0 and "2000 bootstrap resamples" in panel["method"]
    # and the command prints the same probabilities with the same resamples and seed
    result = CliRunner().invoke(
        app, ["rank", str(path), "--pareto", "--resamples", str(RESAMPLES), "--seed", str(SEED), "-f", "json"]
    )
    ranked = {entry["model"]["target"]: entry["p_on_front"] for entry in json.loads(result.stdout)["models"]}
    assert {name: f"{p:.3f}" for name, p in ranked.items()} == {p["target"]: p["p"] for p in panel["points"]}


def test_per_success_figures_are_the_ones_score_gives(tmp_path: Path) -> None:
    rows = agent_rows(2, targets={"a": (0.6, 0.1), "b": (0.8, 0.4)})
    panel = panel_of(write_records(tmp_path / "t.jsonl", rows))
    assert panel is not None
    assert panel["per_success_header"] == ["cost per success (USD)", "latency per success (s)"]
    for row in panel["per_success"]:
        own = [r for r in rows if r["target"] == row["target"]]
        for cell, field, quantity in zip(
            row["cells"], ("cost_usd", "latency_s"), ("cost", "latency"), strict=True
        ):
            figure = per_success(
                [r["case_id"] for r in own], [r["verdict"] == "pass" for r in own], [r[field] for r in own],
                quantity=quantity,
            )  # fmt: skip
            assert cell["figure"] == {
                "estimate": f"{figure.estimate:.3g}",
                "low": f"{figure.interval.low:.3g}",
                "high": f"{figure.interval.high:.3g}",
            }
            assert cell["method"] == figure.interval.method and cell["unknown"] == 0


def test_unknown_costs_are_named_and_never_free(tmp_path: Path) -> None:
    rows = agent_rows(3, cases=12)
    for row in rows:
        if row["target"] == "dear":
            row["cost_usd"] = None
        if row["target"] == "middle" and row["case_id"] == "case-04":
            row["cost_usd"] = None
    path = write_records(tmp_path / "t.jsonl", rows)
    panel = panel_of(path)
    assert panel is not None
    assert "dear" not in [p["target"] for p in panel["points"]]
    assert (
        "middle: 3 trials of unknown cost left out of the cost (never taken as free): case-04 trial 0, "
        in (" ".join(panel["notes"]))
    )
    assert "dear: no trial has a known cost: left off the chart (never taken as free)" in panel["notes"]
    dear = next(row for row in panel["per_success"] if row["target"] == "dear")
    assert dear["cells"][0] == {"reason": "no trial has a known cost value; 36 trials unknown"}
    middle = next(row for row in panel["per_success"] if row["target"] == "middle")
    assert middle["cells"][0]["unknown"] == 3
    html = section(build_report([path]))
    assert "(3 unknown left out)" in html and "<title>dear</title>" not in html


def test_no_panel_without_cost_and_no_front_with_one_target(tmp_path: Path) -> None:
    rows = agent_rows(4, cases=8)
    for row in rows:
        row.pop("cost_usd")
    assert panel_of(write_records(tmp_path / "none.jsonl", rows)) is None
    assert '<section id="cost"' not in build_report([tmp_path / "none.jsonl"])
    alone = agent_rows(5, cases=8, targets={"solo": (0.7, 0.1)})
    panel = panel_of(write_records(tmp_path / "solo.jsonl", alone))
    assert panel is not None and panel["svg"] is None and panel["points"] == []
    assert "a front needs at least 2 targets with a known cost; this run has solo" in panel["notes"]
    assert panel["per_success"][0]["cells"][0]["figure"] is not None


def test_errored_trials_follow_the_report_error_policy(tmp_path: Path) -> None:
    rows = agent_rows(6, cases=10, targets={"a": (0.6, 0.1), "b": (0.8, 0.4)})
    rows[0] = {**rows[0], "verdict": "error", "error": "timeout", "cost_usd": 9.0}
    path = write_records(tmp_path / "t.jsonl", rows)
    left_out, failed = panel_of(path), panel_of(path, errors="fail")
    assert left_out is not None and failed is not None
    known = [r["cost_usd"] for r in rows[1:] if r["target"] == "a"]
    cost = {p["target"]: p["cost"]["estimate"] for p in left_out["points"]}
    assert cost["a"] == f"{sum(known) / len(known):.3g}"
    cost = {p["target"]: p["cost"]["estimate"] for p in failed["points"]}
    assert cost["a"] == f"{(sum(known) + 9.0) / (len(known) + 1):.3g}"


def test_the_chart_marks_every_target_and_rings_the_front(tmp_path: Path) -> None:
    panel = panel_of(write_records(tmp_path / "t.jsonl", agent_rows(7)))
    assert panel is not None
    svg = str(panel["svg"])
    assert svg.startswith('<svg class="chart front"') and svg.endswith("</svg>")
    assert svg.count('<g class="target">') == 4
    assert svg.count('class="ring') == sum(p["on_front"] for p in panel["points"]) >= 1
    assert "cost per task (USD, log scale)" in svg
    # cheaper targets stand further left
    xs = [float(x) for x in re.findall(r'<circle class="dot s\d" cx="([\d.]+)"', svg)]
    assert xs == sorted(xs)


def test_axis_ticks() -> None:
    axis = _Axis.of([0.013], [0.41])
    ticks = axis.ticks()
    assert axis.log and ticks == [0.02, 0.05, 0.1, 0.2, 0.5] and all(axis.lo <= t <= axis.hi for t in ticks)
    wide = _Axis.of([1e-5], [30.0]).ticks()
    assert wide == [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]  # only decades when 1-2-5 steps are many
    narrow = _Axis.of([0.0101], [0.0102])  # one 1-2-5 value inside: even steps of a round size instead
    assert narrow.ticks() == pytest.approx([0.01, 0.012])
    for axis in (narrow, _Axis.of([0.00013], [0.00013])):  # a label at the plot's end still fits the chart
        assert len(axis.ticks()) >= 2 and all(axis.lo <= t <= axis.hi for t in axis.ticks())
        assert axis.right >= max(len(number(t, 2)) for t in axis.ticks()) * 3.5
    free = _Axis.of([0.0], [0.5])
    assert not free.log and free.ticks()[0] == 0.0 and free.x(0.0) < free.x(0.5)


def test_free_trials_draw_on_a_linear_axis(tmp_path: Path) -> None:
    rows = agent_rows(8, cases=10, targets={"free": (0.5, 0.1), "paid": (0.8, 0.4)})
    for row in rows:
        if row["target"] == "free":
            row["cost_usd"] = 0.0
    panel = panel_of(write_records(tmp_path / "t.jsonl", rows))
    assert panel is not None and "log scale" not in str(panel["svg"])
    assert panel["points"][0]["target"] == "free" and panel["points"][0]["on_front"]


def test_everything_is_escaped_and_the_bytes_are_the_same_each_time(tmp_path: Path) -> None:
    rows = agent_rows(9, cases=10, targets={HOSTILE: (0.5, 0.1), "b&c": (0.8, 0.4)})
    path = write_records(tmp_path / "t.jsonl", rows)
    html = build_report([path])
    assert html == build_report([path])
    cost = section(html)
    assert "<img" not in cost and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&amp;amp;" in cost
    assert "<title>b&amp;c</title>" in cost and ">b&amp;c</text>" in cost


def test_the_panel_is_registered_after_the_tool_calls(tmp_path: Path) -> None:
    ids = [panel.id for panel in PANELS]
    assert ids.index("cost") == ids.index("tool-calls") + 1
    html = build_report([write_records(tmp_path / "t.jsonl", agent_rows(10, cases=6))])
    assert '<a href="#cost">Cost</a>' in html and '<h2 id="h-cost">Cost</h2>' in html


@pytest.mark.parametrize("by", ["target", "category"])
def test_the_panel_is_per_target_whatever_the_grouping(tmp_path: Path, by: str) -> None:
    rows = [{**row, "category": f"cat-{i % 3}"} for i, row in enumerate(agent_rows(11, cases=9))]
    panel = panel_of(write_records(tmp_path / "t.jsonl", rows), by=by)
    assert panel is not None and sorted(p["target"] for p in panel["points"]) == sorted(TARGETS)
