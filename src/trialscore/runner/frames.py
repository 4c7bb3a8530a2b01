"""A run's trials or case results as a pandas DataFrame (pandas is optional: ``pip install pandas``).

One row a trial: the :class:`~trialscore.results.records.TrialRecord` fields, with ``tokens``
split into ``input_tokens`` and ``output_tokens`` and the grader results kept as a list of dicts.
One row a case (per target): seed 003's case record with its aggregation flattened
(``strategy``, ``passed_attempts``, ``total_attempts``) and its trials left out (they are the
trials frame).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.runner.run_report import RunReport

__all__ = ["FRAMES", "to_pandas"]

#: What :func:`to_pandas` can tabulate.
FRAMES = ("trials", "cases")


def _pandas() -> Any:
    try:
        return import_module("pandas")
    except ImportError as exc:
        raise ModuleNotFoundError(
            "to_pandas() needs pandas, which is not installed: pip install pandas "
            "(or use report.trials / report.cases, which need nothing)"
        ) from exc


def _trial_row(record: Any) -> dict[str, Any]:
    row: dict[str, Any] = record.model_dump()  # started_at stays a datetime
    tokens = row.pop("tokens", None) or {}
    row["input_tokens"] = tokens.get("input")
    row["output_tokens"] = tokens.get("output")
    return row


def _case_row(case: Any) -> dict[str, Any]:
    row: dict[str, Any] = case.to_dict()
    row.pop("trials", None)
    aggregation = row.pop("aggregation", None) or {}
    row.update(aggregation)
    return row


def to_pandas(report: RunReport, what: str = "trials") -> Any:
    """``report``'s trials or cases as a ``pandas.DataFrame`` (see the module docstring).

    Raises
    ------
    EvaluationError
        For ``what`` other than ``"trials"`` or ``"cases"``.
    ModuleNotFoundError
        When pandas is not installed; the message says how to install it.
    """
    if what not in FRAMES:
        raise EvaluationError(f"what must be one of {', '.join(map(repr, FRAMES))}; got {what!r}")
    pandas = _pandas()
    rows = (
        [_trial_row(r) for r in report.records] if what == "trials" else [_case_row(c) for c in report.cases]
    )
    return pandas.DataFrame.from_records(rows)
