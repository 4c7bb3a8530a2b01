"""Bank: per-item counts from matrices, outcome lists and counts."""

from __future__ import annotations

import numpy as np
import pytest

from trialscore import Bank, CategoryBank, EvaluationError
from trialscore.core.bank import as_bank, is_ragged


@pytest.mark.parametrize("trials", [8, 64, 248, 256, 1024, 2040])
def test_word_parallel_row_sums_are_exact_at_their_limits(trials: int) -> None:
    R = np.ones((3, trials), dtype=bool)
    R[1] = False
    R[2, ::3] = False
    assert Bank.from_matrix(R).c.tolist() == R.sum(axis=1).tolist()
    assert Bank.from_matrix(R.astype(np.uint8)).c.tolist() == R.sum(axis=1).tolist()


def test_states_histogram_for_common_and_ragged_trials() -> None:
    n, c, freq = Bank.from_counts([4, 4, 4, 4], [0, 4, 4, 2]).states()
    assert (n.tolist(), c.tolist(), freq.tolist()) == ([4, 4, 4], [0, 2, 4], [1, 1, 2])
    n, c, freq = Bank.from_counts([9, 4, 9], [1, 1, 1]).states()
    assert (n.tolist(), c.tolist(), freq.tolist()) == ([4, 9], [1, 1], [1, 2])


def test_trials_and_min_trials() -> None:
    assert Bank.from_counts([3, 3], [0, 1]).trials == 3
    bank = Bank.from_counts([3, 7], [0, 1])
    assert bank.trials is None and bank.min_trials == 3 and bank.items == 2


def test_counts_are_read_only() -> None:
    bank = Bank.from_counts([3], [1])
    with pytest.raises(ValueError, match="read-only"):
        bank.c[0] = 2


@pytest.mark.parametrize(("n", "c"), [([4, 4, 4], [0, 4, 4]), ([9, 4, 9], [1, 1, 1]), ([300, 2], [150, 1])])
def test_states_are_found_once_and_read_only(n: list[int], c: list[int]) -> None:
    bank = Bank.from_counts(n, c)
    states, index = bank.states(), bank.state_index()
    for again, first in zip((*bank.states(), *bank.state_index()), (*states, *index), strict=True):
        assert again is first  # the same arrays: found once for the bank
        with pytest.raises(ValueError, match="read-only"):
            again[0] = 7  # so that no reader can change them for the next
    fresh = Bank.from_counts(n, c)
    assert [a.tolist() for a in fresh._distinct_states(inverse=True)] == [
        a.tolist() for a in (*states, index[2])
    ]


def test_as_bank_dispatch() -> None:
    bank = Bank.from_counts([2], [1])
    assert as_bank(bank) is bank
    assert is_ragged([[1], [1, 0]]) and not is_ragged([[1, 0], [1, 0]]) and not is_ragged(np.ones((2, 2)))
    assert as_bank([[1], [1, 0]]).n.tolist() == [1, 2]


def test_category_counts() -> None:
    counts = CategoryBank.from_matrix(np.array([[2, 2, 0], [1, 1, 1]]), 3).counts
    assert counts.tolist() == [[1, 0, 2], [0, 3, 0]]
    assert CategoryBank.from_bank(Bank.from_counts([5], [2])).counts.tolist() == [[3, 2]]


def test_check_k_messages() -> None:
    bank = Bank.from_counts([5, 5], [1, 2])
    assert bank.check_k(np.int64(5)) == 5
    with pytest.raises(EvaluationError, match=r"k must satisfy 1 <= k <= n; got k=-2"):
        bank.check_k(-2)
    with pytest.raises(EvaluationError, match=r"k must be an integer; got '3' \(str\)"):
        bank.check_k("3")
