"""The report's panels as data: distinct outputs and errors with counts, word diffs of flipped cases,
tool-call strips and divergence, the side-by-side headline, the case x run heat map, and the panel
registry."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import AGENT_TRIALS, agent_runs, dated_runs, write_records, write_trials
from tests.report.test_report_report import page_data
from trialscore.report import ReportSettings, build_report
from trialscore.report.calls import calls_of, divergence
from trialscore.report.outputs import TextTable, case_groups, loose
from trialscore.report.panels import PANELS
from trialscore.report.worddiff import token_diff, tokens, word_diff
from trialscore.results.trajectory import ToolCall


def _named(data: dict[str, Any], groups: list[list[Any]]) -> list[tuple[str, list[int]]]:
    """Groups as (text, positions)."""
    texts = data["cases"]["texts"]
    return [
        (texts[index] if isinstance(texts[index], str) else texts[index][0], found) for index, found in groups
    ]


@pytest.fixture
def agents(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    before, now = agent_runs(tmp_path)
    html = build_report([now], baseline=before)
    return html, page_data(html)


CASES = sorted(AGENT_TRIALS)  # the page's order: target, category, case id (one target and category)


def test_distinct_outputs_are_grouped_exactly_and_loosely_with_counts(
    agents: tuple[str, dict[str, Any]],
) -> None:
    _, data = agents
    capital = data["cases"]["trials"][CASES.index("capital")]
    exact, loosely = capital[7]
    assert _named(data, exact) == [("Lyon", [0, 1]), (" lyon", [2]), ("Marseille", [3])]
    assert _named(data, loosely) == [("Lyon", [0, 1, 2]), ("Marseille", [3])]
    assert capital[8] is None  # no trial errored
    # each distinct text is stored once in the page, whatever the number of trials that said it
    texts = data["cases"]["texts"]
    assert texts.count("Lyon") == 1 and texts.count("same") == 1
    same = data["cases"]["trials"][CASES.index("same")]
    assert _named(data, same[7][0]) == [("same", [0, 1, 2, 3])] and same[7][1] == same[7][0]


def test_errors_are_grouped_the_same_way(agents: tuple[str, dict[str, Any]]) -> None:
    _, data = agents
    errors = data["cases"]["trials"][CASES.index("errors")]
    exact, loosely = errors[8]
    assert _named(data, exact) == [("Rate limited (429)", [0]), ("rate limited  (429) ", [1]), ("boom", [2])]
    assert _named(data, loosely) == [("Rate limited (429)", [0, 1]), ("boom", [2])]
    assert _named(data, errors[7][0]) == [("ok", [3])]


def test_grouping_against_a_plain_count() -> None:
    """The grouping of random texts equals a count done the obvious way."""
    import random

    rng = random.Random(5)
    words = ["Paris", "paris", " Paris ", "PARIS\n", "Lyon", "lyon ", None]
    for _ in range(200):
        said = [rng.choice(words) for _ in range(rng.randint(1, 12))]
        table = TextTable()
        found = case_groups([table.add(text) for text in said], table)
        if all(text is None for text in said):
            assert found is None
            continue
        assert found is not None
        for groups, key in ((found[0], lambda text: text), (found[1], loose)):
            expected: dict[str, list[int]] = {}
            for position, text in enumerate(said):
                if text is not None:
                    expected.setdefault(key(text), []).append(position)
            assert sorted(positions for _, positions in groups) == sorted(expected.values())
            assert [len(positions) for _, positions in groups] == sorted(
                (len(p) for p in expected.values()), reverse=True
            )
            for shown, positions in groups:  # a group shows one of its own texts
                assert key(table.text(shown)) == key(said[positions[0]])  # type: ignore[arg-type]


def test_word_diffs_only_for_flipped_cases_and_they_rebuild_both_outputs(
    agents: tuple[str, dict[str, Any]],
) -> None:
    html, data = agents
    diffs = data["against"]["diffs"]
    assert set(diffs) == {str(CASES.index("capital")), str(CASES.index("agent"))}  # regressed, became flaky
    capital = diffs[str(CASES.index("capital"))]
    assert capital == {"before": [4, 4], "now": [2, 4], "ops": [[-1, "Paris"], [1, "Lyon"]]}
    agent = diffs[str(CASES.index("agent"))]  # the most common output now is the earliest of three alike
    assert agent["ops"] == [[0, "Booked 2 nights."]] and agent["now"] == [1, 3]
    assert "2 cases whose verdict flipped have a word diff" in html


def test_word_diff_rebuilds_both_texts() -> None:
    import random

    rng = random.Random(1)
    vocabulary = ["the", "cat", "sat", ",", " ", "\n", "é", "🙂", "42", "mat."]
    for _ in range(300):
        a = "".join(rng.choice(vocabulary) + rng.choice(["", " "]) for _ in range(rng.randint(0, 30)))
        b = "".join(rng.choice(vocabulary) + rng.choice(["", " "]) for _ in range(rng.randint(0, 30)))
        assert "".join(tokens(a)) == a
        ops = word_diff(a, b)
        assert "".join(text for op, text in ops if op <= 0) == a
        assert "".join(text for op, text in ops if op >= 0) == b
        assert all(text for _, text in ops) and all(x[0] != y[0] for x, y in itertools.pairwise(ops))


def test_word_diff_equals_the_diff_over_every_token() -> None:
    """The common start and end of two texts are not split into tokens: the diff is the same as over
    every token of both texts."""
    import random

    # a repeated word: the end the texts share ("y z") gives its first token to the start they share
    assert word_diff("x y z", "x y y z") == token_diff(["x ", "y ", "z"], ["x ", "y ", "y ", "z"])
    assert word_diff("x y z", "x y y z") == [[0, "x y "], [1, "y "], [0, "z"]]
    rng = random.Random(4)
    words = ["the", "cat", "sat", "mat.", "42", "x-y", "é", "中文", "🙂", "a,", "_"]
    spaces = [" ", " ", "  ", "\n", "\t", "\u00a0", "", "\u2028"]
    for _ in range(3000):
        said = [rng.choice(words) + rng.choice(spaces) for _ in range(rng.randint(0, 25))]
        other = list(said)
        for _ in range(rng.randint(0, 4)):
            place = rng.randint(0, len(other))
            change = rng.random()
            if change < 0.4:
                other.insert(place, rng.choice(words) + rng.choice(spaces))
            elif other:
                del other[min(place, len(other) - 1)]
                if change > 0.7:
                    other.insert(place, rng.choice(words) + rng.choice(spaces))
        a, b = rng.choice(spaces) * rng.randint(0, 1) + "".join(said), "".join(other)
        assert word_diff(a, b) == token_diff(tokens(a), tokens(b)), (a, b)


def test_tool_call_strips_and_the_step_where_trials_diverge(agents: tuple[str, dict[str, Any]]) -> None:
    html, data = agents
    strips, step = data["cases"]["trials"][CASES.index("agent")][9]
    tools, texts = data["cases"]["tools"], data["cases"]["texts"]
    shown = [
        None if strip is None else [(tools[name], json.loads(texts[arguments])) for name, arguments in strip]
        for strip in strips
    ]
    assert shown == [
        [("search", {"q": "Paris"}), ("book", {"nights": 2})],
        [("search", {"q": "Paris"}), ("book", {"nights": 3})],
        [("search", {"q": "Paris"})],
        None,  # the errored trial recorded no calls
    ]
    assert step == 2
    assert all(
        entry[9] is None
        for case, entry in zip(CASES, data["cases"]["trials"], strict=True)
        if case != "agent"
    )
    panel = html.split('<section id="tool-calls"', 1)[1].split("</section>", 1)[0]
    assert "1 case recorded the tool calls of its trials; in 1 the trials took different paths" in panel
    assert '<tr data-i="0"><td>agent</td><td>m</td><td>2</td>' in panel


def test_tool_calls_are_read_defensively() -> None:
    calls = [ToolCall(name="search", arguments={"q": 1}), {"name": "book", "arguments": '{"n": 2}'}]
    assert calls_of(calls) == [("search", '{"q":1}'), ("book", '{"n":2}')]
    assert calls_of({"tool_calls": [{"name": "a"}], "output": "x"}) == [("a", "{}")]
    for bad in ("{oops", "[1]", '[{"name": ""}]', '[{"name": "a", "arguments": [1]}]', 5, {"steps": 2}):
        assert calls_of(bad) is None, bad
    assert divergence([[("a", "{}")]]) is None
    assert divergence([[], []]) is None and divergence([[], [("a", "{}")]]) == 1


def test_a_run_without_tool_calls_has_no_tool_call_panel(tmp_path: Path) -> None:
    html = build_report([write_trials(tmp_path / "t.jsonl", 6, 3, seed=1)])
    assert 'id="tool-calls"' not in html and 'href="#tool-calls"' not in html


def test_side_by_side_headline_at_one_k(tmp_path: Path) -> None:
    rows = [
        {"case_id": f"c{i}", "trial": t, "target": target, "verdict": "pass" if (i + t) % 3 else "fail"}
        for target, trials in (("a", 8), ("b", 5))
        for i in range(6)
        for t in range(trials)
    ]
    html = build_report([write_records(tmp_path / "t.jsonl", rows)])
    side = html.split('<table class="num side">', 1)[1].split("</table>", 1)[0]
    assert '<th scope="col">a</th><th scope="col">b</th>' in side
    labels = [line.split("</th>", 1)[0] for line in side.split('<tr><th scope="row">')[1:]]
    assert labels == ["pass@1", "pass@5", "pass^1", "pass^5"]  # k = 5 for both: the most both have


def test_the_headline_states_its_pass_hat_k_convention(tmp_path: Path) -> None:
    rows = [
        {"case_id": f"c{i}", "trial": t, "verdict": "pass" if (i + t) % 3 else "error"}
        for i in range(4)
        for t in range(3)
    ]
    path = write_records(tmp_path / "t.jsonl", rows)
    for errors, said in (("exclude", "left out"), ("fail", "counted as failed trials")):
        html = build_report([path], settings=ReportSettings(errors=errors))
        headline = html.split('id="h-headline"', 1)[1].split("</section>", 1)[0]
        line = headline.split('<p class="rule">', 1)[1].split("</p>", 1)[0]
        assert line.startswith("pass^k: unbiased") and said in line, line


@pytest.mark.slow
def test_heat_map_of_ten_runs_with_the_trend_per_category(tmp_path: Path) -> None:
    runs = dated_runs(tmp_path, 8, falling=4, steady_passes=7, month=2, late=True)  # case-7 joins at run 2
    html = build_report(runs)
    heat = page_data(html)["trends"]
    assert [run[0] for run in heat["runs"]] == [f"2025-02-{day:02d}" for day in range(1, 11)]
    groups = {name: (trend, cases) for name, trend, cases in heat["groups"]}
    assert groups["falling"][0] == "declining" and groups["steady"][0] == "stable"
    falling = {case: cells for case, _, cells in groups["falling"][1]}
    assert falling["case-0"] == [[10 - index, 10] for index in range(10)]
    steady = {case: cells for case, _, cells in groups["steady"][1]}
    assert steady["case-7"][0] is None and steady["case-7"][1] == [7, 10]
    assert "Each case in each run" in html and 'id="heat"' in html


def test_every_panel_is_registered_once_with_its_template_and_script() -> None:
    from importlib.resources import files

    templates = files("trialscore.report") / "templates" / "panels"
    ids = [panel.id for panel in PANELS]
    assert len(ids) == len(set(ids))
    for panel in PANELS:
        assert (templates / panel.template).is_file(), panel.template
        assert panel.script is None or (templates / panel.script).is_file(), panel.script


def test_a_panel_added_to_the_registry_shows_in_the_page_and_its_navigation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adding a panel is one module and one template include registered in one place."""
    import trialscore.report.panels as registry
    from trialscore.report.panel import Built, Panel

    extra = Panel(
        "errors-again", "Errors again", "errors.html.j2", lambda context: Built({"rows": [], "errored": 0})
    )
    monkeypatch.setattr(registry, "PANELS", (*registry.PANELS, extra))
    html = build_report([write_trials(tmp_path / "t.jsonl", 6, 3, seed=1)])
    assert '<a href="#errors-again">Errors again</a>' in html and '<section id="errors-again"' in html


def test_live_settings_make_a_page_that_says_it_is_running(tmp_path: Path) -> None:
    path = write_trials(tmp_path / "t.jsonl", 6, 3, seed=1)
    live = {"seq": 3, "committed": 18, "planned": 40, "refresh": 2.0, "stale": 60.0}
    html = build_report([path], settings=ReportSettings(live=live))
    assert "Running: 18 of 40 planned trials done." in html
    assert page_data(html)["live"] == live
    assert page_data(build_report([path]))["live"] is None and 'id="live"' not in build_report([path])
