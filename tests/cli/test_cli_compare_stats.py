"""``compare`` states what its statistics can say: intervals inside [-1, 1], groups too small to
test, the conservative test with few items, and the re-split test of these items (issues 23, 29)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore import Bank
from trialscore.cli import app
from trialscore.stats import compare_paired

runner = CliRunner()


def _write(path: Path, cases: dict[str, tuple[str, list[int]]]) -> Path:
    """case id -> (category, outcomes) as a CSV trial file."""
    lines = ["case_id,trial,passed,category"]
    lines += [
        f"{case},{trial},{value},{category}"
        for case, (category, row) in cases.items()
        for trial, value in enumerate(row)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_a_two_case_group_is_clipped_and_marked_too_few_to_test(tmp_path: Path) -> None:
    # "facts": two cases that went from 5/5 to 0/5: with t at 1 df the interval was [-4.2, 2.2]
    base = {"f1": ("facts", [1] * 5), "f2": ("facts", [1, 1, 1, 1, 0])}
    cand = {"f1": ("facts", [0] * 5), "f2": ("facts", [0] * 5)}
    rng_rows = [[1, 0, 1, 1, 0], [0, 1, 1, 0, 1], [1, 1, 0, 1, 1], [0, 0, 1, 1, 1]]
    for index in range(30):
        base[f"m{index}"] = ("maths", rng_rows[index % 4])
        cand[f"m{index}"] = ("maths", rng_rows[(index + 1) % 4])
    a, b = _write(tmp_path / "a.csv", base), _write(tmp_path / "b.csv", cand)
    result = runner.invoke(app, ["compare", str(a), str(b), "--by", "category", "-f", "json"])
    assert result.exit_code == 0, result.output
    groups = {c["label"]: c for c in json.loads(result.stdout)["comparisons"]}
    facts, maths = groups["category=facts"], groups["category=maths"]
    assert facts["interval"]["low"] == -1.0 and facts["interval"]["high"] <= 1.0
    assert facts["interval"]["clipped_to"] == [-1.0, 1.0] and facts["mde"] is None
    assert any("too few items to test" in note for note in facts["notes"])
    assert any("interval clipped to [-1, 1]" in note for note in facts["notes"])
    assert maths["interval"]["clipped_to"] is None and 0 < maths["mde"] < 1
    table = runner.invoke(app, ["compare", str(a), str(b), "--by", "category"])
    assert table.exit_code == 0, table.output
    assert "too few items to test" in table.stdout and "clipped to [-1, 1]" in table.stdout
    assert "few items (2, under 20)" in table.stdout  # the few-items caveat, with measured rates


@pytest.mark.slow
def test_estimand_items_runs_the_resplit_test_and_says_what_it_answers(tmp_path: Path) -> None:
    base = {f"q{i}": ("all", [1] * 9 + [0]) for i in range(5)}
    cand = {f"q{i}": ("all", [1, 0, 0]) for i in range(5)}
    a, b = _write(tmp_path / "a.csv", base), _write(tmp_path / "b.csv", cand)
    args = ["compare", str(a), str(b), "-f", "json", "--permutations", "2000", "--seed", "3"]
    items = runner.invoke(app, [*args, "--estimand", "items"])
    assert items.exit_code == 0, items.output
    (body,) = json.loads(items.stdout)["comparisons"]
    ids = [f"q{i}" for i in range(5)]
    expected = compare_paired(
        Bank.from_counts([10] * 5, [9] * 5, ids=ids),
        Bank.from_counts([3] * 5, [1] * 5, ids=ids),
        estimand="items",
        permutations=2000,
        seed=3,
    )
    assert body["verdict"] == expected.verdict == "regression"
    assert body["p_value"] == expected.p_value and body["estimand"].startswith("these items")
    assert body["interval"]["high"] < 0 and body["design"] == "paired, these items"
    population = json.loads(runner.invoke(app, args).stdout)["comparisons"][0]
    assert population["estimand"].startswith("population")
    clustered = runner.invoke(app, [*args, "--estimand", "items", "--cluster-col", "category"])
    assert clustered.exit_code == 2 and "--estimand items" in clustered.output
