"""``trialscore label``: one offline page to label a random sample of a judged run's items by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trialscore.cli._app import app, console
from trialscore.cli._options import SeedOpt, bad_input
from trialscore.errors import EvaluationError

__all__ = ["label"]


@app.command()
def label(
    run: Annotated[
        Path,
        typer.Argument(
            help="A run of the runner: its folder, trials.jsonl or summary.json, or a stored run id."
        ),
    ],
    sample: Annotated[int, typer.Option("--sample", help="How many cases to draw at random.")] = 50,
    out: Annotated[Path, typer.Option("--out", "-o", help="The HTML file to write.")] = Path("label.html"),
    seed: SeedOpt = 0,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store", help="Run store read when RUN is a run id.  [default: .trialscore/store.sqlite]"
        ),
    ] = None,
) -> None:
    """Write one offline page showing a random, seeded sample of the run's cases (every trial, its output
    and the judge's reasons) where a reviewer marks each trial pass or fail and downloads labels.csv
    for 'score --human'.

    Example: trialscore label run-folder/ --sample 50 --out label.html
    """
    with bad_input():
        from trialscore._files import write_atomic
        from trialscore.cli._options import ReadOptions, stored_or_given
        from trialscore.report.asked import read_asked
        from trialscore.report.label_page import label_model, render_label_page
        from trialscore.results.formats import run_folder
        from trialscore.results.judged import trial_records

        (source,) = stored_or_given([run], ReadOptions(store=store))
        found = trial_records(source)
        if found is None:
            raise EvaluationError(
                f"{run}: the labelling page reads a run of the runner (a run folder, its trials.jsonl or "
                "summary.json, or a stored run id)"
            )
        asked = {}
        if run.exists():
            trials = run_folder.trials_file(run) if run_folder.sniff(run) else run
            asked = read_asked(trials.parent / run_folder.CASES)
        page = label_model(found[0], found[1], sample, seed, asked)
        write_atomic(out, [render_label_page(page)], "the labelling page")
    console.print(
        f"label page: {out} ({page['sample']} of {page['population']} cases drawn at random, seed {seed}; "
        f"{page['trials']} trials to mark)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
