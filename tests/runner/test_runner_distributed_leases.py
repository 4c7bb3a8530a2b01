"""The lease table and admission rules of a distributed run, on their own (no processes)."""

from __future__ import annotations

import math
import random

import pytest

from trialscore.errors import EvaluationError
from trialscore.runner.adaptive import Unit
from trialscore.runner.distributed.admission import Admission
from trialscore.runner.distributed.leases import LeaseTable
from trialscore.runner.distributed.options import Distribution


def test_heartbeats_keep_leases_alive_and_silence_expires_them() -> None:
    table = LeaseTable(ttl_s=5.0)
    a = table.grant(Unit("t", "c", 0), worker=1, now=0.0)
    b = table.grant(Unit("t", "c", 1), worker=2, now=0.0)
    table.renew(1, now=4.0)  # worker 1 beats, worker 2 is silent
    assert table.expired(now=6.0) == [b]
    assert list(table.active) == [a.id] and table.expired_count == 1
    assert table.expired(now=8.9) == [] and table.expired(now=9.0) == [a]


def test_the_first_completion_of_a_unit_wins_and_later_ones_are_counted_duplicates() -> None:
    table = LeaseTable(ttl_s=1.0)
    first = table.grant(Unit("t", "c", 0), worker=1, now=0.0)
    assert table.expired(now=2.0) == [first]  # re-queued ...
    again = table.grant(Unit("t", "c", 0), worker=2, now=2.0)  # ... and leased to another worker
    assert table.release(again.id) is again and table.accept(Unit("t", "c", 0))
    assert table.release(first.id) is None  # the slow first worker finishes late
    assert not table.accept(Unit("t", "c", 0)) and table.duplicates == 1
    assert table.held_by(1) == [] and len(table) == 0


def test_a_lease_needs_a_positive_ttl() -> None:
    with pytest.raises(ValueError, match="ttl_s must be > 0; got 0"):
        LeaseTable(0)


def test_caps_count_running_trials_per_target() -> None:
    admission = Admission(None, {"api": 2}, {}, ("api", "local"))
    for _ in range(2):
        assert admission.may_start("api")
        admission.started("api")
    assert not admission.may_start("api") and admission.may_start("local")
    admission.stopped("api")
    assert admission.may_start("api")


def test_estimates_fall_back_from_ceiling_to_target_mean_to_run_mean() -> None:
    admission = Admission(1.0, {}, {"capped": 0.3}, ("capped", "a", "b"))
    assert admission.estimate("capped") == 0.3 and admission.estimate("a") is None
    admission.observe("a", 0.1)
    admission.observe("a", 0.3)
    assert admission.estimate("a") == pytest.approx(0.2) and admission.estimate("b") == pytest.approx(0.2)
    fresh = Admission(1.0, {}, {}, ("x",))
    fresh.observe("x", None)  # costs unknown: the limit cannot be enforced, nothing is held back
    assert fresh.estimate("x") == 0.0


def _simulate(seed: int, admission: Admission | None, limit: float = 1.0, slots: int = 4) -> float:
    """A controller with ``slots`` slots and a run budget: trials of random cost (0.01-0.05 USD) finish
    in random order; without ``admission`` a trial starts whenever the spend is under the limit.
    Returns how far the final spend passes the limit, after checking at every lease that the spend was
    under the limit and that the final spend passes it by at most the cost of the trials in flight
    at the last lease."""
    rng = random.Random(seed)
    spent, flying, taken, last_lease_flight = 0.0, {}, 0, 0.0
    while True:
        while spent < limit and len(flying) < slots and (admission is None or admission.may_take()):
            key = Unit("t", "c", taken)
            if admission is not None:
                admission.reserve(key)
            flying[key] = rng.uniform(0.01, 0.05)
            taken += 1
            last_lease_flight = math.fsum(flying.values())
        if not flying:
            break
        key = rng.choice(list(flying))
        cost = flying.pop(key)
        if admission is not None:
            admission.settle(key, cost)
        spent += cost
    assert spent <= limit + last_lease_flight + 1e-12
    assert spent > limit - 0.05  # the budget is used up to the cost of one more trial
    return spent - limit


def test_reserving_at_lease_bounds_the_overshoot_by_the_trials_in_flight() -> None:
    """Seeded simulations: with a ceiling (every trial costs at most it) the spend never passes the
    limit; with the running mean it passes it less often and by less than starting trials blindly."""
    seeds = range(300)
    capped = [_simulate(seed, Admission(1.0, {}, {"t": 0.05}, ("t",))) for seed in seeds]
    mean = [_simulate(seed, Admission(1.0, {}, {}, ("t",))) for seed in seeds]
    blind = [_simulate(seed, None) for seed in seeds]
    assert max(capped) <= 1e-12
    assert max(mean) <= 4 * 0.05 and max(blind) <= 4 * 0.05
    assert sum(o > 0 for o in mean) < 0.6 * sum(o > 0 for o in blind)
    assert math.fsum(max(o, 0) for o in mean) < 0.2 * math.fsum(max(o, 0) for o in blind)


def test_distribution_options_are_checked() -> None:
    with pytest.raises(EvaluationError, match="workers must satisfy 1 <= workers <= 1024; got 0"):
        Distribution("local", 0)
    with pytest.raises(EvaluationError, match="address 'ray://h:1' is for the ray backend; got backend 'loc"):
        Distribution("local", 2, "ray://h:1")
