"""inspect_ai logs as users have them, written by the real inspect_ai at test time (mockllm, offline):
two scorers per sample, an eval set of two tasks in nested folders, and a log that stopped on an error."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _readers import by_item, runner, score_json

from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.readers import read_counts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside inspect_ai


def _eval(
    log_dir: Path, name: str, samples: int, epochs: int, crash_on: str | None = None, **task: Any
) -> Any:
    """A real inspect_ai eval with mockllm: sample ``qI`` (I = 1..samples) is asked ``I+I?`` and the model
    answers right on odd I, on odd epochs of even I, never on I divisible by 3; ``crash_on`` names a
    sample whose solver raises (the eval stops with status ``error``)."""
    pytest.importorskip("inspect_ai", reason="the inspect extra (inspect_ai) is not installed")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, solver

    calls: Counter[str] = Counter()

    def reply(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        number = int(messages[-1].text.split("+")[0])
        calls[str(number)] += 1
        right = number % 3 != 0 and (number % 2 == 1 or calls[str(number)] % 2 == 1)
        output = ModelOutput.from_content(model="mockllm", content=str(2 * number if right else -1))
        output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)  # no token estimate
        return output

    @solver
    def answer():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if state.sample_id == crash_on:
                raise RuntimeError("the sandbox died")
            return await generate(state)

        return solve

    dataset = [Sample(input=f"{i}+{i}?", target=str(2 * i), id=f"q{i}") for i in range(1, samples + 1)]
    scorers = task.pop("scorer", match())
    (log,) = inspect_eval(
        Task(dataset=dataset, solver=answer(), scorer=scorers, epochs=epochs, name=name),
        model=get_model("mockllm/model", custom_outputs=reply),
        log_dir=str(log_dir),
        display="none",
        max_samples=1,
        **task,
    )
    return log


def _own_counts(log: Any, task: bool = False) -> dict[tuple[str, ...], tuple[int, int, int]]:
    """(scorer, [task,] sample) -> (graded, passed, errored) from the log's own samples, as inspect_ai
    records them (a sample with an error, or without a scorer's score, is an errored trial)."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    full = read_eval_log(log.location)
    scorers = sorted({name for sample in full.samples for name in (sample.scores or {})})
    out: dict[tuple[str, ...], list[int]] = {}
    for sample in full.samples:
        for scorer in scorers:
            key = (scorer, *((full.eval.task,) if task else ()), str(sample.id))
            counts = out.setdefault(key, [0, 0, 0])
            score = (sample.scores or {}).get(scorer)
            if sample.error is not None or score is None:
                counts[2] += 1
            else:
                counts[0] += 1
                counts[1] += to_float(score.value) == 1.0
    return {key: (graded, passed, errored) for key, (graded, passed, errored) in out.items()}


@pytest.mark.slow
def test_two_scorers_are_scored_apart_and_named_with_the_scorer_hint(tmp_path: Path) -> None:
    from inspect_ai.scorer import includes, match

    log = _eval(tmp_path / "logs", "arith", samples=4, epochs=3, scorer=[match(), includes()])
    counts = read_counts([log.location], group_targets=True)
    assert counts.by == ("scorer",)
    assert by_item(counts) == _own_counts(log)
    assert {key[0] for key in by_item(counts)} == {"match", "includes"}
    assert "scored per scorer: the inputs hold 2 scorers (includes, match); scorer NAME picks one" in (
        counts.stats.notes
    )
    report = score_json(str(tmp_path / "logs"))
    labels = [group["label"] for group in report["groups"]]
    assert labels == ["scorer=includes", "scorer=match"]
    for group in report["groups"]:
        assert (group["items"], group["trials"]) == (4, 12)
    picked = runner.invoke(app, ["score", str(tmp_path / "logs"), "--scorer", "match", "-f", "json"])
    assert picked.exit_code == 0, picked.output
    only = json.loads(picked.stdout)
    assert [group["label"] for group in only["groups"]] == ["all"]
    assert only["rows"]["rows_read"] == 12
    assert "scorer match: 12 trial rows of the other scorers left out" in picked.stderr
    wrong = runner.invoke(app, ["score", str(tmp_path / "logs"), "--scorer", "exact"])
    assert wrong.exit_code == 2
    assert "scorer 'exact' is not in the inputs; the scorers are includes, match" in wrong.stderr


@pytest.mark.slow
def test_an_eval_set_scores_each_task_and_a_parent_folder_is_read_recursively(tmp_path: Path) -> None:
    first = _eval(tmp_path / "evals" / "monday" / "set", "add", samples=3, epochs=2)
    second = _eval(tmp_path / "evals" / "tuesday", "double", samples=2, epochs=2)
    (tmp_path / "evals" / "monday" / "set" / "eval-set.json").write_text('{"eval_set_id": "x", "tasks": []}')
    counts = read_counts([tmp_path / "evals"], group_targets=True)
    assert counts.by == ("suite",)
    own = {key[1:]: value for log in (first, second) for key, value in _own_counts(log, task=True).items()}
    assert by_item(counts) == own
    assert "grouped by suite: the inputs hold 2 suites (tasks) (add, double) (by chooses the groups)" in (
        counts.stats.notes
    )
    assert len(counts.stats.sources) == 2


@pytest.mark.slow
def test_a_log_that_stopped_on_an_error_is_read_and_said_to_be_partial(tmp_path: Path) -> None:
    log = _eval(tmp_path / "logs", "stops", samples=32, epochs=1, crash_on="q6")
    assert log.status == "error"
    logged = len(log.samples)
    counts = read_counts([log.location])
    assert by_item(counts) == {key[1:]: value for key, value in _own_counts(log).items()}
    (partial,) = counts.stats.partial
    assert (partial.status, partial.planned, partial.logged) == ("error", 32, logged)
    message = f"the run did not finish (status error): {32 - logged} of 32 samples missing"
    assert partial.message == f"{log.location}: {message}"
    result = runner.invoke(app, ["score", log.location, "-f", "json"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {log.location}: {message}"]
    assert json.loads(result.stdout)["rows"]["partial"] == [
        {"source": log.location, "status": "error", "planned": 32, "logged": logged, "missing": 32 - logged}
    ]
    page = tmp_path / "report.html"
    result = runner.invoke(app, ["report", log.location, "--out", str(page)])
    assert result.exit_code == 0, result.output
    assert message in page.read_text()


@pytest.mark.slow
def test_a_zip_bomb_in_an_eval_log_is_refused_naming_the_member(tmp_path: Path) -> None:
    log = _eval(tmp_path / "logs", "tiny", samples=1, epochs=1)
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(log.location) as real, zipfile.ZipFile(bomb, "w", zipfile.ZIP_BZIP2) as out:
        for info in real.infolist():
            data = real.read(info)
            if info.filename == "header.json":  # bzip2 inflates far past deflate's ratio
                data = data[:-1] + b" " * 2**26 + data[-1:]
            out.writestr(info.filename, data)
    with pytest.raises(EvaluationError, match=r"bomb\.eval member 'header\.json': inflates to 64 MiB"):
        read_counts([bomb])
