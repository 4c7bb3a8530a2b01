"""The labelling page: one offline HTML file where a reviewer marks a random sample of judged items.

``trialscore label RUN --sample 50`` draws ``sample`` cases of a run at random (NumPy's
``default_rng(seed)``, without replacement, from the run's cases in sorted order: the same run and
seed always draw the same cases) and writes a page showing, for each, every trial of every target:
the case's input and expected value where the run kept them, the output, the trial's verdict and
each judge call with its reason.  The reviewer marks each trial pass or fail and downloads
``labels.csv`` (``case_id,trial,target,passed``), the file ``score --human`` reads.

The sample must be random: prediction-powered intervals correct the judge by its errors on the
labelled items, and a hand-picked set (the hard cases, the ones that looked wrong) would measure a
different bias than the judge has on the rest.  The page says so.

Like the report, the page loads nothing (style and script inline), every text of the run is
escaped by the template, and its bytes depend only on the run, the sample and the seed.

>>> from trialscore.results.records import TrialRecord
>>> records = [TrialRecord(case_id=f"q{i}", trial=t, passed=True, verdict="pass", output="<b>hi</b>")
...            for i in range(10) for t in range(2)]
>>> page = label_model("run 1", records, sample=3, seed=0)
>>> [case["case_id"] for case in page["cases"]], page["population"]
(['q5', 'q6', 'q9'], 10)
>>> "&lt;b&gt;hi&lt;/b&gt;" in render_label_page(page) and "<b>hi</b>" not in render_label_page(page)
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from trialscore._validate import check_integer
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.results.records import TrialRecord

__all__ = ["label_model", "render_label_page", "sample_cases"]


def sample_cases(case_ids: Sequence[str], sample: int, seed: int = 0) -> list[str]:
    """``sample`` of the distinct ``case_ids`` at random (all when there are fewer), in sorted order.

    >>> sample_cases(["b", "a", "c", "a"], 2, seed=1)
    ['a', 'b']
    """
    sample = check_integer(sample, "sample", 1)
    seed = check_integer(seed, "seed", 0)
    population = sorted(set(case_ids))
    if not population:
        raise EvaluationError("the run holds no case to label")
    chosen = np.random.default_rng(seed).choice(
        len(population), size=min(sample, len(population)), replace=False
    )
    return [population[int(index)] for index in sorted(chosen)]


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)


def _trial(record: TrialRecord) -> dict[str, Any]:
    graders = []
    for result in record.grader_results:
        calls = [
            {
                "judge": call.judge,
                "repeat": call.repeat,
                "verdict": "error" if call.passed is None else ("pass" if call.passed else "fail"),
                "score": call.score,
                "reason": call.reason if call.error is None else call.error,
            }
            for call in result.calls or ()
        ]
        graders.append(
            {
                "name": result.name,
                "verdict": "pass" if result.passed else "fail",
                "score": result.score,
                "reason": result.reason,
                "calls": calls,
            }
        )
    return {
        "target": record.target,
        "trial": record.trial,
        "verdict": record.verdict,
        "output": record.output,
        "error": record.error,
        "graders": graders,
    }


def label_model(
    label: str,
    records: Sequence[TrialRecord],
    sample: int = 50,
    seed: int = 0,
    asked: Mapping[str, tuple[object, object]] | None = None,
) -> dict[str, Any]:
    """The page's content: the sampled cases, each with every trial of every target (module docstring).

    ``asked`` maps a case id to its (input, expected) where the run kept them (``cases.jsonl``).
    """
    chosen = sample_cases([record.case_id for record in records], sample, seed)
    wanted = set(chosen)
    by_case: dict[str, list[TrialRecord]] = {case: [] for case in chosen}
    for record in records:
        if record.case_id in wanted:
            by_case[record.case_id].append(record)
    cases: list[dict[str, Any]] = []
    shown = 0
    for case in chosen:
        own = sorted(by_case[case], key=lambda r: (r.target or "", r.trial))
        question, expected = (asked or {}).get(case, (None, None))
        cases.append(
            {
                "case_id": case,
                "input": _text(question),
                "expected": _text(expected),
                "trials": [_trial(record) for record in own],
            }
        )
        shown += len(own)
    population = len({record.case_id for record in records})
    return {
        "run": label,
        "seed": seed,
        "sample": len(chosen),
        "population": population,
        "trials": shown,
        "cases": cases,
    }


def render_label_page(page: Mapping[str, Any]) -> str:
    """The page's HTML: one file, style and script inline, every text escaped."""
    from trialscore.report.render import _environment

    return _environment().get_template("label.html.j2").render(page=page)
