"""``trialscore compare``: did the candidate change the score?  Paired per group, and a CI gate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trialscore._words import plural
from trialscore.cli._app import EXIT_GATE_FAILED, EXIT_NOT_JUDGED, app, errors
from trialscore.cli._gates import step_summary
from trialscore.cli._groups import Untested, judge_each
from trialscore.cli._judged import compare_extras
from trialscore.cli._options import (
    JSON_VERSION,
    METRIC_NAMES,
    AllowPartialOpt,
    ByOpt,
    FormatOpt,
    OutputFormat,
    ReadOptions,
    SeedOpt,
    TauOpt,
    bad_input,
    group_map,
    read_together,
    reading_options,
    refuse_partial,
    same_suite,
    split,
)
from trialscore.cli._per_success import needs_detail
from trialscore.cli._render import Change, Report, Section, render
from trialscore.cli._verdicts import gate_line, non_inferior_comparison, ratio_comparison
from trialscore.cli.score import rows_line
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.results.counts import GroupCounts, ItemCounts

__all__ = ["compare"]


class EstimandOption(str, Enum):
    """What the paired test answers (``compare_paired``'s ``estimand``)."""

    population = "population"
    items = "items"


class GateOption(str, Enum):
    """When ``compare`` exits with 1."""

    none = "none"
    regression = "regression"


def _item_clusters(base: GroupCounts, cand: GroupCounts, files: tuple[str, str]) -> dict[object, object]:
    """Item id -> cluster over both runs; an item in two clusters is an error naming both values."""
    assert base.cluster is not None and cand.cluster is not None
    clusters = dict(zip(base.item.tolist(), base.cluster.tolist(), strict=True))
    for item, cluster in zip(cand.item.tolist(), cand.cluster.tolist(), strict=True):
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
    files: tuple[str, str],
    estimand: str = "population",
) -> dict[str, Any]:
    """One group's comparison as its JSON body: Bayes@N, clustered or paired by item."""
    from trialscore.results.scorecard import metric_specs
    from trialscore.stats import compare_bayes, compare_clustered, compare_paired

    (spec,) = metric_specs([metric], [k] if k is not None else [1], tau)
    bank_a, bank_b = base.bank(), cand.bank()
    if spec.metric.aggregation == "posterior":
        if base.cluster is not None:
            raise EvaluationError(
                "--cluster-col clusters the paired comparison; --metric bayes compares posteriors for "
                "these items and has no use for clusters (drop one of the two)"
            )
        bayes_result = compare_bayes(bank_a, bank_b, alpha=alpha)
        body = bayes_result.to_dict()
        body.update(
            design="bayes",
            metric=spec.metric.name,
            baseline_score=bayes_result.baseline.estimate,
            candidate_score=bayes_result.candidate.estimate,
        )
        return body
    ids = {"ids_baseline": base.item[base.n > 0].tolist(), "ids_candidate": cand.item[cand.n > 0].tolist()}
    if base.cluster is not None:
        if estimand != "population":
            raise EvaluationError(
                "--estimand items re-splits each item's trials between the runs; --cluster-col clusters "
                "the population test (drop one of the two)"
            )
        clusters = _item_clusters(base, cand, files)
        result = compare_clustered(
            bank_a, bank_b, clusters, spec.metric, spec.k, spec.tau, alpha=alpha, **ids
        )
    else:
        result = compare_paired(
            bank_a,
            bank_b,
            spec.metric,
            spec.k,
            spec.tau,
            alpha=alpha,
            permutations=permutations,
            seed=seed,
            estimand=estimand,
            **ids,
        )
    body = result.to_dict()
    body.update(metric=spec.label, baseline_score=result.baseline, candidate_score=result.candidate)
    return body


def _listed(ids: Sequence[Any]) -> str:
    shown = ", ".join(str(item) for item in ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _unpaired_notes(comparisons: Sequence[dict[str, Any]]) -> list[str]:
    """One line per comparison whose runs do not share every item: what was compared, what was left out."""
    notes = []
    for c in comparisons:
        only_a, only_b = c.get("only_in_baseline") or [], c.get("only_in_candidate") or []
        if not (only_a or only_b):
            continue
        note = (
            f"{c['label']}: compared the {plural(c['paired_items'], 'item')} in both runs "
            "(baseline and candidate scores are over those items)"
        )
        if only_a:
            note += f"; {len(only_a)} only in the baseline ({_listed(only_a)})"
        if only_b:
            note += f"; {len(only_b)} only in the candidate ({_listed(only_b)})"
        notes.append(note + ", left out of the pairing")
    return notes


@app.command()
@reading_options(graders=True)
def compare(
    baseline: Annotated[Path, typer.Argument(help="Trial file or run folder of the baseline run.")],
    candidate: Annotated[Path, typer.Argument(help="Trial file or run folder of the candidate run.")],
    metric: Annotated[str, typer.Option("--metric", help=f"One metric: {METRIC_NAMES}.")] = "avg",
    k: Annotated[int | None, typer.Option("--k", help="k of a pass@k-style metric.")] = None,
    tau: TauOpt = 0.5,
    by: ByOpt = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the test.")] = 0.05,
    permutations: Annotated[
        int, typer.Option("--permutations", help="Sign-flip permutations of the extra p-value (0 = skip).")
    ] = 10_000,
    seed: SeedOpt = 0,
    estimand: Annotated[
        EstimandOption,
        typer.Option(
            "--estimand",
            help="population: the mean change over items like these (paired t-test); items: did these "
            "items change (re-split permutation test, 0/1 trials, --permutations re-splits).",
        ),
    ] = EstimandOption.population,
    fail_on: Annotated[
        GateOption, typer.Option("--fail-on", help="'regression': exit 1 on a significant regression.")
    ] = GateOption.none,
    non_inferior: Annotated[
        float | None,
        typer.Option(
            "--non-inferior",
            help="MARGIN: is the candidate no worse than the baseline by more than MARGIN (a score's "
            "difference; for a per-success metric a relative margin: no more expensive by more than "
            "MARGIN)? One-sided test at --alpha; a gate: exit 0 only when every group is non-inferior.",
        ),
    ] = None,
    allow_partial: AllowPartialOpt = False,
    human: Annotated[
        list[Path] | None,
        typer.Option(
            "--human",
            help="Human labels of a random sample of the items (one file with a target column, or one file "
            "per run, baseline first): the paired difference by human standards (prediction-powered).",
        ),
    ] = None,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Did the candidate change the score? Paired comparison per group, and a CI gate.

    Example: trialscore compare main.jsonl pr.jsonl --metric pass@k --k 1 --fail-on regression -f markdown
    """
    files = (str(baseline), str(candidate))
    gated = fail_on is GateOption.regression
    with bad_input():
        from trialscore.results.per_success import FIELDS

        groups_by = split(by)
        read = same_suite(read, [baseline, candidate])
        valued = needs_detail([metric])
        inputs = [[baseline], [candidate]]
        base_counts, cand_counts = read_together(inputs, groups_by, read, detail=FIELDS if valued else False)
        if gated or non_inferior is not None:
            gate = "--fail-on regression" if gated else "--non-inferior"
            refuse_partial([base_counts, cand_counts], allow_partial, gate)
        base_groups, cand_groups = group_map(base_counts), group_map(cand_counts)
        shared = [key for key in base_groups if key in cand_groups]
        if not shared:
            raise EvaluationError(
                f"baseline and candidate share no group for --by {','.join(groups_by) or '(none)'}: "
                f"baseline has {sorted(g.label for g in base_groups.values())}, "
                f"candidate has {sorted(g.label for g in cand_groups.values())}"
            )
        judges = {}
        if valued or non_inferior is not None:
            judges = _judges(base_counts, cand_counts, metric, k, tau, alpha, non_inferior)
        judged, untested = judge_each(
            (
                base_groups[key].label,
                dict(key),
                judges[base_groups[key].label]
                if judges
                else partial(
                    _compare_groups,
                    base_groups[key],
                    cand_groups[key],
                    metric,
                    k,
                    tau,
                    alpha,
                    permutations,
                    seed,
                    files,
                    estimand.value,
                ),
            )
            for key in shared
        )
        comparisons = [{"group": dict(group), "label": label, **body} for label, group, body in judged]
        stated = _pass_hat_k_convention(metric, base_counts.errors)
        for body in comparisons:
            body.update(stated)
        extras = compare_extras(baseline, candidate, groups_by, read, human or [], metric, k, 1 - alpha)
    only_in_baseline = [base_groups[key].label for key in base_groups if key not in cand_groups]
    only_in_candidate = [cand_groups[key].label for key in cand_groups if key not in base_groups]
    failed = gated and any(c["verdict"] == "regression" for c in comparisons)
    margin_gate = None if non_inferior is None else gate_line(comparisons, [u.label for u in untested])
    payload: dict[str, Any] = {
        "command": "compare",
        "version": JSON_VERSION,
        "by": groups_by,
        "comparisons": comparisons,
        "not_tested": [u.to_dict() for u in untested],
        "only_in_baseline": only_in_baseline,
        "only_in_candidate": only_in_candidate,
        "gate": {
            "fail_on": fail_on.value,
            "failed": failed,
            "judged": bool(comparisons),
            "not_tested": [u.label for u in untested],
            **(
                {}
                if margin_gate is None
                else {"non_inferior": {"margin": non_inferior, "alpha": alpha, "passed": margin_gate[0]}}
            ),
        },
        "rows": {"baseline": base_counts.stats.to_dict(), "candidate": cand_counts.stats.to_dict()},
        **extras.payload,
    }
    header = ["group", "metric", "baseline", "candidate", "delta", "low", "high", "p", "verdict"]
    rows = []
    for c in comparisons:
        shown = float if c["metric"].endswith("per-success") else Change  # a ratio has no sign
        if c["design"] == "bayes":
            bounds: tuple[Change | float | None, ...] = (None, None)
            p_text = f"P(better)={c['probability']:.3g}"
        else:
            bounds, p_text = (shown(c["interval"]["low"]), shown(c["interval"]["high"])), c["p_value"]
        scores = (c["baseline_score"], c["candidate_score"], shown(c["delta"]))
        rows.append([c["label"], c["metric"], *scores, *bounds, p_text, c["verdict"]])
    rows += [[u.label, *([None] * 7), "not tested"] for u in untested]
    rows += [[label, *([None] * 7), "only in baseline"] for label in only_in_baseline]
    rows += [[label, *([None] * 7), "only in candidate"] for label in only_in_candidate]
    notes = [u.line() for u in untested]
    notes += _unpaired_notes(comparisons)
    notes += [f"{c['label']}: {note}" for c in comparisons for note in c.get("notes", ())]
    notes += [f"rule: {rule}" for rule in dict.fromkeys(c["rule"] for c in comparisons)]
    if stated:
        from trialscore.stats._conventions import convention_line

        notes.append(convention_line(stated["convention"]["estimator"], stated["convention"]["errors"]))
    if only_in_baseline or only_in_candidate:
        notes.append("groups found in one run only are listed, not compared")
    verdicts = ", ".join(
        sorted({c["verdict"] for c in comparisons} | ({"not tested"} if untested else set()))
    )
    footer = [
        f"baseline {files[0]}: {rows_line(payload['rows']['baseline'])}",
        f"candidate {files[1]}: {rows_line(payload['rows']['candidate'])}",
    ]
    if gated:
        footer.append(f"gate: {_gate_line(failed, comparisons, untested)}")
    if margin_gate is not None:
        tests = dict.fromkeys(c["non_inferiority"]["test"] for c in comparisons)
        footer += [f"test: {test}" for test in tests]
        footer.append(
            f"non-inferiority gate (margin {non_inferior:g}, one-sided alpha {alpha:g}): {margin_gate[1]}"
        )
    section = Section(header, rows, title=f"trialscore compare: {verdicts}", notes=notes)
    report = Report(payload, [section, *extras.sections], footer=[*footer, *extras.footer])
    render(report, output)
    with bad_input():
        step_summary(report)
    if failed:
        errors.print("gate failed: significant regression", markup=False, highlight=False)
        raise typer.Exit(EXIT_GATE_FAILED)
    if margin_gate is not None and comparisons and not margin_gate[0]:
        errors.print("gate failed: not shown non-inferior", markup=False, highlight=False)
        raise typer.Exit(EXIT_GATE_FAILED)
    if (gated or margin_gate is not None) and not comparisons:
        errors.print(
            f"gate could not judge: no group could be tested (exit status {EXIT_NOT_JUDGED})",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(EXIT_NOT_JUDGED)


def _pass_hat_k_convention(metric: str, errors: str) -> dict[str, Any]:
    """``{"convention": ...}`` when the metric is pass^k (the unbiased estimator; what errored trials did),
    else nothing: compare pairs the unbiased per-item values (a plug-in's bias changes with the trials an
    item has, so a difference of plug-ins would mix the change with a change of trials)."""
    from trialscore.core.metrics import resolve_metric
    from trialscore.stats._conventions import convention

    if resolve_metric(metric, trial_values=True).name != "pass^k":
        return {}
    return {"convention": convention("unbiased", errors)}


def _gate_line(failed: bool, comparisons: Sequence[dict[str, Any]], untested: Sequence[Untested]) -> str:
    """The gate's result, with the groups it judged and those it could not."""
    if not comparisons:
        return "COULD NOT JUDGE (no group could be tested)"
    judged = f"{plural(len(comparisons), 'group')} judged"
    if untested:
        judged += f"; not tested: {'; '.join(u.label for u in untested)}"
    return f"{'FAILED (significant regression)' if failed else 'passed'} ({judged})"


def _judges(
    base: ItemCounts,
    cand: ItemCounts,
    metric: str,
    k: int | None,
    tau: float,
    alpha: float,
    margin: float | None,
) -> dict[str, Callable[[], dict[str, Any]]]:
    """Each group's judgement (by label) of a per-success metric, or of a score against a margin."""
    from trialscore.results.per_success import group_trials
    from trialscore.results.scorecard import metric_specs

    (spec,) = metric_specs([metric], [k] if k is not None else [1], tau, trial_values=True)
    if spec.metric.needs == "trial values":
        cand_trials = {group.label: group for group in group_trials(cand)}
        return {
            group.label: partial(ratio_comparison, group, cand_trials[group.label], spec, alpha, margin)
            for group in group_trials(base)
            if group.label in cand_trials
        }
    assert margin is not None
    cand_groups = {group.label: group for group in cand.groups()}
    return {
        group.label: partial(non_inferior_comparison, group, cand_groups[group.label], spec, alpha, margin)
        for group in base.groups()
        if group.label in cand_groups
    }
