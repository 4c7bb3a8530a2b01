"""What the commands print, read as a user reads it: verdicts in colour on a terminal only, no float
noise or Python reprs, counted nouns that agree, an 80-column layout that never splits a field,
unknown costs said as such, and advice that quotes the table it sits under."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from rich.console import Console

import trialscore.cli._render as render
import trialscore.cli.run as run_command
from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.terminal import stdout_console

runner = CliRunner()
RED, GREEN = "\x1b[31m", "\x1b[32m"


def trials_file(path: Path, passes: dict[str, int], n: int = 5, category: str = "c") -> Path:
    """A trial file: case -> passes out of ``n`` trials (passes first)."""
    rows = [
        {"case_id": case, "trial": trial, "passed": trial < c, "category": category}
        for case, c in passes.items()
        for trial in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def regression_files(tmp_path: Path) -> tuple[Path, Path]:
    base = trials_file(tmp_path / "base.jsonl", {f"case-{i}": 5 for i in range(12)})
    now = trials_file(tmp_path / "now.jsonl", {f"case-{i}": 0 if i < 10 else 5 for i in range(12)})
    return base, now


def test_a_regression_is_red_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Console(force_terminal=True, color_system="standard", width=200, highlight=False)
    monkeypatch.setattr(render, "console", terminal)
    base, now = regression_files(tmp_path)
    result = runner.invoke(app, ["compare", str(base), str(now)])
    assert result.exit_code == 0, result.output
    assert f"{RED}regression" in result.stdout
    improved = runner.invoke(app, ["compare", str(now), str(base)])
    assert f"{GREEN}improvement" in improved.stdout


def test_no_colour_off_a_terminal_or_with_no_color(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, now = regression_files(tmp_path)
    plain = runner.invoke(app, ["compare", str(base), str(now)])  # CliRunner's output is not a terminal
    assert "regression" in plain.stdout and "\x1b[" not in plain.stdout
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(render, "console", stdout_console())  # the console the app builds, on a terminal
    result = runner.invoke(app, ["compare", str(base), str(now)])
    assert "regression" in result.stdout and RED not in result.stdout and "\x1b[3" not in result.stdout


def test_a_slope_of_float_noise_reads_zero(tmp_path: Path) -> None:
    # pass rates 0.433, 0.367, 0.433 on the same six items: the least-squares slope is 0, computed as 9.3e-18
    runs = [[0, 5, 0, 2, 5, 1], [1, 2, 4, 3, 1, 0], [2, 2, 2, 3, 0, 4]]
    files = [
        trials_file(tmp_path / f"{index}.jsonl", {f"i{k}": c for k, c in enumerate(passes)})
        for index, passes in enumerate(runs)
    ]
    args = ["track", *map(str, files), "--dates", "2024-01-01,2024-01-08,2024-01-15"]
    result = runner.invoke(app, [*args, "--format", "json"])
    slope = json.loads(result.stdout)["categories"][0]["trend_test"]["slope"]
    assert slope != 0 and abs(slope) < 1e-15  # the noise is kept in the data
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    shown = re.search(r"│\s+0\.0000\s+│", table.stdout) or re.search(r"slope/run 0\.0000 ", table.stdout)
    assert "e-1" not in table.stdout and shown, table.stdout


def test_feasible_is_yes_or_no_and_one_item_is_singular(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", "--delta", "0.1", "--pass-rate", "0.7", "--trials", "5"])
    assert result.exit_code == 0 and re.search(r"│\s+yes\s+│", result.stdout), result.stdout
    assert "True" not in result.stdout
    one = runner.invoke(app, ["score", str(trials_file(tmp_path / "one.jsonl", {"only": 3}))])
    assert "1 item, 5 trials, 0 errored, 1 flaky" in one.stdout and "1 items" not in one.stdout


def test_score_bayes_advice_quotes_the_tables_interval_and_no_k(tmp_path: Path) -> None:
    path = trials_file(
        tmp_path / "t.jsonl", {f"c{i}": c for i, c in enumerate([5, 5, 4, 3, 0, 5, 2, 5, 1, 5, 4, 3])}
    )
    result = runner.invoke(app, ["score", str(path), "--metric", "bayes", "--format", "json"])
    group = json.loads(result.stdout)["groups"][0]
    interval = group["metrics"][0]["interval"]
    shown = f"[{100 * interval['low']:.1f}%, {100 * interval['high']:.1f}%]"
    advice = [a["message"] for a in group["advice"]]
    assert advice and all(shown in message for message in advice), (shown, advice)
    assert not any("pass@5" in message or "pass@" in message for message in advice), advice
    table = runner.invoke(app, ["score", str(path), "--metric", "bayes"])
    assert shown in table.stdout and "pass@5" not in table.stdout


AGENT = (
    'read -r p; l=$(printf %s "$p" | cut -c $((TRIALSCORE_TRIAL + 1)));'
    ' [ "$l" = E ] && exit 3; [ "$l" = P ] && echo yes || echo no\n'
)


def suite(tmp_path: Path) -> Path:
    """Cases whose input spells each trial: P passes, F fails, E errors; the agent reports no cost."""
    (tmp_path / "agent.sh").write_text(AGENT)
    cases = {
        "steady": "PPPPPP",
        "wobbly-case-with-a-long-name": "PPFPEP",
        "broken": "FFFFFF",
        "spotty": "PEPPPE",
    }
    lines = [
        f'  - {{id: {name}, input: "{spell}", expected: "yes", category: cat-{i % 2}}}'
        for i, (name, spell) in enumerate(cases.items())
    ]
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: wording\ntargets: [{name: agent-with-a-long-name, type: command, argv: [sh, agent.sh]}]\n"
        "graders: [{type: exact}]\ncases:\n"
        + "\n".join(lines)
        + "\nexecution: {trials: {count: 6}, retries: 0}\n"
    )
    return path


def test_the_run_card_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_command, "console", Console(width=80, color_system=None, highlight=False))
    args = ["run", str(suite(tmp_path)), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("errors:")[0].splitlines()  # the card and its metric lines
    assert max(map(len, lines)) <= 80, result.stdout
    card = result.stdout.split("pass@1")[0]
    assert "err  ·" not in card and "·\n" not in card and not re.search(r"· *$", card, re.MULTILINE)
    # every line of a record is whole fields: 'name value', never a name without its value
    names = ["category", "strategy", "verdict", "score", "pass/n", "err", "pass@k", "flaky%", "cost"]
    for line in (line for line in lines if line.startswith("  ") and "·" in line):
        for field in line.strip().split(" · "):
            name, _, value = field.partition(" ")
            assert name in names and value, (field, line)
    assert "cost unknown" in card and "$0" not in result.stdout
    metrics = [line for line in lines if "[" in line and ("pass@" in line or "pass^" in line)]
    assert all(line.count("[") == line.count("]") for line in metrics), metrics  # no interval split
    assert "trials: 24 run, 3 errored" in result.stdout and "cost unknown" in result.stdout


@pytest.mark.slow
def test_summed_costs_carry_no_float_noise(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["run", "--demo", "--trials", "7", "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    assert runner.invoke(app, [*args, "--out", str(out)]).exit_code == 0
    summary = json.loads((out / "summary.json").read_text())
    costs = [json.loads(line)["cost_usd"] for line in (out / "trials.jsonl").read_text().splitlines()]
    spent = summary["cost"]["spent_usd"]
    assert spent == pytest.approx(math.fsum(costs), rel=1e-11)
    assert len(repr(spent)) <= len(f"{math.fsum(costs):.12g}"), spent  # no ...99999999988 tail
    listed = json.loads(
        runner.invoke(app, ["runs", "--store", str(tmp_path / "s.sqlite"), "--format", "json"]).stdout
    )
    assert repr(listed["runs"][0]["cost_usd"]) == repr(spent)


def test_an_unset_group_value_is_said_not_shown_as_a_python_repr(tmp_path: Path) -> None:
    rows = [{"case_id": "a", "trial": t, "passed": True} for t in range(5)] * 2
    rows += [{"case_id": "b", "trial": t, "passed": True, "target": "x"} for t in range(5)]
    path = tmp_path / "repeated.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = runner.invoke(app, ["score", str(path), "--by", "target"])
    assert result.exit_code == 2
    assert "item 'a' (target not set) has 10 trials" in result.output and "None" not in result.output


def test_every_library_parameter_a_message_names_has_its_flag_and_the_library_says_no_flag(
    tmp_path: Path,
) -> None:
    from trialscore.cli._options import FLAGS

    source = Path(render.__file__).parents[1]
    named = {
        match.group(2)
        for path in source.rglob("*.py")
        for match in re.finditer(r"parameter\((['\"])(.+?)\1\)", path.read_text(encoding="utf-8"))
        if "cli" not in path.relative_to(source).parts
    }
    assert named and not named - FLAGS.keys(), sorted(named - FLAGS.keys())
    # the library says the parameter, the command line its flag, of the same error
    from trialscore.errors import EvaluationError
    from trialscore.results import ColumnMap, read_counts

    path = tmp_path / "t.csv"
    path.write_text("task,ok\nq1,1\n")
    with pytest.raises(EvaluationError, match=r"^columns\.item 'nope' is not a column of the file"):
        read_counts([path], columns=ColumnMap(item="nope"))
    result = runner.invoke(app, ["score", str(path), "--item-col", "nope"])
    assert result.exit_code == 2
    assert (
        "error: --item-col 'nope' is not a column of the file; the file has columns task, ok" in result.output
    )
