"""lm-evaluation-harness samples files and promptfoo JSON output of any size, grown from fixtures the
real tools wrote (lm_eval 0.4.13: fixtures/lm-eval/runs/; promptfoo 0.123.1: fixtures/promptfoo/0.123/).

Each file keeps its tool's shape, taken from the fixture: every lm_eval sample line is the fixture's
``tiny_gen`` line with its doc id, doc, prompt, response and ``exact_match`` changed, beside the run's
``results_<date>.json``; every promptfoo result is the fixture's result object with its test, provider,
outcome, assertion results and output changed, inside the fixture's document.  Outcomes come from a
seeded two-level model (:func:`outcome`: a pass rate per item, some trials errored), and each record
carries ``text_chars`` characters of prompt and output text, so the files have the size of real long
logs.  :func:`lm_eval_truth` and :func:`promptfoo_truth` give the per-item counts the files hold.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
LM_EVAL_RUN = FIXTURES / "lm-eval" / "runs" / "seed1" / "model-a"
PROMPTFOO = FIXTURES / "promptfoo" / "0.123" / "several.json"
#: promptfoo's providers in the fixture (two labels of one provider) and the assertions of its test.
TARGETS = ("dummy-a", "file://provider.js")
ASSERTIONS = ("mentions-paris", "exact")
_LETTERS = "abcdefghijklmnopqrstuvwxyz      .,"


def outcome(item: int, trial: int, seed: int, part: int = 0) -> bool | None:
    """Whether trial ``trial`` of item ``item`` passed (``part``: which judgement), None for an error:
    1% of trials error, the rest pass at the item's own rate."""
    rng = random.Random((seed * 1_000_003 + item * 101 + trial) * 7 + part)
    if part == 0 and rng.random() < 0.01:
        return None
    return rng.random() < (item * 7919 % 1000) / 1000


_POOL: list[str] = []


def _text(rng: random.Random, size: int) -> str:
    """``size`` characters of prose-like text from a random place of a 4 MiB pool (no two records share
    a text, as no two outputs do)."""
    if not _POOL:
        _POOL.append(_letters(7, _LETTERS, 2**22))
    pool = _POOL[0]
    start = rng.randrange(len(pool))
    text = pool[start : start + size]
    while len(text) < size:
        text += pool[: size - len(text)]
    return text


def _letters(seed: int, letters: str, k: int) -> str:
    """``k`` letters drawn uniformly from ``letters`` by NumPy's generator from ``seed``, at once.

    >>> text = _letters(7, "ab .", 999)
    >>> len(text), set(text) == set("ab ."), text == _letters(7, "ab .", 999)
    (999, True, True)
    """
    import numpy as np

    at = np.random.default_rng(seed).integers(0, len(letters), k)
    return np.frombuffer(letters.encode("ascii"), np.uint8)[at].tobytes().decode("ascii")


def big_lm_eval(folder: Path, samples: int, runs: int = 1, text_chars: int = 4000, seed: int = 0) -> Path:
    """An lm_eval ``--output_path`` model folder: ``runs`` runs (trials) of a task of ``samples`` docs."""
    template = next(LM_EVAL_RUN.glob("samples_tiny_gen_*.jsonl"))
    line = json.loads(template.read_text(encoding="utf-8").splitlines()[0])
    results = next(LM_EVAL_RUN.glob("results_*.json"))
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for run in range(runs):
        date = f"2026-11-25T13-4{run}-52.836117"
        shutil.copyfile(results, folder / f"results_{date}.json")
        with (folder / f"samples_tiny_gen_{date}.jsonl").open("w", encoding="utf-8") as out:
            for doc in range(samples):
                passed = outcome(doc, run, seed)
                entry = copy.deepcopy(line)
                question = f"Question {doc}: {_text(rng, 40)}"
                entry.update(doc_id=doc, doc={"question": question, "answer": "lol"})
                entry["arguments"]["gen_args_0"]["arg_0"] = f"{_text(rng, text_chars // 2)}\n\n{question}"
                response = "lol" if passed else _text(rng, text_chars // 2)
                entry.update(resps=[[response]], filtered_resps=[response])
                entry["exact_match"] = None if passed is None else float(passed)
                out.write(json.dumps(entry) + "\n")
    return folder


def lm_eval_truth(samples: int, runs: int = 1, seed: int = 0) -> dict[str, tuple[int, int, int]]:
    """Case id -> (graded, passed, errored) of :func:`big_lm_eval`'s folder."""
    truth = {}
    for doc in range(samples):
        found = [outcome(doc, run, seed) for run in range(runs)]
        graded = [value for value in found if value is not None]
        truth[f"tiny_gen/{doc}"] = (len(graded), sum(graded), len(found) - len(graded))
    return truth


def _result(template: str, test: int, provider: int, passes: list[bool | None], text: str) -> dict[str, Any]:
    """The fixture's result object (``template``, as JSON text: parsed afresh, a deep copy at C speed) for
    one (test, provider, repeat) with the given judgements."""
    row = json.loads(template)
    success, parts = passes[0], passes[1:]
    description = f"test-{test:06d}"
    row["provider"] = {"id": "file://provider.js", "label": "dummy-a" if provider == 0 else ""}
    row["promptIdx"] = provider
    row["testCase"]["description"] = description
    row["testCase"]["vars"] = row["vars"] = {"question": description}
    row["prompt"]["raw"] = f"Answer: {description} {text[: len(text) // 2]}"
    components = row["gradingResult"]["componentResults"]
    if success is None:
        row.update(error="dummy provider: simulated timeout", gradingResult=None, success=False, score=0)
        row.update(failureReason=2, namedScores={}, response={"error": "dummy provider: simulated timeout"})
        return row
    for component, passed in zip(components, parts, strict=True):
        component.update(**{"pass": passed, "score": int(bool(passed))})
    score = sum(bool(passed) for passed in parts) / len(parts)
    row.update(success=all(parts), score=score, failureReason=0 if all(parts) else 1)
    row["response"] = {"output": text[len(text) // 2 :]}
    row["gradingResult"].update(**{"pass": all(parts), "score": score})
    if not all(parts):
        row["error"] = row["gradingResult"]["reason"] = "Expected output to equal Paris"
    return row


def big_promptfoo(path: Path, samples: int, repeats: int = 3, text_chars: int = 4000, seed: int = 0) -> Path:
    """promptfoo's ``-o results.json`` of ``samples`` results: tests x 2 providers x ``repeats``, written
    as promptfoo writes it (indented), one result at a time."""
    document = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    rows = document["results"]["results"]
    template = json.dumps(next(row for row in rows if row["testCase"]["description"] == "capital"))
    document["results"]["results"] = ["@results@"]
    head, tail = json.dumps(document, indent=2).split('"@results@"')
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write(head.rstrip(" "))
        for index, (test, provider, repeat) in enumerate(_promptfoo_trials(samples, repeats)):
            passes = _judgements(test, provider, repeat, repeats, seed)
            row = _result(template, test, provider, passes, _text(rng, text_chars))
            row["testIdx"] = test * repeats + repeat
            out.write(
                ("" if index == 0 else ",\n") + "      " + json.dumps(row, indent=2).replace("\n", "\n      ")
            )
        out.write(tail)
    return path


def _promptfoo_trials(samples: int, repeats: int) -> list[tuple[int, int, int]]:
    """(test, provider, repeat) of every result, in promptfoo's order (testIdx, then promptIdx)."""
    tests = max(1, samples // (2 * repeats))
    return [
        (test, provider, repeat) for test in range(tests) for repeat in range(repeats) for provider in (0, 1)
    ][:samples]


def _judgements(test: int, provider: int, repeat: int, repeats: int, seed: int) -> list[bool | None]:
    """[success, then each assertion's pass] of one result; [None, ...] when it errored."""
    trial = provider * repeats + repeat
    first = outcome(test, trial, seed)
    if first is None:
        return [None] * (1 + len(ASSERTIONS))
    parts = [first, outcome(test, trial, seed, part=1)]
    return [all(parts), *parts]


def promptfoo_truth(samples: int, repeats: int = 3, seed: int = 0) -> dict[tuple[str, str, str], list[int]]:
    """(target, scorer, case id) -> [graded, passed, errored] of :func:`big_promptfoo`'s file."""
    truth: dict[tuple[str, str, str], list[int]] = {}
    for test, provider, repeat in _promptfoo_trials(samples, repeats):
        passes = _judgements(test, provider, repeat, repeats, seed)
        for scorer, passed in zip(("success", *ASSERTIONS), passes, strict=True):
            entry = truth.setdefault((TARGETS[provider], scorer, f"test-{test:06d}"), [0, 0, 0])
            if passed is None:
                entry[2] += 1
            else:
                entry[0] += 1
                entry[1] += bool(passed)
    return truth
