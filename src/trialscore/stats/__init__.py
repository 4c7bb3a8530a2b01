"""Honest uncertainty: every interval, test and plan of trialscore, grouped by the question it answers.

How sure are we? (one figure)
    :func:`item_interval` (the default: Wilson on an effective number of items, never zero width),
    :func:`proportion_interval` (Wilson, Clopper-Pearson, Jeffreys, Agresti-Coull: one trial an item),
    :func:`bootstrap_interval` / :func:`bootstrap_distribution` / :func:`resample_histogram` (items
    resampled), :func:`bootstrap_mean_interval`, :func:`mean_interval`, :func:`bounded_mean_interval`
    (graded scores), :func:`bayes_interval` (Bayes@N), :func:`clustered_interval` /
    :func:`clustered_standard_error` / :func:`standard_error` (clusters of items);
    :class:`Interval` is what they return.
Is this change real? (two runs)
    :func:`compare_paired` (paired on items; its verdict read off its interval), :func:`compare_unpaired`,
    :func:`compare_clustered`, :func:`compare_bayes` / :func:`beat_probability`, :func:`resplit_test`
    and :func:`sign_flip_p_value` (permutation tests), :func:`non_inferiority` (is the candidate no
    worse than a margin?); :class:`Comparison`, :class:`BayesComparison`, :class:`NonInferiority`.
How many items and trials? (plans)
    :func:`plan_sample_size`, :func:`items_needed`, :func:`trials_needed`, :func:`design_power`,
    :func:`detectable_effect`, :func:`minimum_detectable_effect`, :func:`plan_non_inferiority` and
    :func:`plan_cost_non_inferiority` (a non-inferiority test's items and trials),
    :func:`plan_judge_budget` (trials against judge repeats); :class:`SampleSizePlan`,
    :class:`NonInferiorityPlan`.
Where does the variance come from?
    :func:`decompose_variance` / :func:`item_moments` (items and trials), :func:`judge_variance`
    (items, trials and judge calls).
Can the judge be trusted? (docs/judges.md)
    :func:`agreement` / :func:`judge_agreement` (kappas, Krippendorff's alpha, PABAK, each with an
    interval), :func:`grade_table` (a long table of grades), :func:`ppi_interval` /
    :func:`ppi_paired_interval` (human labels correcting the judge, the item as the unit).
What does a solved task cost? (docs/agents.md)
    :func:`per_success` / :func:`item_totals` (cost, latency, tokens, steps per success),
    :func:`cost_success_front` (the Pareto front with its probabilities), :func:`paired_ratio` /
    :func:`compare_per_success` (two runs' cost per success, paired by item), :func:`cost_non_inferiority`,
    :func:`pass_hat_k_stated` (pass^k with its convention named).
Helpers
    :func:`normal_quantile`.

Every name loads its module on first use.

>>> from trialscore.stats import compare_paired, proportion_interval
>>> print(proportion_interval(7, 10))
0.7 [0.3968, 0.8922] (95% wilson, n=10)
>>> compare_paired([[1, 1, 0], [0, 1, 1], [1, 1, 1]], [[1, 1, 0], [0, 1, 1], [1, 1, 1]]).verdict
'identical'
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialscore.stats.agreement import (
        Agreement,
        AgreementInterval,
        JudgeAgreement,
        PairKappa,
        agreement,
        judge_agreement,
    )
    from trialscore.stats.bootstrap import (
        bootstrap_distribution,
        bootstrap_interval,
        bootstrap_mean_interval,
        resample_histogram,
    )
    from trialscore.stats.compare import (
        Comparison,
        compare_clustered,
        compare_paired,
        compare_unpaired,
    )
    from trialscore.stats.compare_bayes import BayesComparison, beat_probability, compare_bayes
    from trialscore.stats.conventions import (
        PassHatK,
        pass_hat_k_stated,
    )
    from trialscore.stats.effort import (
        ItemTotals,
        PerSuccess,
        item_totals,
        per_success,
    )
    from trialscore.stats.front import (
        Front,
        FrontPoint,
        cost_success_front,
    )
    from trialscore.stats.grades import GradeTable, grade_table
    from trialscore.stats.intervals import (
        Interval,
        bayes_interval,
        bounded_mean_interval,
        clustered_interval,
        item_interval,
        mean_interval,
        normal_quantile,
        proportion_interval,
    )
    from trialscore.stats.judge_noise import (
        JudgeBudget,
        JudgeDesign,
        JudgeVariance,
        judge_variance,
        plan_judge_budget,
    )
    from trialscore.stats.noninferiority import (
        NonInferiority,
        cost_non_inferiority,
        non_inferiority,
    )
    from trialscore.stats.noninferiority_plan import (
        NonInferiorityPlan,
        plan_cost_non_inferiority,
        plan_non_inferiority,
    )
    from trialscore.stats.permutation import resplit_test, sign_flip_p_value
    from trialscore.stats.plan import SampleSizePlan, plan_sample_size
    from trialscore.stats.power import (
        design_power,
        detectable_effect,
        items_needed,
        minimum_detectable_effect,
        trials_needed,
    )
    from trialscore.stats.ppi import ppi_interval, ppi_paired_interval
    from trialscore.stats.ratio_compare import PairedRatio, compare_per_success, paired_ratio
    from trialscore.stats.variance import (
        ClusteredStandardError,
        VarianceDecomposition,
        clustered_standard_error,
        decompose_variance,
        item_moments,
        standard_error,
    )

__all__ = [
    "Agreement",
    "AgreementInterval",
    "BayesComparison",
    "ClusteredStandardError",
    "Comparison",
    "Front",
    "FrontPoint",
    "GradeTable",
    "Interval",
    "ItemTotals",
    "JudgeAgreement",
    "JudgeBudget",
    "JudgeDesign",
    "JudgeVariance",
    "NonInferiority",
    "NonInferiorityPlan",
    "PairKappa",
    "PairedRatio",
    "PassHatK",
    "PerSuccess",
    "SampleSizePlan",
    "VarianceDecomposition",
    "agreement",
    "bayes_interval",
    "beat_probability",
    "bootstrap_distribution",
    "bootstrap_interval",
    "bootstrap_mean_interval",
    "bounded_mean_interval",
    "clustered_interval",
    "clustered_standard_error",
    "compare_bayes",
    "compare_clustered",
    "compare_paired",
    "compare_per_success",
    "compare_unpaired",
    "cost_non_inferiority",
    "cost_success_front",
    "decompose_variance",
    "design_power",
    "detectable_effect",
    "grade_table",
    "item_interval",
    "item_moments",
    "item_totals",
    "items_needed",
    "judge_agreement",
    "judge_variance",
    "mean_interval",
    "minimum_detectable_effect",
    "non_inferiority",
    "normal_quantile",
    "paired_ratio",
    "pass_hat_k_stated",
    "per_success",
    "plan_cost_non_inferiority",
    "plan_judge_budget",
    "plan_non_inferiority",
    "plan_sample_size",
    "ppi_interval",
    "ppi_paired_interval",
    "proportion_interval",
    "resample_histogram",
    "resplit_test",
    "sign_flip_p_value",
    "standard_error",
    "trials_needed",
]

#: The submodule of each public name: imported on first use, so reading a file and scoring it with
#: the default interval never imports the bootstrap, the comparisons or the power analysis.
_HOMES = {
    "Agreement": "agreement",
    "AgreementInterval": "agreement",
    "JudgeAgreement": "agreement",
    "PairKappa": "agreement",
    "agreement": "agreement",
    "judge_agreement": "agreement",
    "GradeTable": "grades",
    "grade_table": "grades",
    "JudgeBudget": "judge_noise",
    "JudgeDesign": "judge_noise",
    "JudgeVariance": "judge_noise",
    "judge_variance": "judge_noise",
    "plan_judge_budget": "judge_noise",
    "ppi_interval": "ppi",
    "ppi_paired_interval": "ppi",
    "PassHatK": "conventions",
    "pass_hat_k_stated": "conventions",
    "ItemTotals": "effort",
    "item_totals": "effort",
    "Front": "front",
    "FrontPoint": "front",
    "cost_success_front": "front",
    "bootstrap_distribution": "bootstrap",
    "bootstrap_interval": "bootstrap",
    "bootstrap_mean_interval": "bootstrap",
    "resample_histogram": "bootstrap",
    "BayesComparison": "compare_bayes",
    "Comparison": "compare",
    "beat_probability": "compare_bayes",
    "compare_bayes": "compare_bayes",
    "compare_clustered": "compare",
    "compare_paired": "compare",
    "compare_unpaired": "compare",
    "NonInferiority": "noninferiority",
    "NonInferiorityPlan": "noninferiority_plan",
    "cost_non_inferiority": "noninferiority",
    "PairedRatio": "ratio_compare",
    "compare_per_success": "ratio_compare",
    "paired_ratio": "ratio_compare",
    "non_inferiority": "noninferiority",
    "plan_cost_non_inferiority": "noninferiority_plan",
    "plan_non_inferiority": "noninferiority_plan",
    "PerSuccess": "effort",
    "per_success": "effort",
    "resplit_test": "permutation",
    "sign_flip_p_value": "permutation",
    "Interval": "intervals",
    "bayes_interval": "intervals",
    "bounded_mean_interval": "intervals",
    "clustered_interval": "intervals",
    "item_interval": "intervals",
    "mean_interval": "intervals",
    "normal_quantile": "intervals",
    "proportion_interval": "intervals",
    "SampleSizePlan": "plan",
    "design_power": "power",
    "detectable_effect": "power",
    "items_needed": "power",
    "minimum_detectable_effect": "power",
    "plan_sample_size": "plan",
    "trials_needed": "power",
    "ClusteredStandardError": "variance",
    "VarianceDecomposition": "variance",
    "clustered_standard_error": "variance",
    "decompose_variance": "variance",
    "item_moments": "variance",
    "standard_error": "variance",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
