"""A pytest plugin: run a non-deterministic test several times and judge its pass rate.

Shipped with trialscore (entry point ``pytest11``: it loads in every pytest session, and does
nothing to a test without the mark)::

    import pytest

    @pytest.mark.trials(n=10, min_pass_rate=0.8)
    def test_agent_answers(trial, seed):
        assert my_agent("2+2", seed=seed) == "4"

* The test function is called ``n`` times (``pytest --trials N`` overrides every mark's ``n``).
  The ``trial`` fixture gives the call's index (0, 1, ...) and ``seed`` its seed,
  :func:`~trialscore.runner.seeds.trial_seed` ``(base, test id, trial)`` with ``base`` from
  ``--trials-seed`` (default 0): the same on every run, different for every trial and test.
* **The rule for each call.** It *passes* when it returns; it *fails* when it raises (an
  ``assert``, ``pytest.fail``, any exception); it *errors* when it raises
  :class:`trialscore.TargetError` (the system under test could not be reached: not a wrong
  answer).  An errored trial is never a failed trial: it is left out of the pass rate.
  ``pytest.skip`` skips the whole test.  Fixtures are set up once for the test, before its
  first trial: an error there is pytest's usual *error* of the test (not a failure).
* **The verdict.** The test passes when its pass rate meets ``min_pass_rate`` (default 1.0):
  ``rule="point"`` (the default) compares ``passed / judged``; ``rule="confident"`` compares the
  lower end of the exact (Clopper-Pearson) interval at ``level`` (default 0.95), so a test passes
  only when the bar is met with that confidence: a test whose true pass rate is below the bar
  passes with probability at most ``(1 - level) / 2`` (the exact binomial test; 2.5% at 0.95).
  Even ``n`` of ``n`` passing gives a lower bound of only ``((1 - level) / 2) ** (1 / n)``, so the
  rule needs enough trials: at 0.95, ``n >= 17`` for ``min_pass_rate=0.8``, ``n >= 36`` for 0.9,
  ``n >= 72`` for 0.95, and no ``n`` for 1.0.  A mark that can never pass is refused when the
  tests are collected, naming the ``n`` that could.  For example::

      @pytest.mark.trials(n=30, min_pass_rate=0.8, rule="confident")   # passes at 29 or 30 of 30
      def test_agent_is_reliably_right(seed):
          assert my_agent("2+2", seed=seed) == "4"

  A test whose every trial errored fails (nothing was judged).
* The terminal summary lists every such test: passed/judged, errored, the pass rate with its
  interval (95% Wilson for ``rule="point"``, the rule's exact interval for ``"confident"``),
  flaky (some trials passed and some failed) or stable, and the verdict; a test whose every
  trial errored is "not judged" (it has no pass rate to be stable or flaky).
* ``--trials 0`` (or a negative ``--trials-seed``) is one usage error before any test runs.
  With pytest-xdist the results travel from the workers in each report's ``user_properties``,
  so the summary is the same.
"""

from __future__ import annotations

import inspect
import json
import traceback
from typing import Any

import pytest

from trialscore._words import plural

__all__ = ["TrialsOutcome", "fewest_confident_trials", "meets_bar"]

_PROPERTY = "trialscore.trials"
_RULES = {"point": "point", "confident": "confident"}


def fewest_confident_trials(min_pass_rate: float, level: float) -> int | None:
    """The fewest trials with which ``rule="confident"`` can pass: ``((1 - level)/2) ** (1/n) >= bar``.

    None when no number can (``min_pass_rate`` of 1: an exact lower bound is never 1).

    >>> [fewest_confident_trials(bar, 0.95) for bar in (0.8, 0.9, 0.95, 1.0)]
    [17, 36, 72, None]
    """
    import math

    if min_pass_rate >= 1.0:
        return None
    if min_pass_rate <= 0.0:
        return 1
    tail = (1.0 - level) / 2.0
    trials = max(1, math.ceil(math.log(tail) / math.log(min_pass_rate)))
    while trials > 1 and tail ** (1.0 / (trials - 1)) >= min_pass_rate:
        trials -= 1
    while tail ** (1.0 / trials) < min_pass_rate:
        trials += 1
    return trials


def meets_bar(passed: int, judged: int, min_pass_rate: float, rule: str, level: float) -> bool:
    """Whether ``passed`` of ``judged`` trials meet the bar: the rate (``point``) or the exact lower bound.

    >>> meets_bar(29, 30, 0.8, "confident", 0.95), meets_bar(28, 30, 0.8, "confident", 0.95)
    (True, False)
    """
    from trialscore.stats._intervals import proportion_interval

    if rule == "point":
        return passed / judged >= min_pass_rate
    return proportion_interval(passed, judged, level, "clopper-pearson").low >= min_pass_rate


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--trials N`` and ``--trials-seed S``."""
    group = parser.getgroup("trialscore", "trialscore: tests marked @pytest.mark.trials")
    group.addoption(
        "--trials",
        type=int,
        default=None,
        metavar="N",
        help="run every test marked @pytest.mark.trials N times (overrides the mark's n)",
    )
    group.addoption(
        "--trials-seed",
        type=int,
        default=0,
        metavar="S",
        help="base of the per-trial seeds of @pytest.mark.trials tests (default 0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the mark (for --strict-markers) and check ``--trials`` and ``--trials-seed`` once, so a
    bad value is one usage error before any test runs (not one traceback per marked test)."""
    trials, base = config.getoption("--trials"), config.getoption("--trials-seed")
    if trials is not None and trials < 1:
        raise pytest.UsageError(f"--trials must be at least 1 (the trials of each marked test); got {trials}")
    if base < 0:
        raise pytest.UsageError(f"--trials-seed must be at least 0; got {base}")
    config.addinivalue_line(
        "markers",
        "trials(n=10, min_pass_rate=1.0, rule='point', level=0.95): run the test n times and pass it when "
        "its pass rate meets min_pass_rate (rule 'confident': the exact (Clopper-Pearson) lower bound at "
        "the mark's level does)",
    )
    _COLLECTED.clear()


#: The results of this session's marked tests (reports reach the controlling process's hooks).
_COLLECTED: list[dict[str, Any]] = []


class TrialsOutcome:
    """The settings of one marked test (checked) and what its trials gave."""

    def __init__(self, item: pytest.Item, marker: pytest.Mark) -> None:
        from trialscore._validate import check_choice, check_integer, check_probability, check_unit

        options = dict(marker.kwargs)
        if marker.args:
            options.setdefault("n", marker.args[0])
        unknown = set(options) - {"n", "min_pass_rate", "rule", "level"}
        where = f"{item.nodeid}: @pytest.mark.trials"
        if unknown:
            raise pytest.UsageError(
                f"{where}: unknown argument(s) {sorted(unknown)}; use n, min_pass_rate, rule, level"
            )
        override = item.config.getoption("--trials")
        try:
            self.n = check_integer(override if override is not None else options.get("n", 10), "n", 1)
            self.min_pass_rate = check_unit(options.get("min_pass_rate", 1.0), "min_pass_rate")
            self.rule = check_choice(options.get("rule", "point"), "rule", _RULES)
            self.level = check_probability(options.get("level", 0.95), "level")
        except ValueError as exc:
            raise pytest.UsageError(f"{where}: {exc}") from exc
        if self.rule == "confident":
            fewest = fewest_confident_trials(self.min_pass_rate, self.level)
            if fewest is None or self.n < fewest:
                best = ((1.0 - self.level) / 2.0) ** (1.0 / self.n)
                need = (
                    "no number of trials can (use rule='point', or a min_pass_rate below 1)"
                    if fewest is None
                    else f"use n >= {fewest}, or rule='point'"
                )
                raise pytest.UsageError(
                    f"{where}: rule='confident' can never pass with n={self.n} and min_pass_rate="
                    f"{self.min_pass_rate:g}: even {self.n} of {self.n} passing gives an exact "
                    f"{self.level:.0%} lower bound of {best:.3f}; {need}"
                )
        self.passed = self.failed = self.errored = 0
        self.first_failure: str | None = None

    def record(self, trial: int, seed: int, error: BaseException | None) -> None:
        """Count one trial: None passed, a TargetError errored, anything else failed."""
        from trialscore.errors import TargetError

        if error is None:
            self.passed += 1
        elif isinstance(error, TargetError):
            self.errored += 1
        else:
            self.failed += 1
            if self.first_failure is None:
                lines = traceback.format_exception_only(type(error), error)
                self.first_failure = f"trial {trial} (seed {seed}): {''.join(lines).strip()}"

    def verdict(self) -> dict[str, Any]:
        """The test's result as plain data (for the summary, and xdist's reports)."""
        from trialscore.stats._intervals import proportion_interval

        judged = self.passed + self.failed
        result: dict[str, Any] = {
            "n": self.n,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "min_pass_rate": self.min_pass_rate,
            "rule": self.rule,
            "level": self.level,
            "flaky": self.passed > 0 and self.failed > 0,
            "first_failure": self.first_failure,
        }
        if judged == 0:
            return {**result, "rate": None, "low": None, "high": None, "ok": False}
        # the interval the summary prints: 95% Wilson, or the exact interval the confident rule reads
        if self.rule == "point":
            shown = proportion_interval(self.passed, judged)
        else:
            shown = proportion_interval(self.passed, judged, self.level, "clopper-pearson")
        return {
            **result,
            "rate": shown.estimate,
            "low": shown.low,
            "high": shown.high,
            "ok": meets_bar(self.passed, judged, self.min_pass_rate, self.rule, self.level),
        }


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check every mark's settings when the tests are collected: a bad or impossible one stops the session
    before any trial runs."""
    for item in items:
        marker = item.get_closest_marker("trials")
        if marker is not None:
            TrialsOutcome(item, marker)


def _seed(item: pytest.Item, trial: int) -> int:
    from trialscore.runner.seeds import trial_seed

    return trial_seed(item.config.getoption("--trials-seed"), item.nodeid, trial)


@pytest.fixture
def trial() -> int:
    """The index of the current trial of a ``@pytest.mark.trials`` test (0 in an unmarked test)."""
    return 0


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    """The seed of the current trial (:func:`~trialscore.runner.seeds.trial_seed` of the test id)."""
    return _seed(request.node, 0)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Call a marked test ``n`` times and judge its pass rate; leave every other test to pytest."""
    marker = pyfuncitem.get_closest_marker("trials")
    if marker is None:
        return None
    outcome = TrialsOutcome(pyfuncitem, marker)
    function = pyfuncitem.obj
    if inspect.iscoroutinefunction(function):
        raise pytest.UsageError(f"{pyfuncitem.nodeid}: @pytest.mark.trials runs sync test functions only")
    names = pyfuncitem._fixtureinfo.argnames
    arguments = {name: pyfuncitem.funcargs[name] for name in names}
    for index in range(outcome.n):
        seed_value = _seed(pyfuncitem, index)
        if "trial" in arguments:
            arguments["trial"] = index
        if "seed" in arguments:
            arguments["seed"] = seed_value
        try:
            function(**arguments)
        except (pytest.skip.Exception, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # a failed (or, for a TargetError, errored) trial
            outcome.record(index, seed_value, exc)
        else:
            outcome.record(index, seed_value, None)
    result = outcome.verdict()
    pyfuncitem.user_properties.append((_PROPERTY, json.dumps(result)))
    if not result["ok"]:
        pytest.fail(_failure(result), pytrace=False)
    return True


def _rate(result: dict[str, Any]) -> str:
    if result["rate"] is None:
        return "no trial judged"
    return f"{result['rate']:.3g} [{result['low']:.3g}, {result['high']:.3g}]"


def _failure(result: dict[str, Any]) -> str:
    judged = result["passed"] + result["failed"]
    if judged == 0:
        return f"every trial errored ({result['errored']} of {result['n']}): nothing could be judged"
    measure = (
        "pass rate" if result["rule"] == "point" else f"lower end of the exact {result['level']:.0%} interval"
    )
    text = (
        f"{result['passed']}/{judged} trials passed, pass rate {_rate(result)}: the {measure} is below "
        f"min_pass_rate={result['min_pass_rate']:g} (rule {result['rule']!r})"
    )
    if result["errored"]:
        text += f"; {plural(result['errored'], 'errored trial')} left out"
    if result["first_failure"]:
        text += f"\nfirst failed {result['first_failure']}"
    return text


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the results of marked tests (from this process, or from xdist's workers)."""
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == _PROPERTY:
            _COLLECTED.append({"nodeid": report.nodeid, **json.loads(str(value))})


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """One line per marked test: passed/judged, errored, rate [95% Wilson], flaky, verdict."""
    if not _COLLECTED:
        return
    writer = terminalreporter
    writer.section("trialscore: repeated trials")
    for result in sorted(_COLLECTED, key=lambda r: r["nodeid"]):
        judged = result["passed"] + result["failed"]
        bar = f"min {result['min_pass_rate']:g} ({result['rule']})"
        verdict = "PASS" if result["ok"] else "FAIL"
        if judged == 0:
            writer.line(
                f"{verdict} {result['nodeid']}: not judged, every trial errored "
                f"({result['errored']} of {result['n']}), {bar}"
            )
            continue
        errored = f", {result['errored']} errored" if result["errored"] else ""
        writer.line(
            f"{verdict} {result['nodeid']}: {result['passed']}/{judged} passed{errored}, "
            f"rate {_rate(result)}, {'flaky' if result['flaky'] else 'stable'}, {bar}"
        )
    _COLLECTED.clear()
