r"""Gates on a finished run: metric bars, an error-rate ceiling, and the paired verdict against a baseline.

Every gate is judged per target; each gives one :class:`GateResult` (metric, value, bar,
rule, pass/fail).  ``trialscore run`` exits 1 when any gate failed.

* ``--fail-under METRIC=BAR``: any metric of :mod:`trialscore.core.metrics` at any k
  (``pass@1=0.8``, ``pass^3=0.5``, ``avg=0.7``, ``g-pass@4_tau=0.5=0.6``, ``bayes=0.6``).
  The value is the bank estimator over the target's cases (errored trials left out of n);
  rule ``point`` (the default) passes when :math:`\hat\theta \ge \text{bar}`, rule
  ``confident`` when the lower end of its 95% interval (the one ``trialscore score``
  prints) is: :math:`L \ge \text{bar}`.
* ``--max-error-rate RATE``: the share of the target's stored trials that errored,
  :math:`e / N \le \text{RATE}`.
* ``--baseline RUN``: pass@1 (``avg``) per case, paired on the cases both runs hold, by
  :func:`trialscore.stats.compare_paired` (the test ``trialscore compare`` uses); with
  ``--fail-on regression`` a significant regression fails the gate.

>>> parse_threshold("pass@5=0.8")
Threshold(metric='pass@k', k=5, tau=None, bar=0.8)
>>> parse_threshold("g-pass@4_tau=0.5=0.6").label
'g-pass@4_tau=0.5'
>>> parse_threshold("pass@k=0.8")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: fail_under 'pass@k=0.8': metric pass@k needs its k, e.g. pass@1 ...
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from trialscore._record import Record
from trialscore._words import plural
from trialscore.core.metrics import METRICS, resolve_metric
from trialscore.errors import EvaluationError, InsufficientDataError, parameter, worded

if TYPE_CHECKING:
    from trialscore.results.counts import GroupCounts, ItemCounts

__all__ = [
    "GateResult",
    "Threshold",
    "baseline_gates",
    "check_fits",
    "error_rate_gates",
    "parse_threshold",
    "sequential_baseline_gates",
    "threshold_gates",
]

GateRule = Literal["point", "confident"]

_WITH_K = re.compile(r"(?P<head>.+?[@^])(?P<k>\d+)(?:_tau=(?P<tau>[0-9.]+))?")


@dataclass(frozen=True)
class Threshold:
    """A ``--fail-under`` bar: a registry metric (with its k and tau) and the value it must reach."""

    metric: str
    k: int | None
    tau: float | None
    bar: float

    @property
    def label(self) -> str:
        """The metric as written: ``pass@5``, ``g-pass@4_tau=0.5``, ``avg``."""
        return METRICS[self.metric].label_for(self.k, self.tau)


def _bar(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise EvaluationError(f"{where}: the bar must be a number from 0 to 1; got {text!r}")
    return value


def parse_threshold(text: str) -> Threshold:
    """``METRIC=BAR`` as a :class:`Threshold` (an error naming the option, value and rule otherwise)."""
    where = f"{parameter('fail_under')} {text!r}"
    name, sep, bar = text.rpartition("=")
    if not sep or not name.strip():
        raise EvaluationError(f"{where}: write METRIC=BAR, e.g. pass@1=0.8")
    name = name.strip().lower()
    match = _WITH_K.fullmatch(name)
    k = tau = None
    if match is not None:
        k = int(match["k"])
        tau = float(match["tau"]) if match["tau"] else None
        name = match["head"] + "k" + ("_tau" if match["tau"] else "")
    try:
        metric = resolve_metric(name)
    except EvaluationError as exc:
        raise EvaluationError(f"{where}: {exc}") from None
    if metric.needs_k and (k is None or k < 1):
        raise EvaluationError(f"{where}: metric {metric.name} needs its k, e.g. pass@1 or pass^3 (k >= 1)")
    if not metric.needs_k and k is not None:
        raise EvaluationError(f"{where}: metric {metric.name} takes no k")
    if not metric.higher_is_better:
        raise EvaluationError(f"{where}: metric {metric.name} is better lower; a bar it must reach fits none")
    if metric.needs_tau and tau is None:
        tau = 0.5
    return Threshold(metric.name, k, tau, _bar(bar.strip(), where))


@dataclass(frozen=True)
class GateResult(Record):
    """One gate on one target: what was measured, the bar, the rule, and whether it passed.

    ``judged`` is False when the data could not decide the gate (too few scored trials for the
    metric's k because trials errored, no scored trial at all, too few shared cases for the paired
    test); such a gate neither passes nor fails: ``passed`` is False and ``detail`` says why, and a
    run whose other gates pass exits 3 (could not judge), never 1.
    """

    gate: str
    target: str
    metric: str
    value: float | None
    bar: float | None
    rule: str
    passed: bool
    detail: str = ""
    judged: bool = True

    @property
    def result(self) -> str:
        """``pass``, ``FAIL`` or ``not judged``."""
        if not self.judged:
            return "not judged"
        return "pass" if self.passed else "FAIL"


def _target(group: GroupCounts) -> str:
    return str(dict(group.key).get("target") or "")


def threshold_gates(
    counts: ItemCounts, thresholds: Sequence[Threshold], rule: GateRule = "point", level: float = 0.95
) -> list[GateResult]:
    """Every ``--fail-under`` bar on every target of a run's per-(target, case) counts.

    >>> from trialscore.results import TrialRecord
    >>> from trialscore.results.readers import count_records
    >>> records = [TrialRecord(case_id=c, trial=t, target="m", passed=p, verdict="pass" if p else "fail")
    ...            for c in "abcd" for t, p in enumerate([True, True, False])]
    >>> [(g.metric, round(g.value, 4), g.passed) for g in threshold_gates(
    ...     count_records(records, by=["target"]), [parse_threshold("pass@1=0.6")])]
    [('pass@1', 0.6667, True)]
    """
    from trialscore.results.scorecard import MetricSpec, metric_interval

    if rule not in ("point", "confident"):
        raise EvaluationError(f"gate rule must be point or confident; got {rule!r}")
    out = []
    for group in counts.groups():
        scored = group.n > 0
        for bar in thresholds:
            common: dict[str, Any] = {
                "gate": "fail-under",
                "target": _target(group),
                "metric": bar.label,
                "bar": bar.bar,
            }
            rule_text = (
                f"{bar.label} >= {bar.bar:g}"
                if rule == "point"
                else f"lower end of the {level:.0%} interval of {bar.label} >= {bar.bar:g}"
            )
            if not scored.any():
                detail = f"no scored trial: all {group.errored_trials} errored"
                out.append(
                    GateResult(
                        **common, value=None, rule=rule_text, passed=False, detail=detail, judged=False
                    )
                )
                continue
            bank = group.bank()
            if bar.k is not None and bar.k > bank.min_trials:
                short = group.item[scored][bank.n < bar.k].tolist()
                errored = int(group.errored[scored][bank.n < bar.k].sum())
                detail = (
                    f"needs {bar.k} scored trials of every case; {_cases(short)} fewer "
                    f"({errored} of their trials errored; the fewest scored is {bank.min_trials}): "
                    "errored trials are not failures: rerun "
                    f"({parameter('retries')} N retries failing calls) or gate a smaller k"
                )
                detail = worded(detail)
                out.append(
                    GateResult(
                        **common, value=None, rule=rule_text, passed=False, detail=detail, judged=False
                    )
                )
                continue
            interval = metric_interval(bank, MetricSpec(bar.metric, bar.k, bar.tau), level=level)
            judged = interval.estimate if rule == "point" else interval.low
            detail = f"{level:.0%} interval [{interval.low:.4g}, {interval.high:.4g}] ({interval.method})"
            out.append(
                GateResult(
                    **common, value=interval.estimate, rule=rule_text, passed=judged >= bar.bar, detail=detail
                )
            )
    return out


def _cases(ids: Sequence[object]) -> str:
    """``case 'a' has`` / ``3 cases ('a', 'b', 'c') have``, the first five named."""
    shown = ", ".join(repr(str(item)) for item in ids[:5]) + (", ..." if len(ids) > 5 else "")
    return f"case {shown} has" if len(ids) == 1 else f"{len(ids)} cases ({shown}) have"


def check_fits(thresholds: Sequence[Threshold], trials: dict[str, int]) -> None:
    """Refuse a bar no run of these trials could judge: a k above a case's trial count.

    ``trials`` is the planned trial count of each case that will run; called before any trial runs.

    >>> check_fits([parse_threshold("pass@3=0.5")], {"a": 5, "b": 2})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: fail_under pass@3=0.5: pass@3 needs 3 trials of every case; ...
    """
    if not trials:
        return
    fewest = min(trials.values())
    for bar in thresholds:
        if bar.k is not None and bar.k > fewest:
            short = [case for case, count in trials.items() if count < bar.k]
            raise EvaluationError(
                f"{parameter('fail_under')} {bar.label}={bar.bar:g}: {bar.label} needs {bar.k} trials of "
                f"every case; {_cases(short)} {fewest} planned (raise {parameter('trials')}, or gate a k of "
                f"at most {fewest})"
            )


def error_rate_gates(counts: ItemCounts, ceiling: float) -> list[GateResult]:
    """``--max-error-rate``: per target, errored trials over stored trials must not exceed ``ceiling``."""
    if not 0.0 <= ceiling <= 1.0:
        raise EvaluationError(f"{parameter('max_error_rate')} must be a number from 0 to 1; got {ceiling!r}")
    out = []
    for group in counts.groups():
        errored = int(group.errored.sum())
        total = int(group.n.sum()) + errored
        rate = errored / total if total else 0.0
        out.append(
            GateResult(
                "max-error-rate",
                _target(group),
                "error rate",
                rate,
                ceiling,
                f"errored / stored trials <= {ceiling:g}",
                rate <= ceiling,
                f"{errored} of {plural(total, 'trial')} errored",
            )
        )
    return out


def baseline_gates(
    baseline: ItemCounts, current: ItemCounts, fail_on_regression: bool, alpha: float = 0.05
) -> tuple[list[GateResult], list[dict[str, Any]]]:
    """The paired verdict of each target against the baseline run, and each comparison's JSON body.

    pass@1 per case (``avg``), paired on the cases both runs hold, by
    :func:`trialscore.stats.compare_paired`; a target missing from the baseline is
    reported, not compared.  The gate fails on a ``regression`` verdict only with
    ``fail_on_regression``.
    """
    from trialscore.stats import compare_paired

    before = {_target(group): group for group in baseline.groups()}
    gates, bodies = [], []
    for group in current.groups():
        name = _target(group)
        base = before.get(name)
        if base is None:
            gates.append(
                GateResult(
                    "baseline", name, "pass@1", None, None, "no baseline", True, "not in the baseline run"
                )
            )
            continue
        ids = {
            "ids_baseline": base.item[base.n > 0].tolist(),
            "ids_candidate": group.item[group.n > 0].tolist(),
        }
        try:
            result = compare_paired(base.bank(), group.bank(), "avg", alpha=alpha, **ids)
        except InsufficientDataError as exc:
            gates.append(
                GateResult("baseline", name, "pass@1 delta", None, None, "not tested", False, str(exc), False)
            )
            continue
        body = {"target": name, **result.to_dict()}
        bodies.append(body)
        detail = (
            f"{result.verdict}: {result.baseline:.4g} -> {result.candidate:.4g}, "
            f"{1 - alpha:.0%} interval [{result.interval.low:.4g}, {result.interval.high:.4g}], "
            f"p={result.p_value:.3g}"
        )
        gates.append(
            _baseline_gate(
                name, "pass@1 delta", result.delta, result.verdict, fail_on_regression, "significant", detail
            )
        )
    return gates, bodies


def sequential_baseline_gates(
    comparisons: dict[str, dict[str, Any]], fail_on_regression: bool
) -> tuple[list[GateResult], list[dict[str, Any]]]:
    """The baseline gate of a run compared with its baseline while it ran (``--baseline RUN --adaptive``).

    The verdict is the sequential one the run stopped on (:mod:`trialscore.runner.adaptive_paired`),
    not a fixed-design test of the trials it chose to run; ``undecided`` never fails the gate.

    >>> body = {"verdict": "regression", "interval": [-0.3, -0.1], "alpha": 0.05, "margin": 0.05,
    ...         "interval_kind": "repeated 95% confidence interval", "trials_run": 40,
    ...         "trials_fixed_design": 100, "stopped_because": "verdict settled"}
    >>> gate = sequential_baseline_gates({"m": body}, True)[0][0]
    >>> gate.passed, gate.detail.split(";")[0]
    (False, 'regression: repeated 95% confidence interval [-0.3, -0.1] (alpha 0.05)')
    """
    from trialscore.runner.adaptive_paired import stop_note

    gates, bodies = [], []
    for name, body in comparisons.items():
        bodies.append({"target": name, "sequential": True, **body})
        low, high = body["interval"]
        detail = (
            f"{body['verdict']}: {body['interval_kind']} [{low:.4g}, {high:.4g}] "
            f"(alpha {body['alpha']:g}); {body['trials_run']} of {body['trials_fixed_design']} trials; "
            f"{body['stopped_because']}{stop_note(body)}"
        )
        gates.append(
            _baseline_gate(
                name,
                "mean paired pass-rate difference",
                None,
                body["verdict"],
                fail_on_regression,
                "settled",
                detail,
            )
        )
    return gates, bodies


def _baseline_gate(
    target: str,
    metric: str,
    value: float | None,
    verdict: str,
    fail_on_regression: bool,
    kind: str,
    detail: str,
) -> GateResult:
    """The baseline gate of ``target``: with ``fail_on_regression`` it fails on a (``kind``:
    significant, settled) regression, else it only reports ``verdict``."""
    rule = (
        f"fails on a {kind} regression"
        if fail_on_regression
        else worded(f"reported only (no {parameter('fail_on')})")
    )
    passed = not (fail_on_regression and verdict == "regression")
    return GateResult("baseline", target, metric, value, None, rule, passed, detail)
