"""The ``trialscore`` command line (Typer + Rich).

Commands: ``run`` and ``validate`` (the trial runner, see
:mod:`trialscore.runner.commands`), ``score`` (metrics with intervals per group), ``compare`` (paired
comparison, a CI gate), ``rank`` (models ranked with intervals and the
probability each beats the next), ``plan`` (items and trials needed),
``schema`` (the trial-record JSON schema) and ``demo``.

Exit codes: 0 success, 1 a gate failed (``compare --fail-on regression``), 2 bad
usage or bad input (the message goes to stderr).  ``--format json`` output is
stable and documented in docs/cli.md.  Heavy modules (DuckDB, SciPy) are
imported inside the commands that need them, so ``--help`` stays fast.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer
from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table

from trialscore.bank import Bank
from trialscore.errors import EvaluationError
from trialscore.estimators import bayes, g_pass_at_k_tau, mg_pass_at_k, pass_at_k, pass_hat_k
from trialscore.metrics import metric_names
from trialscore.runner.commands import register as register_runner_commands
from trialscore.terminal import fitted_table, stderr_console, stdout_console

if TYPE_CHECKING:
    from trialscore.results.columns import ColumnMap
    from trialscore.results.counts import GroupCounts, ItemCounts

app = typer.Typer(
    name="trialscore",
    help="Score non-deterministic evaluations: pass@k, pass^k, G-Pass@k, Bayes@N.",
    no_args_is_help=True,
    add_completion=False,
    # Plain help and usage errors: they wrap at any terminal width instead of cutting option names.
    rich_markup_mode=None,
)
console = stdout_console()
errors = stderr_console()


def _print_version(value: bool) -> None:
    if value:
        from trialscore import __version__

        typer.echo(f"trialscore {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Score non-deterministic evaluations: pass@k, pass^k, G-Pass@k, Bayes@N."""


register_runner_commands(app)


def _load_matrix(path: Path) -> np.ndarray:
    """A 0/1 CSV matrix (items x trials); lines starting with # are comments."""
    try:
        return np.loadtxt(path, delimiter=",", comments="#", dtype=np.int64, ndmin=2)
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"{path}: cannot read a 0/1 CSV matrix: {exc}") from exc


@app.command()
def demo(
    matrix: Annotated[
        Path | None, typer.Option(help="CSV of 0/1 outcomes, items x trials (default: bundled example).")
    ] = None,
    k: Annotated[str, typer.Option(help="Comma-separated k values.")] = "1,3,5",
) -> None:
    """Score a 0/1 outcome matrix and print pass@k, pass^k, G-Pass@k and Bayes@N.

    Example: trialscore demo --k 1,2,5
    """
    try:
        if matrix is None:
            with resources.as_file(resources.files("trialscore") / "data" / "example_matrix.csv") as p:
                R = _load_matrix(p)
            source = "bundled example (12 cases x 10 trials)"
        else:
            R = _load_matrix(matrix)
            source = str(matrix)
        ks = [int(v) for v in k.split(",") if v.strip()]
        bank = Bank.from_matrix(R)
        for value in ks:
            bank.check_k(value)
    except (EvaluationError, ValueError) as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    table = Table(title=f"trialscore: {source}", title_justify="left")
    table.add_column("k", justify="right")
    for name in ("pass@k", "pass^k", "G-Pass@k τ=0.5", "mG-Pass@k"):
        table.add_column(name, justify="right")
    for value in ks:
        table.add_row(
            str(value),
            f"{pass_at_k(bank, value):.3f}",
            f"{pass_hat_k(bank, value):.3f}",
            f"{g_pass_at_k_tau(bank, value, 0.5):.3f}",
            f"{mg_pass_at_k(bank, value):.3f}",
        )
    console.print(table)
    mu, sigma = bayes(bank)
    flaky = int(((bank.c > 0) & (bank.c < bank.n)).sum())
    console.print(
        f"Bayes@N: {mu:.3f} ± {sigma:.3f}   items: {bank.items}   trials/item: {bank.trials}   "
        f"flaky items: {flaky}"
    )


# ---------------------------------------------------------------------------------------------------------
# shared plumbing: errors, output formats, reading options


class OutputFormat(str, Enum):
    """How a command prints its result."""

    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"


class ErrorPolicyOption(str, Enum):
    """How errored trials enter n."""

    exclude = "exclude"
    fail = "fail"


class GateOption(str, Enum):
    """When ``compare`` exits with 1."""

    none = "none"
    regression = "regression"


#: The metric names of the registry, for the help of every --metric option.
_METRIC_NAMES = ", ".join(metric_names())

#: Version of the JSON layout every command prints with ``--format json``.
JSON_VERSION = 1


@contextmanager
def _bad_input() -> Iterator[None]:
    """Turn bad input into ``error: ...`` on stderr and exit code 2."""
    try:
        yield
    except EvaluationError as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def _ks(text: str | None) -> list[int] | None:
    if text is None:
        return None
    values = []
    for part in _split(text):
        try:
            values.append(int(part))
        except ValueError as exc:
            raise EvaluationError(f"--k must be comma-separated whole numbers; got {text!r}") from exc
    if not values:
        raise EvaluationError(f"--k must name at least one k; got {text!r}")
    return values


def _json_default(value: object) -> object:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (tuple, set)):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _print_json(payload: dict[str, Any]) -> None:
    text = json.dumps(payload, indent=2, allow_nan=False, default=_json_default)
    typer.echo(text)


def _cell(value: object, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if math.isfinite(value) else str(value)
    return str(value)


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def clean(value: object) -> str:
        return _cell(value).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(clean(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def _print_csv(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    typer.echo(buffer.getvalue(), nl=False)


def _rich_table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> RenderableType:
    return fitted_table(
        title or None, header, [[_cell(value) for value in row] for row in rows], console.width
    )


def _rows_line(stats: dict[str, Any]) -> str:
    policy = "left out of n" if stats["errors"] == "exclude" else "counted as failures"
    return (
        f"rows: {stats['rows_read']} read, {stats['rows_used']} used, {stats['rows_skipped']} skipped, "
        f"{stats['rows_errored']} errored (errored trials {policy})"
    )


def _warn_skipped(counts: ItemCounts) -> None:
    stats = counts.stats
    if stats.rows_skipped:
        errors.print(
            f"warning: skipped {stats.rows_skipped} invalid row(s); first: {stats.first_skipped}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


FilesArg = Annotated[
    list[Path], typer.Argument(help="Trial files: .parquet, .csv, .jsonl, .json, .npy, .npz, .eval.")
]
ByOpt = Annotated[
    str | None,
    typer.Option("--by", help="Comma-separated group columns, e.g. target,category ('file' = per file)."),
]
ItemColOpt = Annotated[str | None, typer.Option("--item-col", help="Column holding the case id.")]
TrialColOpt = Annotated[str | None, typer.Option("--trial-col", help="Column holding the trial index.")]
PassColOpt = Annotated[
    str | None, typer.Option("--pass-col", help="Column holding pass/fail (true/false, 1/0).")
]
ScoreColOpt = Annotated[
    str | None, typer.Option("--score-col", help="Column holding a 0..1 score (with --threshold).")
]
VerdictColOpt = Annotated[
    str | None, typer.Option("--verdict-col", help="Column holding pass/fail/borderline/error.")
]
ThresholdOpt = Annotated[
    float | None, typer.Option("--threshold", help="A trial passes when score >= threshold.")
]
SkipOpt = Annotated[
    bool, typer.Option("--skip-invalid", help="Skip invalid rows and count them, instead of failing.")
]
ErrorsOpt = Annotated[
    ErrorPolicyOption,
    typer.Option("--errors", help="Errored trials: 'exclude' from n (default) or count as 'fail'."),
]
RepeatOpt = Annotated[
    bool,
    typer.Option("--allow-repeated-trials", help="Pool rows whose (item, trial) repeat instead of failing."),
]
FormatOpt = Annotated[
    OutputFormat, typer.Option("--format", "-f", help="Output: table, json, markdown or csv.")
]
LevelOpt = Annotated[float, typer.Option("--level", help="Confidence level of intervals.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of every random step (bootstrap, permutations).")]
ResamplesOpt = Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")]
TauOpt = Annotated[float, typer.Option("--tau", help="Threshold share tau of g-pass@k_tau.")]
ClusterColOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster-col",
        help="Column naming each item's cluster (e.g. a shared passage): clustered SE, t with G-1 df.",
    ),
]


@dataclass(frozen=True)
class ReadOptions:
    """How trial files are read: the column options every reading command shares."""

    item_col: str | None = None
    trial_col: str | None = None
    pass_col: str | None = None
    score_col: str | None = None
    verdict_col: str | None = None
    threshold: float | None = None
    skip_invalid: bool = False
    errors: ErrorPolicyOption = ErrorPolicyOption.exclude
    allow_repeated_trials: bool = False
    cluster_col: str | None = None

    @classmethod
    def of(cls, params: dict[str, Any]) -> ReadOptions:
        """The reading options among a command's parameters (``errors_policy`` is ``errors``)."""
        names = {"errors": "errors_policy"}
        return cls(
            **{f: params[names.get(f, f)] for f in cls.__dataclass_fields__ if names.get(f, f) in params}
        )


def _read(files: Sequence[Path], by: Sequence[str], options: ReadOptions) -> ItemCounts:
    from trialscore.results.columns import ColumnMap
    from trialscore.results.readers import read_counts

    columns: ColumnMap = ColumnMap(
        item=options.item_col,
        trial=options.trial_col,
        passed=options.pass_col,
        score=options.score_col,
        verdict=options.verdict_col,
        threshold=options.threshold,
        cluster=options.cluster_col,
    )
    counts = read_counts(
        files,
        by=by,
        columns=columns,
        skip_invalid=options.skip_invalid,
        errors=options.errors.value,
        allow_repeated_trials=options.allow_repeated_trials,
    )
    _warn_skipped(counts)
    return counts


def _default_ks(counts: ItemCounts) -> list[int]:
    """k = 1 and the largest k every item allows."""
    graded = counts.graded + (counts.errored if counts.errors == "fail" else 0)
    used = graded[graded > 0]
    largest = int(used.min()) if used.size else 1
    return [1] if largest <= 1 else [1, largest]


# ---------------------------------------------------------------------------------------------------------
# score


@app.command()
def score(
    files: FilesArg,
    k: Annotated[
        str | None, typer.Option("--k", help="Comma-separated k values (default: 1 and the smallest n).")
    ] = None,
    by: ByOpt = None,
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help=f"Comma-separated: {_METRIC_NAMES} (bayes: the Bayes@N posterior for these items under a "
            "uniform prior; not a default).",
        ),
    ] = "pass@k,pass^k",
    ci: Annotated[
        str,
        typer.Option(
            "--ci",
            help="Interval: auto (= wilson-eff, Wilson on an effective number of items), bootstrap, bca, "
            "wilson, clopper-pearson, jeffreys, agresti-coull.",
        ),
    ] = "auto",
    level: LevelOpt = 0.95,
    resamples: ResamplesOpt = 10_000,
    seed: SeedOpt = 0,
    tau: TauOpt = 0.5,
    item_col: ItemColOpt = None,
    trial_col: TrialColOpt = None,
    pass_col: PassColOpt = None,
    score_col: ScoreColOpt = None,
    verdict_col: VerdictColOpt = None,
    threshold: ThresholdOpt = None,
    skip_invalid: SkipOpt = False,
    errors_policy: ErrorsOpt = ErrorPolicyOption.exclude,
    allow_repeated_trials: RepeatOpt = False,
    cluster_col: ClusterColOpt = None,
    output: FormatOpt = OutputFormat.table,
) -> None:
    """Score trial results: each metric with its interval, per group, with flaky items and advice.

    Example: trialscore score runs.jsonl --by target,category --k 1,5 --metric pass@k,pass^k --format json
    """
    with _bad_input():
        from trialscore.results.scorecard import metric_specs, score_group

        groups_by = _split(by)
        options = ReadOptions.of(locals())
        counts = _read(files, groups_by, options)
        ks = _ks(k) or _default_ks(counts)
        specs = metric_specs(_split(metric), ks, tau)
        cards = [score_group(group, specs, ci, level, resamples, seed, max(ks)) for group in counts.groups()]
        _check_something_scored(cards)
    stats = counts.stats.to_dict()
    payload: dict[str, Any] = {
        "command": "score",
        "version": JSON_VERSION,
        "by": groups_by,
        "ci": {
            "method": ci,
            "level": level,
            "resamples": resamples,
            "seed": seed,
            "cluster_col": cluster_col,
        },
        "rows": stats,
        "groups": [card.to_dict() for card in cards],
    }
    if output is OutputFormat.json:
        _print_json(payload)
        return
    if output is OutputFormat.csv:
        group_header = [*groups_by, "items", "trials", "errored_trials", "flaky_items"]
        row_header = ["rows_read", "rows_used", "rows_skipped", "rows_errored"]
        rows = [
            [
                *(dict(card.key).get(name) for name in groups_by),
                card.items,
                card.trials,
                card.errored_trials,
                card.flaky_items,
                m.spec.metric,
                m.spec.k,
                m.spec.tau,
                *(
                    (None,) * 5
                    if m.interval is None
                    else (
                        m.interval.estimate,
                        m.interval.low,
                        m.interval.high,
                        m.interval.method,
                        m.interval.level,
                    )
                ),
                *(stats[name] for name in row_header),
                m.reason,
            ]
            for card in cards
            for m in card.metrics
        ]
        _print_csv(
            [
                *group_header,
                "metric",
                "k",
                "tau",
                "estimate",
                "low",
                "high",
                "method",
                "level",
                *row_header,
                "reason",
            ],
            rows,
        )
        return
    header = ["metric", "estimate", "low", "high"]
    blocks = []
    for card in cards:
        rows = [
            [
                m.spec.label,
                *(
                    (None,) * 3
                    if m.interval is None
                    else (m.interval.estimate, m.interval.low, m.interval.high)
                ),
            ]
            for m in card.metrics
        ]
        methods = dict.fromkeys(
            f"{m.interval.level * 100:g}% {m.interval.method}" for m in card.metrics if m.interval is not None
        )
        by_reason: dict[str, list[str]] = {}
        for m in card.metrics:
            if m.reason:
                by_reason.setdefault(m.reason, []).append(m.spec.label)
        reasons = [f"{', '.join(labels)}: {reason}" for reason, labels in by_reason.items()]
        summary = (
            f"{card.items} items, {card.trials} trials, {card.errored_trials} errored, "
            f"{card.flaky_items} flaky (0 < c < n)"
            + (f", {card.items_all_errored} items with every trial errored" if card.items_all_errored else "")
        )
        notes = (["intervals: " + "; ".join(methods)] if methods else []) + reasons
        blocks.append((card, rows, summary, notes))
    if output is OutputFormat.markdown:
        parts = []
        for card, rows, summary, notes in blocks:
            parts.append(f"### {card.label}\n\n{summary}\n\n{_markdown_table(header, rows)}\n")
            parts.extend(f"{note}\n" for note in notes)
            parts.extend(f"- {advice.message}" for advice in card.advice)
            parts.append("")
        parts.append(_rows_line(stats))
        typer.echo("\n".join(parts))
        return
    for card, rows, summary, notes in blocks:
        console.print(f"[bold]{escape(card.label)}[/bold]: {summary}", highlight=False)
        console.print(_rich_table("", header, rows))
        for line in (*notes, *(advice.message for advice in card.advice)):
            console.print(f"  {line}", markup=False, highlight=False)
    console.print(_rows_line(stats), markup=False, highlight=False)


def _check_something_scored(cards: Sequence[Any]) -> None:
    """Bad input when a metric has no value in any group (k above every case's trials, nothing scored)."""
    if not cards:
        return
    for index, first in enumerate(cards[0].metrics):
        reasons = [card.metrics[index].reason for card in cards]
        defined_zero = first.spec.metric == "mg-pass@k" and first.spec.k == 1  # a note, not an error
        if all(reasons) and not defined_zero:
            raise EvaluationError(f"{first.spec.label} cannot be computed in any group: {reasons[0]}")


# ---------------------------------------------------------------------------------------------------------
# compare


def _group_map(counts: ItemCounts) -> dict[tuple, GroupCounts]:
    return {group.key: group for group in counts.groups()}


def _item_clusters(base: GroupCounts, cand: GroupCounts, files: tuple[str, str]) -> dict[object, object]:
    """Item id -> cluster over both runs; an item in two clusters is an error naming both values."""
    clusters = dict(zip(base.item.tolist(), base.cluster.tolist(), strict=True))  # type: ignore[union-attr]
    for item, cluster in zip(cand.item.tolist(), cand.cluster.tolist(), strict=True):  # type: ignore[union-attr]
        if clusters.setdefault(item, cluster) != cluster:
            raise EvaluationError(
                f"item {item!r} has --cluster-col value {clusters[item]!r} in {files[0]} and "
                f"{cluster!r} in {files[1]}; an item must belong to one cluster"
            )
    return clusters


def _compare_groups(
    base: GroupCounts,
    cand: GroupCounts,
    metric: str,
    k: int | None,
    tau: float,
    alpha: float,
    permutations: int,
    seed: int,
    files: tuple[str, str] = ("the baseline", "the candidate"),
) -> dict[str, Any]:
    from trialscore.results.scorecard import metric_specs
    from trialscore.stats import compare_bayes, compare_clustered, compare_paired

    (spec,) = metric_specs([metric], [k] if k is not None else [1], tau)
    bank_a, bank_b = base.bank(), cand.bank()
    if base.cluster is not None and spec.metric == "bayes":
        raise EvaluationError(
            "--cluster-col clusters the paired comparison; --metric bayes compares posteriors for these "
            "items and has no use for clusters (drop one of the two)"
        )
    if spec.metric == "bayes":
        bayes_result = compare_bayes(bank_a, bank_b, alpha=alpha)
        body = bayes_result.to_dict()
        body.update(
            design="bayes",
            metric="bayes",
            baseline_score=bayes_result.baseline.estimate,
            candidate_score=bayes_result.candidate.estimate,
        )
        return body
    ids_a = base.item[base.n > 0].tolist()
    ids_b = cand.item[cand.n > 0].tolist()
    if base.cluster is not None:
        result = compare_clustered(
            bank_a,
            bank_b,
            _item_clusters(base, cand, files),
            spec.metric,
            spec.k,
            spec.tau,
            ids_baseline=ids_a,
            ids_candidate=ids_b,
            alpha=alpha,
        )
        body = result.to_dict()
        body.update(metric=spec.label, baseline_score=result.baseline, candidate_score=result.candidate)
        return body
    result = compare_paired(
        bank_a,
        bank_b,
        spec.metric,
        spec.k,
        spec.tau,
        ids_baseline=ids_a,
        ids_candidate=ids_b,
        alpha=alpha,
        permutations=permutations,
        seed=seed,
    )
    body = result.to_dict()
    body.update(metric=spec.label, baseline_score=result.baseline, candidate_score=result.candidate)
    return body


def _unpaired_notes(comparisons: Sequence[dict[str, Any]]) -> list[str]:
    """One line per comparison whose runs do not share every item: what was compared, what was left out."""
    notes = []
    for c in comparisons:
        only_a, only_b = c.get("only_in_baseline") or [], c.get("only_in_candidate") or []
        if not (only_a or only_b):
            continue

        def listed(ids: list[Any]) -> str:
            shown = ", ".join(str(item) for item in ids[:5])
            return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")

        parts = [f"{c['label']}: compared the {c['paired_items']} items in both runs"]
        parts.append("(baseline and candidate scores are over those items)")
        if only_a:
            parts.append(f"; {len(only_a)} only in the baseline ({listed(only_a)})")
        if only_b:
            parts.append(f"; {len(only_b)} only in the candidate ({listed(only_b)})")
        notes.append(" ".join(parts[:2]) + "".join(parts[2:]) + ", left out of the pairing")
    return notes


@app.command()
def compare(
    baseline: Annotated[Path, typer.Argument(help="Trial file of the baseline run.")],
    candidate: Annotated[Path, typer.Argument(help="Trial file of the candidate run.")],
    metric: Annotated[
        str,
        typer.Option("--metric", help=f"One metric: {_METRIC_NAMES}."),
    ] = "avg",
    k: Annotated[int | None, typer.Option("--k", help="k of a pass@k-style metric.")] = None,
    tau: TauOpt = 0.5,
    by: ByOpt = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the test.")] = 0.05,
    permutations: Annotated[
        int, typer.Option("--permutations", help="Sign-flip permutations of the extra p-value (0 = skip).")
    ] = 10_000,
    seed: SeedOpt = 0,
    fail_on: Annotated[
        GateOption, typer.Option("--fail-on", help="'regression': exit 1 on a significant regression.")
    ] = GateOption.none,
    item_col: ItemColOpt = None,
    trial_col: TrialColOpt = None,
    pass_col: PassColOpt = None,
    score_col: ScoreColOpt = None,
    verdict_col: VerdictColOpt = None,
    threshold: ThresholdOpt = None,
    skip_invalid: SkipOpt = False,
    errors_policy: ErrorsOpt = ErrorPolicyOption.exclude,
    allow_repeated_trials: RepeatOpt = False,
    cluster_col: ClusterColOpt = None,
    output: FormatOpt = OutputFormat.table,
) -> None:
    """Did the candidate change the score? Paired comparison per group, and a CI gate.

    Example: trialscore compare main.jsonl pr.jsonl --metric pass@k --k 1 --fail-on regression -f markdown
    """
    with _bad_input():
        groups_by = _split(by)
        options = ReadOptions.of(locals())
        base_counts = _read([baseline], groups_by, options)
        cand_counts = _read([candidate], groups_by, options)
        base_groups, cand_groups = _group_map(base_counts), _group_map(cand_counts)
        shared = [key for key in base_groups if key in cand_groups]
        if not shared:
            raise EvaluationError(
                f"baseline and candidate share no group for --by {','.join(groups_by) or '(none)'}: "
                f"baseline has {sorted(g.label for g in base_groups.values())}, "
                f"candidate has {sorted(g.label for g in cand_groups.values())}"
            )
        comparisons = []
        for key in shared:
            body = _compare_groups(
                base_groups[key],
                cand_groups[key],
                metric,
                k,
                tau,
                alpha,
                permutations,
                seed,
                (str(baseline), str(candidate)),
            )
            comparisons.append({"group": dict(key), "label": base_groups[key].label, **body})
    failed = fail_on is GateOption.regression and any(c["verdict"] == "regression" for c in comparisons)
    payload: dict[str, Any] = {
        "command": "compare",
        "version": JSON_VERSION,
        "by": groups_by,
        "comparisons": comparisons,
        "only_in_baseline": [base_groups[key].label for key in base_groups if key not in cand_groups],
        "only_in_candidate": [cand_groups[key].label for key in cand_groups if key not in base_groups],
        "gate": {"fail_on": fail_on.value, "failed": failed},
        "rows": {"baseline": base_counts.stats.to_dict(), "candidate": cand_counts.stats.to_dict()},
    }
    header = ["group", "metric", "baseline", "candidate", "delta", "low", "high", "p", "verdict"]
    rows = []
    for c in comparisons:
        if c["design"] == "bayes":
            interval = (None, None)
            p_text = f"P(better)={c['probability']:.3g}"
        else:
            interval = (c["interval"]["low"], c["interval"]["high"])
            p_text = c["p_value"]
        rows.append(
            [
                c["label"],
                c["metric"],
                c["baseline_score"],
                c["candidate_score"],
                c["delta"],
                *interval,
                p_text,
                c["verdict"],
            ]
        )
    if output is OutputFormat.json:
        _print_json(payload)
    elif output is OutputFormat.csv:
        _print_csv(header, rows)
    elif output is OutputFormat.markdown:
        verdicts = sorted({c["verdict"] for c in comparisons})
        lines = [f"### trialscore compare: {', '.join(verdicts)}", "", _markdown_table(header, rows), ""]
        lines.extend(f"- {note}" for note in _unpaired_notes(comparisons))
        lines.extend(f"- rule: {rule}" for rule in dict.fromkeys(c["rule"] for c in comparisons))
        lines.append(f"- baseline {_rows_line(payload['rows']['baseline'])}")
        lines.append(f"- candidate {_rows_line(payload['rows']['candidate'])}")
        if fail_on is GateOption.regression:
            lines.append(f"- gate: {'FAILED (significant regression)' if failed else 'passed'}")
        typer.echo("\n".join(lines))
    else:
        console.print(_rich_table(f"compare: {baseline} -> {candidate}", header, rows))
        for note in _unpaired_notes(comparisons):
            console.print(f"  {note}", markup=False, highlight=False)
        for rule in dict.fromkeys(c["rule"] for c in comparisons):
            console.print(f"  rule: {rule}", markup=False, highlight=False)
        console.print(f"baseline {_rows_line(payload['rows']['baseline'])}", markup=False, highlight=False)
        console.print(f"candidate {_rows_line(payload['rows']['candidate'])}", markup=False, highlight=False)
    if failed:
        errors.print("gate failed: significant regression", markup=False, highlight=False)
        raise typer.Exit(1)


# ---------------------------------------------------------------------------------------------------------
# rank


def _beat_probability(better: GroupCounts, worse: GroupCounts, spec: Any, items: list[str]) -> float:
    """P(``better`` truly scores above ``worse``): Bayes@N posterior, or the normal approximation
    Phi(delta / SE) of the paired per-item differences."""
    from scipy.special import ndtr

    from trialscore.stats import compare_bayes, compare_paired

    bank_a, bank_b = _aligned_bank(worse, items), _aligned_bank(better, items)
    if spec.metric == "bayes":
        return float(compare_bayes(bank_a, bank_b).probability)
    result = compare_paired(bank_a, bank_b, spec.metric, spec.k, spec.tau, permutations=0)
    if result.se == 0:
        return 1.0 if result.delta > 0 else 0.0 if result.delta < 0 else 0.5
    return float(ndtr(result.delta / result.se))


def _aligned_bank(group: GroupCounts, items: list[str]) -> Bank:
    position = {item: index for index, item in enumerate(group.item.tolist())}
    rows = np.array([position[item] for item in items], dtype=np.int64)
    return Bank.from_counts(group.n[rows], group.c[rows])


@app.command()
def rank(
    files: FilesArg,
    by: Annotated[str, typer.Option("--by", help="Column(s) naming the model, e.g. target.")] = "target",
    metric: Annotated[
        str,
        typer.Option("--metric", help=f"One metric: {_METRIC_NAMES}."),
    ] = "bayes",
    k: Annotated[int | None, typer.Option("--k", help="k of a pass@k-style metric.")] = None,
    tau: TauOpt = 0.5,
    method: Annotated[
        str, typer.Option("--method", help="Ties: competition (1224), dense (1223) or average.")
    ] = "competition",
    tol: Annotated[
        float, typer.Option("--tol", help="Scores within tol of their group's leader tie.")
    ] = 1e-12,
    ci: Annotated[str, typer.Option("--ci", help="Interval method (see score --help).")] = "auto",
    level: LevelOpt = 0.95,
    resamples: ResamplesOpt = 10_000,
    seed: SeedOpt = 0,
    item_col: ItemColOpt = None,
    trial_col: TrialColOpt = None,
    pass_col: PassColOpt = None,
    score_col: ScoreColOpt = None,
    verdict_col: VerdictColOpt = None,
    threshold: ThresholdOpt = None,
    skip_invalid: SkipOpt = False,
    errors_policy: ErrorsOpt = ErrorPolicyOption.exclude,
    allow_repeated_trials: RepeatOpt = False,
    output: FormatOpt = OutputFormat.table,
) -> None:
    """Rank models on their shared items, with intervals and the probability each beats the next.

    Example: trialscore rank runs.parquet --by target --metric bayes --format json
    """
    with _bad_input():
        from trialscore.ranking import rank_models
        from trialscore.results.scorecard import metric_interval, metric_specs

        groups_by = _split(by)
        if not groups_by:
            raise EvaluationError("--by must name the column(s) that identify a model; got none")
        options = ReadOptions.of(locals())
        counts = _read(files, groups_by, options)
        models = list(counts.groups())
        if len(models) < 2:
            raise EvaluationError(f"rank needs at least 2 models; --by {by} gives {len(models)}")
        present = [set(model.item[model.n > 0].tolist()) for model in models]
        items = sorted(set.intersection(*present))
        dropped = len(set.union(*present)) - len(items)
        if len(items) < 2:
            raise EvaluationError(
                f"the models share {len(items)} item(s) with a graded trial; rank needs at least 2"
            )
        (spec,) = metric_specs([metric], [k] if k is not None else [_default_ks(counts)[-1]], tau)
        banks = [_aligned_bank(model, items) for model in models]
        names = [model.label for model in models]
        metric_args: dict[str, Any] = {}
        if spec.k is not None:
            metric_args["k"] = spec.k
        if spec.tau is not None:
            metric_args["tau"] = spec.tau
        ranking = rank_models(banks, spec.metric, tol=tol, method=method, names=names, **metric_args)
        intervals = [metric_interval(bank, spec, ci, level, resamples, seed) for bank in banks]
        order = ranking.order()
        entries: list[dict[str, Any]] = []
        for position, index in enumerate(order):
            beats_next = None
            if position + 1 < len(order):
                beats_next = _beat_probability(models[index], models[order[position + 1]], spec, items)
            entries.append(
                {
                    "rank": ranking.ranks[index],
                    "model": dict(models[index].key),
                    "label": names[index],
                    "score": ranking.scores[index],
                    "interval": intervals[index].to_dict(),
                    "p_beats_next": beats_next,
                }
            )
    payload: dict[str, Any] = {
        "command": "rank",
        "version": JSON_VERSION,
        "by": groups_by,
        "metric": spec.label,
        "ranking": ranking.to_dict(),
        "items": len(items),
        "items_not_shared": dropped,
        "models": entries,
        "rows": counts.stats.to_dict(),
    }
    header = ["rank", "model", spec.label, "low", "high", "P(beats next)"]
    rows = [
        [e["rank"], e["label"], e["score"], e["interval"]["low"], e["interval"]["high"], e["p_beats_next"]]
        for e in entries
    ]
    note = (
        f"{len(items)} shared items ({dropped} not graded for every model left out); "
        f"{intervals[0].level * 100:g}% {intervals[0].method} intervals; ties: {method}"
    )
    if output is OutputFormat.json:
        _print_json(payload)
    elif output is OutputFormat.csv:
        _print_csv(header, rows)
    elif output is OutputFormat.markdown:
        typer.echo(f"{_markdown_table(header, rows)}\n\n{note}\n\n{_rows_line(payload['rows'])}")
    else:
        console.print(_rich_table(f"rank by {spec.label}", header, rows))
        console.print(note, markup=False, highlight=False)
        console.print(_rows_line(payload["rows"]), markup=False, highlight=False)


# ---------------------------------------------------------------------------------------------------------
# plan and schema


@app.command()
def plan(
    delta: Annotated[
        float, typer.Option("--delta", help="Smallest change in pass rate to detect (either direction).")
    ],
    pass_rate: Annotated[
        float | None, typer.Option("--pass-rate", help="Expected pass rate of the baseline.")
    ] = None,
    pilot: Annotated[
        Path | None, typer.Option("--pilot", help="A pilot run's trial file (instead of --pass-rate).")
    ] = None,
    pilot_candidate: Annotated[
        Path | None,
        typer.Option(
            "--pilot-candidate", help="A pilot of the candidate too: a paired pilot (with --pilot)."
        ),
    ] = None,
    trials: Annotated[
        int | None, typer.Option("--trials", help="Trials per item (then: items needed).")
    ] = None,
    items: Annotated[int | None, typer.Option("--items", help="Items (then: trials needed).")] = None,
    between: Annotated[
        float | None, typer.Option("--between", help="Between-item variance of the differences.")
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Target power.")] = 0.8,
    by: ByOpt = None,
    item_col: ItemColOpt = None,
    trial_col: TrialColOpt = None,
    pass_col: PassColOpt = None,
    score_col: ScoreColOpt = None,
    verdict_col: VerdictColOpt = None,
    threshold: ThresholdOpt = None,
    skip_invalid: SkipOpt = False,
    errors_policy: ErrorsOpt = ErrorPolicyOption.exclude,
    allow_repeated_trials: RepeatOpt = False,
    output: FormatOpt = OutputFormat.table,
) -> None:
    """How many items and trials a comparison needs to detect a change of --delta.

    With --pilot (any file score reads) the variances come from the pilot, one plan per --by group.

    Example: trialscore plan --delta 0.05 --pass-rate 0.7 --trials 5
    """
    with _bad_input():
        from trialscore.stats import plan_sample_size

        if pilot_candidate is not None and pilot is None:
            raise EvaluationError("--pilot-candidate needs --pilot (the baseline's pilot)")
        if pilot is None and (by or pilot_candidate):
            raise EvaluationError("--by and --pilot-candidate read a pilot file; give --pilot")
        groups_by = _split(by)
        options = ReadOptions.of(locals())
        pilots: list[tuple[str, Any, Any]] = [("all", None, None)]
        if pilot is not None:
            base = _group_map(_read([pilot], groups_by, options))
            cand = _group_map(_read([pilot_candidate], groups_by, options)) if pilot_candidate else None
            pilots = []
            for key, group in base.items():
                if cand is not None and key not in cand:
                    raise EvaluationError(
                        f"--pilot-candidate has no group {group.label}; it has "
                        f"{sorted(g.label for g in cand.values())}"
                    )
                pilots.append((group.label, group.bank(), None if cand is None else cand[key].bank()))
        plans = [
            (
                label,
                plan_sample_size(
                    delta,
                    pass_rate=pass_rate,
                    pilot=bank,
                    pilot_candidate=candidate_bank,
                    between=between,
                    items=items,
                    trials=trials,
                    alpha=alpha,
                    power=power,
                ),
            )
            for label, bank, candidate_bank in pilots
        ]
    payload: dict[str, Any] = {"command": "plan", "version": JSON_VERSION, "plan": plans[0][1].to_dict()}
    if pilot is not None:
        payload["by"] = groups_by
        payload["plans"] = [{"label": label, **result.to_dict()} for label, result in plans]
    header = ["group", "items", "trials", "power", "mde", "feasible"]
    rows = [
        [label, result.items, result.trials, result.achieved_power, result.mde, result.feasible]
        for label, result in plans
    ]
    if output is OutputFormat.json:
        _print_json(payload)
        return
    if output is OutputFormat.csv:
        _print_csv(header, rows)
        return
    notes = []
    for label, result in plans:
        prefix = f"{label}: " if len(plans) > 1 else ""
        notes += [
            f"{prefix}{result.note}",
            f"{prefix}test: {result.test}",
            f"{prefix}assumptions: {result.source}",
            f"{prefix}variances: {result.variances()}",
        ]
    first = plans[0][1]
    if output is OutputFormat.markdown:
        typer.echo(_markdown_table(header, rows) + "\n\n" + "\n".join(f"- {note}" for note in notes))
        return
    title = f"plan: detect delta={first.delta:g} at alpha={first.alpha:g}, power={first.target_power:g}"
    console.print(_rich_table(title, header, rows))
    for note in notes:
        console.print(note, markup=False, highlight=False)


# ---------------------------------------------------------------------------------------------------------
# track


def _run_dates(files: Sequence[Path], dates: str | None) -> list[date]:
    """One date per run file: ``--dates`` in file order, else each file's modification date."""
    if dates is None:
        return [datetime.fromtimestamp(path.stat().st_mtime).date() for path in files]
    given = _split(dates)
    if len(given) != len(files):
        raise EvaluationError(
            f"--dates must give one date per run file; got {len(given)} dates for {len(files)} files"
        )
    out = []
    for text in given:
        try:
            out.append(date.fromisoformat(text))
        except ValueError as exc:
            raise EvaluationError(f"--dates entries must be ISO dates (YYYY-MM-DD); got {text!r}") from exc
    return out


@app.command()
def track(
    files: Annotated[
        list[Path], typer.Argument(help="One trial file per run, e.g. last week's and today's.")
    ],
    by: Annotated[str, typer.Option("--by", help="Group column of the task category.")] = "category",
    dates: Annotated[
        str | None,
        typer.Option("--dates", help="Comma-separated ISO date of each run file (default: file dates)."),
    ] = None,
    k: Annotated[str, typer.Option("--k", help="Comma-separated k values to report.")] = "1,3",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the trend test.")] = 0.05,
    item_col: ItemColOpt = None,
    trial_col: TrialColOpt = None,
    pass_col: PassColOpt = None,
    verdict_col: VerdictColOpt = None,
    skip_invalid: SkipOpt = False,
    output: FormatOpt = OutputFormat.table,
) -> None:
    """Track pass@k per task category over runs (seed 002): each category's trend and what to do about it.

    The latest run of each category is compared with the run before it on pass@1 per item (paired on
    shared case ids): improving or declining only when the change is significant at --alpha.

    Example: trialscore track week1.jsonl week2.jsonl --by category --dates 2024-01-08,2024-01-15
    """
    with _bad_input():
        from trialscore.tracking import track_category, trend_advice

        history: dict[str, list[tuple[date, dict[object, list[int]]]]] = {}
        for path, when in zip(files, _run_dates(files, dates), strict=True):
            options = ReadOptions(
                item_col, trial_col, pass_col, verdict_col=verdict_col, skip_invalid=skip_invalid
            )
            counts = _read([path], _split(by), options)
            for group in counts.groups():
                name = ", ".join("—" if value is None else str(value) for _, value in group.key) or "all"
                kept = group.n > 0
                runs = {
                    item: [1] * int(c) + [0] * int(n - c)
                    for item, n, c in zip(group.item[kept], group.n[kept], group.c[kept], strict=True)
                }
                history.setdefault(name, []).append((when, runs))
        ks = _ks(k) or [1]
        snapshots = [track_category(name, runs, ks=ks, alpha=alpha) for name, runs in sorted(history.items())]
    advice = [trend_advice(snapshot) for snapshot in snapshots]
    if output is OutputFormat.json:
        _print_json(
            {
                "command": "track",
                "version": JSON_VERSION,
                "categories": [
                    snapshot.to_dict() | {"advice": note.to_dict()}
                    for snapshot, note in zip(snapshots, advice, strict=True)
                ],
            }
        )
        return
    header = [
        "task_category",
        *(f"pass@{value}" for value in ks),
        "samples",
        "trend",
        "delta",
        "p",
        "last_updated",
    ]
    rows = [
        [
            snapshot.task_category,
            *(snapshot.pass_at_k[value] for value in ks),
            snapshot.samples,
            snapshot.trend,
            None if snapshot.comparison is None else snapshot.comparison.delta,
            None if snapshot.comparison is None else snapshot.comparison.p_value,
            snapshot.last_updated.isoformat(),
        ]
        for snapshot in snapshots
    ]
    if output is OutputFormat.csv:
        _print_csv(header, rows)
    elif output is OutputFormat.markdown:
        typer.echo(_markdown_table(header, rows) + "\n\n" + "\n".join(f"- {note.message}" for note in advice))
    else:
        console.print(_rich_table(f"pass@k per {by} over {len(files)} run(s)", header, rows))
        for note in advice:
            console.print(f"  {note.message}", markup=False, highlight=False)


@app.command()
def schema() -> None:
    """Print the JSON schema of a trial record (one line of a trial-record JSONL file).

    Example: trialscore schema > trial-record.schema.json
    """
    from trialscore.results.records import TrialRecord

    _print_json(TrialRecord.model_json_schema())


def main() -> None:
    """Entry point of the ``trialscore`` script."""
    app()
