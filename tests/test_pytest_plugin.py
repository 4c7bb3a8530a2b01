"""The pytest plugin, run in real pytest processes on a test file: passing, failing, flaky, errored tests.

Each session is ``python -m pytest`` in a process of its own, forked from one Python that imported pytest
and what the plugin uses once (tests/forks.py), never the plugin itself (pytest loads it from ``-p``, as
afresh) nor xdist (whose workers are fresh Pythons of their own).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tests.forks import Done, Forks, ForkServers
from trialscore.runner.seeds import trial_seed
from trialscore.stats import proportion_interval

TESTS = """
import random
import pytest
from trialscore.errors import TargetError


@pytest.mark.trials(n=5, min_pass_rate=0.8)
def test_always(trial, seed):
    assert trial >= 0 and seed > 0


@pytest.mark.trials(n=5, min_pass_rate=0.8)
def test_never(trial):
    assert trial < 0, f"trial {trial} is not negative"


@pytest.mark.trials(n=40, min_pass_rate=0.5)
def test_flaky(seed):
    assert random.Random(seed).random() < 0.7


@pytest.mark.trials(n=40, min_pass_rate=0.6, rule="confident")
def test_flaky_confident(seed):
    assert random.Random(seed).random() < 0.7


@pytest.mark.trials(n=6, min_pass_rate=1.0)
def test_unreachable_sometimes(trial):
    if trial % 2:
        raise TargetError("endpoint unreachable")


@pytest.mark.trials(n=3)
def test_all_errored():
    raise TargetError("down")


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


@pytest.mark.trials(n=4)
def test_setup_error(broken):
    pass


def test_plain(trial, seed):
    assert trial == 0
"""


#: What a session imports before it reads its command line: pytest and the plugin's own imports.
IMPORTED = ("pytest", "trialscore.errors", "trialscore.runner.seeds", "trialscore.stats._intervals")
#: The plugin loads from ``-p`` alone, whether or not it is installed.
ALONE = "import os; os.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] = '1'"


@pytest.fixture(scope="module")
def sessions(fork_servers: ForkServers) -> Forks:
    """Runs ``python -m pytest``, each session a process of its own (tests/forks.py)."""
    return fork_servers.get(300, IMPORTED, program="pytest")


def session(sessions: Forks, folder: Path, *args: str, timeout: float = 120) -> Done:
    """``pytest -p trialscore.pytest_plugin -p no:cacheprovider ARGS`` in ``folder``, done within
    ``timeout`` seconds."""
    sessions.start(
        "-p", "trialscore.pytest_plugin", "-p", "no:cacheprovider", *args, cwd=folder, prelude=ALONE
    )
    return sessions.finish(timeout)


def pytest_run(sessions: Forks, tmp_path: Path, *args: str) -> Done:
    (tmp_path / "test_agent.py").write_text(TESTS)
    return session(sessions, tmp_path, "-rA", "test_agent.py", *args, timeout=300)


def expected_passes(test: str, n: int) -> int:
    return sum(random.Random(trial_seed(0, f"test_agent.py::{test}", t)).random() < 0.7 for t in range(n))


def outcomes(output: str) -> dict[str, str]:
    found = re.findall(r"^(PASSED|FAILED|ERROR) test_agent.py::(\w+)", output, re.MULTILINE)
    return {name: outcome for outcome, name in found}


def summary_lines(output: str) -> dict[str, str]:
    section = output.split("trialscore: repeated trials", 1)[1]
    return dict(re.findall(r"^(?:PASS|FAIL) test_agent.py::(\w+): (.*)$", section, re.MULTILINE))


def check_flaky(lines: dict[str, str], n: int) -> None:
    c = expected_passes("test_flaky", n)
    shown = proportion_interval(c, n)
    rate = f"{shown.estimate:.3g} [{shown.low:.3g}, {shown.high:.3g}]"
    assert lines["test_flaky"] == f"{c}/{n} passed, rate {rate}, flaky, min 0.5 (point)"


@pytest.mark.slow
def test_outcomes_and_summary(sessions: Forks, tmp_path: Path) -> None:
    done = pytest_run(sessions, tmp_path)
    output = done.stdout
    assert done.code == 1, output
    seen = outcomes(output)
    c = expected_passes("test_flaky_confident", 40)
    confident = proportion_interval(c, 40, method="clopper-pearson").low >= 0.6
    assert seen == {
        "test_always": "PASSED",
        "test_never": "FAILED",
        "test_flaky": "PASSED" if expected_passes("test_flaky", 40) >= 20 else "FAILED",
        "test_flaky_confident": "PASSED" if confident else "FAILED",
        "test_unreachable_sometimes": "PASSED",  # its errored trials are left out, never failures
        "test_all_errored": "FAILED",
        "test_setup_error": "ERROR",  # a fixture error is an error, not a failure
        "test_plain": "PASSED",
    }
    lines = summary_lines(output)
    assert lines["test_always"] == "5/5 passed, rate 1 [0.566, 1], stable, min 0.8 (point)"
    assert lines["test_never"] == "0/5 passed, rate 0 [0, 0.434], stable, min 0.8 (point)"
    assert (
        lines["test_unreachable_sometimes"]
        == "3/3 passed, 3 errored, rate 1 [0.439, 1], stable, min 1 (point)"
    )
    # no trial was judged: the test has no pass rate to call stable or flaky
    assert lines["test_all_errored"] == "not judged, every trial errored (3 of 3), min 1 (point)"
    check_flaky(lines, 40)
    exact = proportion_interval(c, 40, method="clopper-pearson")  # the confident rule's own interval
    rate = f"{exact.estimate:.3g} [{exact.low:.3g}, {exact.high:.3g}]"
    assert lines["test_flaky_confident"].startswith(f"{c}/40 passed, rate {rate}, flaky, min 0.6 (confident)")
    assert "test_setup_error" not in lines and "test_plain" not in lines
    assert "0/5 trials passed, pass rate 0 [0, 0.434]: the pass rate is below min_pass_rate=0.8" in output
    assert "first failed trial 0 (seed" in output and "AssertionError: trial 0 is not negative" in output
    assert "every trial errored (3 of 3): nothing could be judged" in output


@pytest.mark.slow
def test_trials_option_overrides_n_and_xdist_gives_the_same_summary(sessions: Forks, tmp_path: Path) -> None:
    done = pytest_run(sessions, tmp_path, "--trials", "12", "-p", "xdist.plugin", "-n", "2")
    lines = summary_lines(done.stdout)
    assert lines["test_always"] == "12/12 passed, rate 1 [0.758, 1], stable, min 0.8 (point)"
    check_flaky(lines, 12)
    assert outcomes(done.stdout)["test_setup_error"] == "ERROR"


@pytest.mark.slow
def test_trials_zero_is_one_usage_error_before_any_test(sessions: Forks, tmp_path: Path) -> None:
    for option, message in (
        (["--trials", "0"], "--trials must be at least 1 (the trials of each marked test); got 0"),
        (["--trials-seed", "-1"], "--trials-seed must be at least 0; got -1"),
    ):
        done = pytest_run(sessions, tmp_path, *option)
        assert done.code == 4, done.stdout + done.stderr  # pytest's usage error
        assert done.stderr.strip() == f"ERROR: {message}", done.stderr
        assert "Traceback" not in done.stdout + done.stderr and "test_agent.py" not in done.stdout


@pytest.mark.slow
def test_an_unmarked_session_is_left_alone(sessions: Forks, tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    done = session(sessions, tmp_path, "test_plain.py")
    assert done.code == 0 and "1 passed" in done.stdout
    assert "trialscore" not in done.stdout


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\ntrialscore = "trialscore.pytest_plugin"\n' in pyproject


@pytest.mark.slow
def test_a_confident_rule_that_cannot_pass_is_refused_at_collection(sessions: Forks, tmp_path: Path) -> None:
    impossible = (
        "import pytest\n\n"
        "@pytest.mark.trials(n=10, min_pass_rate=0.8, rule='confident')\n"
        "def test_agent():\n    assert True\n"
    )
    (tmp_path / "test_impossible.py").write_text(impossible)
    done = session(sessions, tmp_path, "test_impossible.py")
    assert done.code == 4, done.stdout + done.stderr  # a usage error, before any trial ran
    message = (
        "test_impossible.py::test_agent: @pytest.mark.trials: rule='confident' can never pass with n=10 "
        "and min_pass_rate=0.8: even 10 of 10 passing gives an exact 95% lower bound of 0.692; "
        "use n >= 17, or rule='point'"
    )
    assert message in done.stderr and "Traceback" not in done.stderr
    feasible = impossible.replace("n=10", "n=17")
    (tmp_path / "test_impossible.py").write_text(feasible)
    done = session(sessions, tmp_path, "test_impossible.py")
    assert done.code == 0 and "1 passed" in done.stdout


def test_the_confident_rule_is_the_exact_lower_bound_against_the_bar() -> None:
    """The confident rule's verdict is the exact (Clopper-Pearson) lower bound against the bar, at every
    count to 40 trials and at bars on the rate itself, and its errors are the bound's."""
    from trialscore.errors import EvaluationError
    from trialscore.pytest_plugin import meets_bar

    for n in range(1, 41):
        for c in range(n + 1):
            low = proportion_interval(c, n, 0.9, method="clopper-pearson").low
            for bar in (0.0, c / n, 0.5, 0.8, 1.0):
                assert meets_bar(c, n, bar, "confident", 0.9) == (low >= bar), (c, n, bar)
    for c, n, level in ((3, 5, 1.5), (6, 5, 0.95), (1, 0, 0.95)):  # the bound's own errors
        with pytest.raises(EvaluationError) as raised:
            proportion_interval(c, n, level, method="clopper-pearson")
        with pytest.raises(EvaluationError, match=re.escape(str(raised.value))):
            meets_bar(c, n, 0.9, "confident", level)


@pytest.mark.slow
def test_the_confident_rule_passes_a_test_below_its_bar_at_most_at_its_nominal_rate() -> None:
    """Exact: the chance that X ~ Binomial(n, bar) passes (the worst true rate below the bar) is at most
    (1 - level) / 2 for every n up to 200 and four bars; at each bar the rule can pass from its stated n.

    The rule passes from its least passing count up (the exact lower bound grows with the passes), so
    that count is found by bisection: the rule fails one pass below it and passes at it."""
    from scipy.stats import binom

    from trialscore.pytest_plugin import fewest_confident_trials, meets_bar

    def least_passing(n: int, bar: float) -> int | None:
        if not meets_bar(n, n, bar, "confident", 0.95):
            return None
        low, high = -1, n  # fails at low (or low is below 0), passes at high
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if meets_bar(middle, n, bar, "confident", 0.95) else (middle, high)
        return high

    worst = 0.0
    for bar in (0.5, 0.8, 0.9, 0.95):
        fewest = fewest_confident_trials(bar, 0.95)
        assert fewest is not None and meets_bar(fewest, fewest, bar, "confident", 0.95)
        assert not meets_bar(fewest - 1, fewest - 1, bar, "confident", 0.95)
        for n in range(1, 201):
            least = least_passing(n, bar)
            assert (least is None) == (n < fewest), (bar, n, least)  # it can pass from its stated n on
            rate = float(binom.sf(least - 1, n, bar)) if least is not None else 0.0
            worst = max(worst, rate)
    assert 0.02 < worst <= 0.025  # the exact test's level, reached closely at some n
