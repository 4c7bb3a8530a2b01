"""Each grader's verdict as its own group: the process beside the answer.

A trial of the runner carries every grader's verdict (``grader_results``: the answer's ``contains``,
the process's ``tool_calls``...) and a verdict of its own (every grader passed).  :func:`by_grader`
turns counts read with the graders' detail (``read_counts(detail=("graders",))``) into counts with
one more group key, ``grader``: one group per grader, whose trials pass when *that grader* passed,
beside the trial's own verdict (``grader=`` :data:`TRIAL`).  So pass@k, pass^k and flakiness of the
procedure sit beside those of the answer: a case that always answers right but flakes its procedure
is flaky in ``grader=process`` and steady in ``grader=answer``.

A trial that errored has no verdict from any grader (an errored trial in every group, never a
failure); a graded trial without a verdict from some grader (a grader that was added later, or one
whose entry is not an object) counts as errored in that grader's group, and a note counts them.
Two graders of one trial with the same name are told apart by their order (``contains``,
``contains#2``).

>>> import tempfile, pathlib, json
>>> from trialscore.results.readers import read_counts
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.jsonl"
>>> def grade(name, passed):
...     return {"name": name, "score": float(passed), "passed": passed}
>>> rows = [{"case_id": "a", "trial": t, "passed": t == 0, "verdict": "pass" if t == 0 else "fail",
...          "grader_results": [grade("answer", True), grade("process", t == 0)]} for t in range(3)]
>>> _ = path.write_text("\\n".join(json.dumps(row) for row in rows))
>>> split = read_counts([path], graders=True)
>>> [(group.label, group.n.tolist(), group.c.tolist()) for group in split.groups()]
[('grader=(trial)', [3], [1]), ('grader=answer', [3], [3]), ('grader=process', [3], [1])]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from trialscore._words import plural
from trialscore.errors import EvaluationError
from trialscore.results.counts import ItemCounts

__all__ = ["GRADER", "TRIAL", "by_grader", "grader_names"]

#: The group key of each grader's verdicts.
GRADER = "grader"
#: The ``grader`` value of the trial's own verdict (every grader passed, in the runner).
TRIAL = "(trial)"


def _names(graders: tuple[tuple[str, float | None, bool | None, str | None], ...]) -> list[str]:
    """The graders' names in a trial's order, a repeated name told apart by its rank (``name#2``)."""
    seen: dict[str, int] = {}
    out = []
    for name, *_ in graders:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def grader_names(counts: ItemCounts) -> list[str]:
    """The graders the trials name, in the order first seen (counts read with the graders' detail)."""
    trials = counts.trials
    if trials is None:
        raise EvaluationError(
            "by_grader reads each trial's grader results: read the counts with detail=('graders',)"
        )
    if "graders" not in trials.fields:
        return []
    return list(dict.fromkeys(name for graders in trials.graders for name in _names(graders)))


def by_grader(counts: ItemCounts) -> ItemCounts:
    """``counts`` with one more group key, ``grader``: each grader's verdicts beside the trial's (module
    docstring).  Rows keep their groups in order, then the grader (the trial's verdict first, then the
    graders as first seen), then the item; the trials keep their detail with each grader's verdict."""
    names = grader_names(counts)
    if not names:
        raise EvaluationError(
            "the trials hold no grader results: there is no grader to score apart (the runner's trials "
            "record each grader's verdict in grader_results)"
        )
    if GRADER in counts.by:
        raise EvaluationError(
            f"the inputs already have a group column named {GRADER!r}; scoring per grader adds one"
        )
    trials = counts.trials
    assert trials is not None
    verdicts: dict[str, list[str]] = {TRIAL: list(trials.verdicts)}
    for name in names:
        verdicts[name] = ["e"] * len(trials.verdicts)
    missing = dict.fromkeys(names, 0)
    for index, (letter, graders) in enumerate(zip(trials.verdicts, trials.graders, strict=True)):
        if letter == "e":
            continue  # errored: no grader's verdict
        given = dict(zip(_names(graders), (passed for _, _, passed, _ in graders), strict=True))
        for name in names:
            passed = given.get(name)
            if passed is None:
                missing[name] += 1
            else:
                verdicts[name][index] = "p" if passed else "f"
    rows: list[int] = []
    values: list[str] = []
    start = 0
    for group in counts.groups():  # rows of one group are contiguous: each grader's copy of them in turn
        end = start + group.item.size
        for name in verdicts:
            rows += range(start, end)
            values += [name] * (end - start)
        start = end
    picked = np.array(rows, dtype=np.int64)
    kept = trials.take(picked)
    letters = "".join(
        "".join(verdicts[name][i] for i in range(int(trials.starts[row]), int(trials.starts[row + 1])))
        for row, name in zip(rows, values, strict=True)
    )
    sizes = np.diff(kept.starts)
    owner = np.repeat(np.arange(len(rows)), sizes)
    passes = np.bincount(owner, weights=[letter == "p" for letter in letters], minlength=len(rows))
    errored = np.bincount(owner, weights=[letter == "e" for letter in letters], minlength=len(rows))
    graded = sizes - errored
    notes = [
        f"grader {name}: {plural(count, 'graded trial')} without its verdict, counted as errored"
        for name, count in missing.items()
        if count
    ]
    notes.append(
        f"scored per grader: {plural(len(names), 'grader')} ({', '.join(names)}) beside the trial's own "
        f"verdict ({GRADER}={TRIAL})"
    )
    return dataclasses.replace(
        counts,
        by=(*counts.by, GRADER),
        group_values=(
            *(column[picked] for column in counts.group_values),
            np.array(values, dtype=object),
        ),
        item=counts.item[picked],
        graded=graded.astype(np.int64),
        c=passes.astype(np.int64),
        errored=errored.astype(np.int64),
        stats=dataclasses.replace(counts.stats, notes=(*counts.stats.notes, *notes)),
        cluster=None if counts.cluster is None else counts.cluster[picked],
        trials=dataclasses.replace(kept, verdicts=letters),
        score_sum=None,
        score_sumsq=None,
    )
