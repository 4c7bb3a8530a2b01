"""The long table of grades: reading rows and columns, the arrays each analysis takes, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from trialscore.errors import EvaluationError
from trialscore.stats import GradeTable, grade_table

ROWS = [
    ("q1", "t1", "gpt", 0, 1),
    ("q1", "t1", "gpt", 1, 0),
    ("q1", "t1", "claude", 0, 1),
    ("q1", "t2", "gpt", 0, 0),
    ("q2", "t1", "claude", 0, True),
    ("q2", "t1", "claude", 1, 1),
]


def test_rows_and_columns_give_the_same_table() -> None:
    by_rows = grade_table(ROWS)
    columns = {
        name: [row[i] for row in ROWS] for i, name in enumerate(("item", "trial", "judge", "repeat", "grade"))
    }
    by_columns = grade_table(columns)
    dicts = grade_table(
        [dict(zip(("item", "trial", "judge", "repeat", "grade"), row, strict=True)) for row in ROWS]
    )
    for other in (by_columns, dicts):
        assert other.items == by_rows.items and other.judges == by_rows.judges
        np.testing.assert_array_equal(other.grades, by_rows.grades)
    assert isinstance(by_rows, GradeTable) and by_rows.rows == len(ROWS)
    assert by_rows.grades.shape == (2, 2, 2, 2)  # items, trials of the item with most, judges, repeats


def test_inter_judge_takes_each_judges_first_repeat_and_skips_ungraded_trials() -> None:
    units, items = grade_table(ROWS).inter_judge()
    np.testing.assert_array_equal(np.nan_to_num(units, nan=-1), [[1, 1], [0, -1], [-1, 1]])
    assert items.tolist() == [0, 0, 1]


def test_intra_judge_and_cube_of_one_judge() -> None:
    table = grade_table(ROWS)
    units, items = table.intra_judge("claude")
    np.testing.assert_array_equal(np.nan_to_num(units, nan=-1), [[1, -1], [1, 1]])
    assert items.tolist() == [0, 1]
    assert table.judge_cube("gpt").shape == (2, 2, 2)
    with pytest.raises(EvaluationError, match="judge must be one of gpt, claude; got 'gemini'"):
        table.judge_cube("gemini")


def test_a_missing_repeat_column_means_one_call() -> None:
    table = grade_table({"item": [1, 1, 2], "trial": [0, 0, 0], "judge": ["a", "b", "a"], "grade": [1, 0, 1]})
    assert table.repeats == (0,) and table.grades.shape == (2, 1, 2, 1)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ([], "at least one grade"),
        ([("q", 0, "a", 0, 1), ("q", 0, "a", 0, 0)], "row 2 repeats row 1"),
        ([("q", 0, "a", 0, "pass")], "row 1: grade must be a finite number or a bool; got 'pass'"),
        ([("q", 0, "a", 0, float("nan"))], "row 1: grade must be a finite number"),
        ([("q", 0)], "row 1 must be \\(item, trial, judge, repeat, grade\\)"),
        ([{"item": "q", "trial": 0, "grade": 1}], "row 1 lacks the column 'judge'"),
        ({"item": [1], "trial": [0], "judge": ["a"]}, "lacks 'grade'"),
        ({"item": [1, 2], "trial": [0], "judge": ["a"], "grade": [1]}, "column 'trial' has 1"),
        ("grades.csv", "mapping of columns or rows"),
        ([(["q"], 0, "a", 0, 1)], "row 1: item, trial, judge and repeat must be hashable"),
    ],
)
def test_bad_tables_are_refused_with_the_row_and_rule(table: object, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        grade_table(table)
