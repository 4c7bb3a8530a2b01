"""Options every command shares, declared once, and the plumbing behind them.

The reading options (which column holds what, how invalid rows and errored trials are
treated) are one :class:`ReadOptions` value.  :func:`reading_options` adds them to a
command's signature, so each reading command declares ``read: ReadOptions`` and nothing
else; :func:`read_counts` turns them into per-group counts.

The library's messages name its parameters (``skip_invalid``, ``columns.item``, see
:func:`trialscore.errors.parameter`); the command line says them with its flags (:data:`FLAGS`,
applied by :func:`flagged` to every error, warning, note and output it prints).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape

from trialscore._words import plural
from trialscore.cli._app import EXIT_BAD_INPUT, EXIT_CANT_CREATE, EXIT_NOT_JUDGED, EXIT_STORE_FAILED, errors
from trialscore.core.metrics import metric_names
from trialscore.errors import EvaluationError, OutputError, StoreError, Worded

if TYPE_CHECKING:
    from trialscore.results.columns import ColumnMap
    from trialscore.results.counts import GroupCounts, ItemCounts
    from trialscore.results.readers import Detail, RecordSource

__all__ = [
    "FLAGS",
    "JSON_VERSION",
    "METRIC_NAMES",
    "AllowPartialOpt",
    "ByOpt",
    "ErrorPolicyOption",
    "FilesArg",
    "FormatOpt",
    "LevelOpt",
    "OutputFormat",
    "PassHatKOption",
    "ReadOptions",
    "ResamplesOpt",
    "SeedOpt",
    "TauOpt",
    "bad_input",
    "default_ks",
    "error_text",
    "flagged",
    "group_map",
    "inputs_of",
    "parse_ks",
    "read_counts",
    "read_together",
    "reading_options",
    "refuse_partial",
    "same_suite",
    "split",
    "warn_skipped_rows",
]

#: Version of the JSON layout every command prints with ``--format json``.
JSON_VERSION = 1

#: The metric names of the registry, for the help of every --metric option.
METRIC_NAMES = ", ".join(metric_names())

#: The flag of each library parameter a message names (see :func:`trialscore.errors.parameter`).
FLAGS = {
    "by": "--by",
    "skip_invalid": "--skip-invalid",
    "allow_repeated_trials": "--allow-repeated-trials",
    "scorer": "--scorer",
    "errors": "--errors",
    "ci": "--ci",
    "columns.item": "--item-col",
    "columns.trial": "--trial-col",
    "columns.passed": "--pass-col",
    "columns.score": "--score-col",
    "columns.verdict": "--verdict-col",
    "columns.threshold": "--threshold",
    "columns.cluster": "--cluster-col",
    "run_suite(out=...)": "`trialscore run --out`",
    "store": "--store",
    "adaptive": "--adaptive",
    "baseline": "--baseline",
    "fail_under": "--fail-under",
    "fail_on": "--fail-on",
    "max_error_rate": "--max-error-rate",
    "retries": "--retries",
    "trials": "--trials",
    "estimand='items'": "--estimand items",
    "judge_col": "--judge-col",
    "margin": "--non-inferior MARGIN",
    "expected": "--expected",
}

T = TypeVar("T")


def flagged(value: T) -> T:
    """``value`` with every library message in it (a :class:`~trialscore.errors.Worded` text, in lists,
    tuples and dicts too) said with the command line's flags.

    >>> from trialscore.errors import parameter, worded
    >>> flagged({"notes": [worded(f"{parameter('by')} chooses the groups")], "n": 3})
    {'notes': ['--by chooses the groups'], 'n': 3}
    """
    if isinstance(value, Worded):
        return value.words(FLAGS)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {key: flagged(item) for key, item in value.items()}  # type: ignore[return-value]
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(flagged(item) for item in value)
    return value


def error_text(error: BaseException) -> str:
    """An error's message in the command line's words (its flags)."""
    message = error.args[0] if len(error.args) == 1 else str(error)
    return flagged(message) if isinstance(message, Worded) else str(error)


class OutputFormat(str, Enum):
    """How a command prints its result."""

    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"


class PassHatKOption(str, Enum):
    """pass^k's estimator (:mod:`trialscore.stats._conventions`)."""

    unbiased = "unbiased"
    plugin = "plugin"


class ErrorPolicyOption(str, Enum):
    """How errored trials enter n."""

    exclude = "exclude"
    fail = "fail"


FilesArg = Annotated[
    list[Path],
    typer.Argument(
        help="Trial files or folders (a run's output folder, a folder of inspect_ai logs); "
        "the format is detected from the content (see 'trialscore formats').",
    ),
]
ByOpt = Annotated[
    str | None,
    typer.Option("--by", help="Comma-separated group columns, e.g. target,category ('file' = per file)."),
]
FormatOpt = Annotated[
    OutputFormat, typer.Option("--format", "-f", help="Output: table, json, markdown or csv.")
]
LevelOpt = Annotated[float, typer.Option("--level", help="Confidence level of intervals.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of every random step (bootstrap, permutations).")]
ResamplesOpt = Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")]
TauOpt = Annotated[float, typer.Option("--tau", help="Threshold share tau of g-pass@k_tau.")]
AllowPartialOpt = Annotated[
    bool,
    typer.Option(
        "--allow-partial",
        help="Let the gate judge an input that stopped short of its plan (an interrupted run).",
    ),
]


@dataclass(frozen=True)
class ReadOptions:
    """How trial files are read: the format and column options every reading command shares."""

    input_format: Annotated[
        str | None,
        typer.Option(
            "--from", help="Read inputs as this format (see 'trialscore formats'); default: detected."
        ),
    ] = None
    item_col: Annotated[str | None, typer.Option("--item-col", help="Column holding the case id.")] = None
    trial_col: Annotated[str | None, typer.Option("--trial-col", help="Column holding the trial index.")] = (
        None
    )
    pass_col: Annotated[
        str | None, typer.Option("--pass-col", help="Column holding pass/fail (true/false, 1/0).")
    ] = None
    score_col: Annotated[
        str | None, typer.Option("--score-col", help="Column holding a 0..1 score (with --threshold).")
    ] = None
    verdict_col: Annotated[
        str | None, typer.Option("--verdict-col", help="Column holding pass/fail/borderline/error.")
    ] = None
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="A trial passes when score >= threshold.")
    ] = None
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Skip invalid rows and count them, instead of failing.")
    ] = False
    errors: Annotated[
        ErrorPolicyOption,
        typer.Option("--errors", help="Errored trials: 'exclude' from n (default) or count as 'fail'."),
    ] = ErrorPolicyOption.exclude
    allow_repeated_trials: Annotated[
        bool,
        typer.Option(
            "--allow-repeated-trials", help="Pool rows whose (item, trial) repeat instead of failing."
        ),
    ] = False
    scorer: Annotated[
        str | None,
        typer.Option(
            "--scorer",
            help="Read only this scorer's judgements (inputs with several scorers, metrics or assertions "
            "are otherwise scored per scorer).",
        ),
    ] = None
    per_grader: Annotated[
        bool,
        typer.Option(
            "--per-grader",
            help="Score each grader's verdict of the runner's trials (grader_results) as its own group, "
            "grader=NAME, beside the trial's own verdict, grader=(trial): the process beside the answer.",
        ),
    ] = False
    cluster_col: Annotated[
        str | None,
        typer.Option(
            "--cluster-col",
            help="Column naming each item's cluster (e.g. a shared passage): clustered SE, t with G-1 df.",
        ),
    ] = None
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Run store read for inputs that are run ids ('latest', 'latest~1', or an id from "
            "'trialscore runs').  [default: .trialscore/store.sqlite]",
        ),
    ] = None
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            help="Stored runs of this suite only: 'latest' and 'latest~N' count its runs.",
            show_default=False,
        ),
    ] = None

    def columns(self) -> ColumnMap:
        """The column options as the readers' :class:`~trialscore.results.columns.ColumnMap`."""
        from trialscore.results.columns import ColumnMap

        return ColumnMap(
            item=self.item_col,
            trial=self.trial_col,
            passed=self.pass_col,
            score=self.score_col,
            verdict=self.verdict_col,
            threshold=self.threshold,
            cluster=self.cluster_col,
        )


R = TypeVar("R")


def reading_options(
    *, clusters: bool = True, graders: bool = False
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Give a command the reading options, declared once in :class:`ReadOptions`.

    The decorated command takes ``read: ReadOptions``; the command line sees one option per
    field (``--item-col``, ``--skip-invalid``, ...), placed before ``--format``.  With
    ``clusters=False`` the command has no ``--cluster-col``; with ``graders=True`` it has
    ``--per-grader`` (a command whose figures it splits per grader).
    """
    import typing

    hints = typing.get_type_hints(ReadOptions, include_extras=True)
    left_out = {name for name, given in (("cluster_col", clusters), ("per_grader", graders)) if not given}
    names = [f.name for f in fields(ReadOptions) if f.name not in left_out]
    extra = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=ReadOptions.__dataclass_fields__[name].default,
            annotation=hints[name],
        )
        for name in names
    ]

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command)
        own_hints = typing.get_type_hints(command, include_extras=True)
        own = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=own_hints[p.name])
            for p in signature.parameters.values()
            if p.name != "read"
        ]
        cut = next((i for i, p in enumerate(own) if p.name == "output"), len(own))

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> R:
            read = ReadOptions(**{name: kwargs.pop(name) for name in names})
            return command(read=read, **kwargs)

        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*own[:cut], *extra, *own[cut:]]
        )
        wrapper.__annotations__ = {
            **{k: v for k, v in own_hints.items() if k != "read"},
            **{p.name: p.annotation for p in extra},
        }
        del wrapper.__wrapped__
        return wrapper

    return decorate


@contextmanager
def bad_input() -> Iterator[None]:
    """Turn bad input into ``error: ...`` on stderr and exit code 2; a run store that cannot be read
    or written into ``error: store ...`` (its message says what to do) and exit code 74; an output
    file that cannot be written into one line and exit code 73."""
    try:
        yield
    except EvaluationError as exc:
        errors.print(f"[red]error:[/red] {escape(error_text(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except StoreError as exc:
        errors.print(f"[red]error:[/red] {escape(error_text(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_STORE_FAILED) from exc
    except OutputError as exc:
        errors.print(f"[red]error:[/red] {escape(error_text(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CANT_CREATE) from exc


def split(text: str | None) -> list[str]:
    """The non-empty comma-separated parts of an option value."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def parse_ks(text: str | None) -> list[int] | None:
    """``--k 1,5`` as ``[1, 5]``; ``None`` when the option was not given."""
    if text is None:
        return None
    values = []
    for part in split(text):
        try:
            values.append(int(part))
        except ValueError as exc:
            raise EvaluationError(f"--k must be comma-separated whole numbers; got {text!r}") from exc
    if not values:
        raise EvaluationError(f"--k must name at least one k; got {text!r}")
    return values


def default_ks(counts: ItemCounts) -> list[int]:
    """k = 1 and the largest k every item allows."""
    graded = counts.graded + (counts.errored if counts.errors == "fail" else 0)
    used = graded[graded > 0]
    largest = int(used.min()) if used.size else 1
    return [1] if largest <= 1 else [1, largest]


def warn_skipped_rows(rows: int, first: str | None) -> None:
    """Warn on stderr that ``rows`` invalid rows were skipped, naming the first."""
    if rows:
        errors.print(
            f"warning: skipped {plural(rows, 'invalid row')}; first: {flagged(first)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _warn_skipped(counts: ItemCounts, noted: set[str]) -> None:
    """Warn about an input's skipped rows and partial runs; print its notes not printed yet (``noted``)."""
    warn_skipped_rows(counts.stats.rows_skipped, counts.stats.first_skipped)
    for run in counts.stats.partial:
        errors.print(f"warning: {run.message}", markup=False, highlight=False, soft_wrap=True)
    for note in counts.stats.notes:
        line = f"note: {flagged(note)}"
        if line not in noted:
            noted.add(line)
            errors.print(line, markup=False, highlight=False, soft_wrap=True)


def inputs_of(files: Sequence[Path | RecordSource]) -> list[Path | str | RecordSource]:
    """The inputs as given: a URL that the command line's ``Path`` folded (``s3:/bucket``) as its text.

    >>> inputs_of([Path("s3://bucket/runs/"), Path("runs/a.jsonl")])
    ['s3://bucket/runs', PosixPath('runs/a.jsonl')]
    """
    from trialscore.results.sources import is_url, url_of

    out: list[Path | str | RecordSource] = []
    for path in files:
        text = url_of(str(path)) if isinstance(path, Path) else ""
        out.append(text if is_url(text) else path)
    return out


def stored_or_given(
    files: Sequence[Path | RecordSource], options: ReadOptions
) -> list[Path | str | RecordSource]:
    """URLs as text; a path that does not exist (and is no glob) is the stored run it names."""
    from trialscore.results.sources import has_glob

    given = inputs_of(files)
    stored = [
        i
        for i, path in enumerate(given)
        if isinstance(path, Path) and not path.exists() and not has_glob(path)
    ]
    if not stored:
        return given
    from trialscore.runner.history import resolve_inputs  # the store only for a name that is no path

    found = resolve_inputs([files[i] for i in stored], options.store, options.suite)
    for i, run in zip(stored, found, strict=True):
        given[i] = run
    return given


def read_counts(
    files: Sequence[Path | RecordSource], by: Sequence[str], options: ReadOptions, detail: Detail = False
) -> ItemCounts:
    """Per-group item counts of ``files`` read with ``options``; skipped rows are warned about.

    An input that is not an existing path is read from the run store (``--store``) when it
    names a run there (a run id, ``latest``, ``latest~N``): see :mod:`trialscore.runner.history`.
    """
    (counts,) = read_together([files], by, options, detail=detail)
    return counts


def read_together(
    inputs: Sequence[Sequence[Path | RecordSource]],
    by: Sequence[str],
    options: ReadOptions,
    split: Sequence[str] = (),
    detail: Detail = False,
) -> list[ItemCounts]:
    """Each input's counts (a baseline and a candidate, the runs of a history), grouped alike.

    With no ``by``, every input is grouped by target once any of them holds several targets;
    with ``split`` (e.g. ``suite``, ``target``), by each of those columns whose value differs
    anywhere (:func:`~trialscore.results.readers.read_counts_together`).  Stored runs are named
    as in :func:`read_counts`.  ``detail`` keeps each trial's fields too (the per-success metrics),
    the groups as without it.
    """
    from trialscore.results import progress
    from trialscore.results.readers import read_counts_together

    resolved = [stored_or_given(files, options) for files in inputs]
    with progress.shown():
        read = read_counts_together(
            resolved,
            by=by,
            columns=options.columns(),
            skip_invalid=options.skip_invalid,
            errors=options.errors.value,
            allow_repeated_trials=options.allow_repeated_trials,
            input_format=options.input_format,
            group_targets=not split,
            split=split,
            scorer=options.scorer,
            detail=detail,
            graders=options.per_grader,
        )
    if detail:  # fields asked for (the per-success metrics): grouped as without them; the bare
        # trials (detail=(), the judged commands) keep the target that labels are matched by
        from trialscore.results.per_success import without_single_target

        read = without_single_target(read, by)
    noted: set[str] = set()
    for counts in read:
        _warn_skipped(counts, noted)
    return read


def same_suite(options: ReadOptions, names: Sequence[Path]) -> ReadOptions:
    """``options`` with ``--suite`` set to the latest run's suite when the inputs are all ``latest`` /
    ``latest~N`` and the store holds several suites (said in one note), so that they name runs of one suite.
    """
    if options.suite is not None:
        return options
    from trialscore.runner.history import relative_suite

    suite = relative_suite(names, options.store)
    if suite is None:
        return options
    errors.print(
        f"note: {', '.join(map(str, names))} are counted among the runs of suite {suite!r}, the latest "
        "run's (--suite NAME picks another)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return dataclasses.replace(options, suite=suite)


def refuse_partial(read: Sequence[ItemCounts], allow: bool, gate: str) -> None:
    """A gate does not judge an input that stopped short of its plan unless ``--allow-partial``: it says
    why and exits 3 (could not judge), as for any gate the data cannot decide."""
    partial = [run.message for counts in read for run in counts.stats.partial]
    if partial and not allow:
        errors.print(
            f"gate could not judge (exit status {EXIT_NOT_JUDGED}): {gate} refuses a partial input: "
            f"{'; '.join(partial)}; finish it first (trialscore run --resume RUN_ID) or give "
            "--allow-partial to judge the trials it holds",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_NOT_JUDGED)


def group_map(counts: ItemCounts) -> dict[tuple[Any, ...], GroupCounts]:
    """Each group's counts by its key."""
    return {group.key: group for group in counts.groups()}
