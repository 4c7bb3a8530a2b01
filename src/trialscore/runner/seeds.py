"""Deterministic per-trial seeds: the same (run seed, case, trial) always gives the same seed."""

from __future__ import annotations

import hashlib

__all__ = ["attempt_seed", "repeat_seed", "trial_seed"]


def trial_seed(run_seed: int, case_id: str, trial: int) -> int:
    """A 63-bit seed for one trial: the first 8 bytes of BLAKE2b over (run seed, case id, trial).

    The case id is length-prefixed so no two (case, trial) pairs share an encoding.
    Every target of a run sees the same seed for the same case and trial (common
    random numbers, which sharpens a paired comparison of targets).

    >>> trial_seed(0, "add-1", 0) == trial_seed(0, "add-1", 0) != trial_seed(0, "add-1", 1)
    True
    >>> trial_seed(7, "add-1", 3)
    843154293459331120
    """
    key = f"{run_seed}\x1f{len(case_id)}:{case_id}\x1f{trial}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") >> 1


def attempt_seed(seed: int, attempt: int) -> int:
    """The seed a retried attempt gets: the trial's own seed for attempt 0, a fresh one derived from
    it for each retry, so a seeded agent does not fail the same way on every retry.

    The trial record keeps the trial's seed (attempt 0's): a rerun with the same seed retries alike.

    >>> attempt_seed(42, 0), attempt_seed(42, 1) == attempt_seed(42, 1) != attempt_seed(42, 2)
    (42, True)
    """
    if attempt == 0:
        return seed
    key = f"{seed}\x1fattempt\x1f{attempt}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") >> 1


def repeat_seed(seed: int, repeat: int) -> int:
    """The seed of an ``llm_judge`` call's repeat ``repeat`` on a trial with seed ``seed``: the trial's
    own for repeat 0 (a single-call judge is called as before), a fresh one derived from it for each
    further repeat, so that a seeded judge is not asked the same question with the same seed.

    >>> repeat_seed(42, 0), repeat_seed(42, 1) == repeat_seed(42, 1) != attempt_seed(42, 1)
    (42, True)
    """
    if repeat == 0:
        return seed
    key = f"{seed}\x1fjudge repeat\x1f{repeat}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") >> 1
