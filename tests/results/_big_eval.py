"""An inspect_ai ``.eval`` log of any size, built from a small log that inspect_ai itself wrote.

inspect_ai writes a small eval (mockllm, offline); its members' JSON (the header, one sample, one
sample summary) are the templates of a log of ``samples`` samples x ``epochs`` epochs: every sample
gets its id, epoch, score (``C`` or ``I``: a pass rate per sample), an error on some, and a transcript
of ``transcript_chars`` characters of message text, so the file has the size of a real long log.
"""

from __future__ import annotations

import json
import random
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The error of an errored sample.
ERROR = "RuntimeError('the sandbox died')"


def small_log(log_dir: Path) -> Path:
    """A 2-sample, 1-epoch eval written by inspect_ai with mockllm (no network)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match

    def reply(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        output = ModelOutput.from_content(model="mockllm", content="2")
        output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return output

    dataset = [Sample(input="1+1?", target="2", id="s1"), Sample(input="2+2?", target="4", id="s2")]
    (log,) = inspect_eval(
        Task(dataset=dataset, scorer=match(), name="big"),
        model=get_model("mockllm/model", custom_outputs=reply),
        log_dir=str(log_dir),
        display="none",
    )
    return Path(log.location)


def outcome(sample: int, epoch: int, seed: int) -> str | None:
    """The score of a sample's epoch: ``C`` / ``I`` from a per-sample pass rate, None for an error."""
    rng = random.Random(seed * 1_000_003 + sample * 101 + epoch)
    if rng.random() < 0.01:
        return None
    rate = (sample * 7919 % 1000) / 1000
    return "C" if rng.random() < rate else "I"


def big_log(
    template: Path, out: Path, samples: int, epochs: int = 1, transcript_chars: int = 4000, seed: int = 0,
    journal_only: bool = False,
) -> Path:  # fmt: skip
    """Write ``out``: ``template``'s log grown to ``samples`` x ``epochs`` samples (see the module)."""
    with zipfile.ZipFile(template) as small:
        header = json.loads(small.read("header.json"))
        start = small.read("_journal/start.json")
        sample_name = next(name for name in small.namelist() if name.startswith("samples/"))
        sample = json.loads(small.read(sample_name))
        summary = json.loads(small.read("summaries.json"))[0]
        reductions = small.read("reductions.json") if "reductions.json" in small.namelist() else None
    ids = [f"sample-{index:06d}" for index in range(samples)]
    header["eval"]["dataset"]["samples"] = samples
    header["eval"]["dataset"]["sample_ids"] = ids
    header["eval"]["config"]["epochs"] = epochs
    if journal_only:
        header["status"] = "started"
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz      .,"
    to_letters = bytes(ord(letters[byte % len(letters)]) for byte in range(256))  # random bytes -> text
    summaries: list[str] = []  # each sample's summary as JSON
    summary_json = _dumper(summary, ("id", "epoch", "error", "scores"))
    sample_json = _dumper(sample, ("id", "epoch", "scores", "error", "messages"))
    messages = "".join(json.dumps(message) + ", " for message in sample["messages"])  # the template's, once
    # the JSON of an outcome's scores, its summary's error and its sample's error (three outcomes)
    outcomes = {
        value: (
            json.dumps({} if value is None else {"match": {**summary["scores"]["match"], "value": value}}),
            json.dumps(None if value else ERROR),
            json.dumps(None if value else {"message": ERROR, "traceback": "", "traceback_ansi": ""}),
        )
        for value in ("C", "I", None)
    }
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as log:
        log.writestr("_journal/start.json", start)
        for epoch in range(1, epochs + 1):
            for index, name in enumerate(ids):
                scores, summary_error, sample_error = outcomes[outcome(index, epoch, seed)]
                varying = {"id": json.dumps(name), "epoch": json.dumps(epoch), "scores": scores}
                summaries.append(summary_json({**varying, "error": summary_error}))
                text = rng.randbytes(transcript_chars).translate(to_letters).decode("ascii")
                reply = {"role": "assistant", "content": text, "source": "generate"}
                varying["error"] = sample_error
                varying["messages"] = f"[{messages}{json.dumps(reply)}]"  # [*sample["messages"], reply]
                log.writestr(f"samples/{name}_epoch_{epoch}.json", sample_json(varying))
        chunk = 5000
        for part, first in enumerate(range(0, len(summaries), chunk), start=1):
            log.writestr(f"_journal/summaries/{part}.json", _json_list(summaries[first : first + chunk]))
        if not journal_only:
            log.writestr("summaries.json", _json_list(summaries))
            if reductions is not None:
                log.writestr("reductions.json", reductions)
            log.writestr("header.json", json.dumps(header))
    return out


def _json_list(texts: list[str]) -> str:
    """``json.dumps`` of a list whose elements' JSON texts are ``texts``."""
    return "[" + ", ".join(texts) + "]"


def _dumper(template: dict[str, Any], keys: tuple[str, ...]) -> Callable[[dict[str, str]], str]:
    """``json.dumps(dict(template, **values))`` for ``values`` of ``keys``, given as their JSON texts
    (``json.dumps(value)``, or text that is the same): the rest of the template is written once, not
    once a sample."""
    marks = {key: json.dumps(f"\x00{key}\x00") for key in keys}
    skeleton = json.dumps(dict(template, **{key: f"\x00{key}\x00" for key in keys}))
    order = sorted(keys, key=lambda key: skeleton.index(marks[key]))  # as the template has them
    parts: list[str] = []
    for key in order:
        before, skeleton = skeleton.split(marks[key])
        parts.append(before)

    def dump(texts: dict[str, str]) -> str:
        return "".join(part + texts[key] for part, key in zip(parts, order, strict=True)) + skeleton

    return dump
