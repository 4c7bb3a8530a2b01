"""One metric registry: every accepted name gives the same estimate everywhere it is accepted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import trialscore as ts
from trialscore.cli import app
from trialscore.core.metrics import METRICS, resolve_metric
from trialscore.errors import EvaluationError
from trialscore.stats import bootstrap_interval, compare_paired, item_interval

NAMES = sorted({name for metric in METRICS.values() for name in (metric.name, *metric.aliases)})


def _matrices() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    rates = rng.beta(2, 2, size=(12, 1))
    return {
        "a": (rng.random((12, 6)) < rates).astype(int),
        "b": (rng.random((12, 6)) < np.clip(rates + 0.1, 0, 1)).astype(int),
    }


def _write(path: Path, outcomes: dict[str, np.ndarray]) -> Path:
    rows = [
        {"case_id": f"q{i}", "trial": t, "target": target, "passed": bool(value)}
        for target, matrix in outcomes.items()
        for i, row in enumerate(matrix)
        for t, value in enumerate(row)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _cli(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("name", NAMES)
def test_every_name_means_one_thing_everywhere(name: str, tmp_path: Path) -> None:
    metric = resolve_metric(name)
    outcomes = _matrices()
    path = _write(tmp_path / "t.jsonl", outcomes)
    args = {"k": 3} if metric.needs_k else {}
    if metric.needs_tau:
        args["tau"] = 0.5
    function = ts.estimator_by_name(name)
    library = {target: function(matrix, **args) for target, matrix in outcomes.items()}
    if metric.name == "bayes":
        library = {target: value[0] for target, value in library.items()}
    options = ["--metric", name, *(["--k", "3"] if metric.needs_k else [])]
    scored = _cli("score", str(path), "--by", "target", *options)
    for group in scored["groups"]:
        (row,) = group["metrics"]
        assert row["estimate"] == pytest.approx(library[group["group"]["target"]], rel=1e-12, abs=1e-15)
    ranked = _cli("rank", str(path), "--by", "target", *options)
    for model in ranked["models"]:
        assert model["score"] == pytest.approx(library[model["model"]["target"]], rel=1e-12, abs=1e-15)
    if metric.kernel is None:
        return
    a, b = outcomes["a"], outcomes["b"]
    tau = args.get("tau")
    assert item_interval(a, name, args.get("k"), tau).estimate == pytest.approx(library["a"], rel=1e-12)
    assert bootstrap_interval(a, name, args.get("k"), tau, resamples=100).estimate == pytest.approx(
        library["a"], rel=1e-12
    )
    paired = compare_paired(a, b, name, args.get("k"), tau)
    assert (paired.baseline, paired.candidate) == pytest.approx((library["a"], library["b"]), rel=1e-12)
    split = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(split[0], {"m": a})
    _write(split[1], {"m": b})
    (comparison,) = _cli("compare", str(split[0]), str(split[1]), *options)["comparisons"]
    assert comparison["baseline_score"] == pytest.approx(library["a"], rel=1e-12)
    assert comparison["candidate_score"] == pytest.approx(library["b"], rel=1e-12)


def test_an_ambiguous_name_is_refused_everywhere_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match=r"ambiguous: say pass\^k .* or g-pass@k_tau"):
        ts.estimator_by_name("g-pass@k")
    with pytest.raises(EvaluationError, match="ambiguous"):
        ts.stats.bootstrap_interval([[1, 0, 1]], "g-pass@k", k=2)
    path = _write(tmp_path / "t.jsonl", _matrices())
    result = CliRunner().invoke(app, ["score", str(path), "--by", "target", "--metric", "g-pass@k"])
    assert result.exit_code == 2 and "ambiguous" in result.output and "g-pass@k_tau" in result.output
