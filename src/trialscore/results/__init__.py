"""Trial results: the :class:`TrialRecord` schema, readers, and grouping into per-item counts.

>>> from trialscore.results import TrialRecord, count_records
>>> records = [TrialRecord(case_id="q1", trial=t, target="m", passed=p, verdict="pass" if p else "fail")
...            for t, p in enumerate([True, False, True])]
>>> [(g.label, g.n.tolist(), g.c.tolist()) for g in count_records(records, by=["target"]).groups()]
[('target=m', [3], [2])]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trialscore._lazy import load

if TYPE_CHECKING:
    from trialscore.results.columns import ColumnMap
    from trialscore.results.counts import GroupCounts, ItemCounts, ReadStats
    from trialscore.results.readers import count_records, read_counts
    from trialscore.results.records import (
        GraderResult,
        JudgeGrade,
        TokenUsage,
        TrialRecord,
        Verdict,
        verdict_of,
    )

#: Each name loads on first use, from its module: the record schema (Pydantic) alone, as a worker
#: process needs it, loads no reader (nor DuckDB); reading files into counts does not need the schema.
_MODULES = {
    "ColumnMap": ".columns",
    **dict.fromkeys(("GroupCounts", "ItemCounts", "ReadStats"), ".counts"),
    **dict.fromkeys(("count_records", "read_counts"), ".readers"),
    **dict.fromkeys(
        ("GraderResult", "JudgeGrade", "TokenUsage", "TrialRecord", "Verdict", "verdict_of"), ".records"
    ),
}

__all__ = [
    "ColumnMap",
    "GraderResult",
    "GroupCounts",
    "ItemCounts",
    "JudgeGrade",
    "ReadStats",
    "TokenUsage",
    "TrialRecord",
    "Verdict",
    "count_records",
    "read_counts",
    "verdict_of",
]


def __getattr__(name: str) -> Any:
    return load(__name__, _MODULES, name)
