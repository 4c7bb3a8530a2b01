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

from typing import TYPE_CHECKING, Any

from trialscore._lazy import load

if TYPE_CHECKING:
    from trialscore.stats._agreement import (
        Agreement,
        AgreementInterval,
        JudgeAgreement,
        PairKappa,
        agreement,
        judge_agreement,
    )
    from trialscore.stats._bootstrap import (
        bootstrap_distribution,
        bootstrap_interval,
        bootstrap_mean_interval,
        resample_histogram,
    )
    from trialscore.stats._compare import (
        compare_clustered,
        compare_paired,
        compare_unpaired,
    )
    from trialscore.stats._compare_bayes import BayesComparison, beat_probability, compare_bayes
    from trialscore.stats._comparison import Comparison
    from trialscore.stats._conventions import (
        PassHatK,
        pass_hat_k_stated,
    )
    from trialscore.stats._effort import (
        ItemTotals,
        PerSuccess,
        item_totals,
        per_success,
    )
    from trialscore.stats._front import (
        Front,
        FrontPoint,
        cost_success_front,
    )
    from trialscore.stats._grades import GradeTable, grade_table
    from trialscore.stats._intervals import (
        Interval,
        bayes_interval,
        bounded_mean_interval,
        clustered_interval,
        item_interval,
        mean_interval,
        normal_quantile,
        proportion_interval,
    )
    from trialscore.stats._judge_noise import (
        JudgeBudget,
        JudgeDesign,
        JudgeVariance,
        judge_variance,
        plan_judge_budget,
    )
    from trialscore.stats._noninferiority import (
        NonInferiority,
        cost_non_inferiority,
        non_inferiority,
    )
    from trialscore.stats._noninferiority_plan import (
        NonInferiorityPlan,
        plan_cost_non_inferiority,
        plan_non_inferiority,
    )
    from trialscore.stats._permutation import resplit_test, sign_flip_p_value
    from trialscore.stats._plan import SampleSizePlan, plan_sample_size
    from trialscore.stats._power import (
        design_power,
        detectable_effect,
        items_needed,
        minimum_detectable_effect,
        trials_needed,
    )
    from trialscore.stats._ppi import ppi_interval, ppi_paired_interval
    from trialscore.stats._ratio_compare import PairedRatio, compare_per_success, paired_ratio
    from trialscore.stats._variance import (
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
    "Agreement": "._agreement",
    "AgreementInterval": "._agreement",
    "JudgeAgreement": "._agreement",
    "PairKappa": "._agreement",
    "agreement": "._agreement",
    "judge_agreement": "._agreement",
    "GradeTable": "._grades",
    "grade_table": "._grades",
    "JudgeBudget": "._judge_noise",
    "JudgeDesign": "._judge_noise",
    "JudgeVariance": "._judge_noise",
    "judge_variance": "._judge_noise",
    "plan_judge_budget": "._judge_noise",
    "ppi_interval": "._ppi",
    "ppi_paired_interval": "._ppi",
    "PassHatK": "._conventions",
    "pass_hat_k_stated": "._conventions",
    "ItemTotals": "._effort",
    "item_totals": "._effort",
    "Front": "._front",
    "FrontPoint": "._front",
    "cost_success_front": "._front",
    "bootstrap_distribution": "._bootstrap",
    "bootstrap_interval": "._bootstrap",
    "bootstrap_mean_interval": "._bootstrap",
    "resample_histogram": "._bootstrap",
    "BayesComparison": "._compare_bayes",
    "Comparison": "._comparison",
    "beat_probability": "._compare_bayes",
    "compare_bayes": "._compare_bayes",
    "compare_clustered": "._compare",
    "compare_paired": "._compare",
    "compare_unpaired": "._compare",
    "NonInferiority": "._noninferiority",
    "NonInferiorityPlan": "._noninferiority_plan",
    "cost_non_inferiority": "._noninferiority",
    "PairedRatio": "._ratio_compare",
    "compare_per_success": "._ratio_compare",
    "paired_ratio": "._ratio_compare",
    "non_inferiority": "._noninferiority",
    "plan_cost_non_inferiority": "._noninferiority_plan",
    "plan_non_inferiority": "._noninferiority_plan",
    "PerSuccess": "._effort",
    "per_success": "._effort",
    "resplit_test": "._permutation",
    "sign_flip_p_value": "._permutation",
    "Interval": "._intervals",
    "bayes_interval": "._intervals",
    "bounded_mean_interval": "._intervals",
    "clustered_interval": "._intervals",
    "item_interval": "._intervals",
    "mean_interval": "._intervals",
    "normal_quantile": "._intervals",
    "proportion_interval": "._intervals",
    "SampleSizePlan": "._plan",
    "design_power": "._power",
    "detectable_effect": "._power",
    "items_needed": "._power",
    "minimum_detectable_effect": "._power",
    "plan_sample_size": "._plan",
    "trials_needed": "._power",
    "ClusteredStandardError": "._variance",
    "VarianceDecomposition": "._variance",
    "clustered_standard_error": "._variance",
    "decompose_variance": "._variance",
    "item_moments": "._variance",
    "standard_error": "._variance",
}


def __getattr__(name: str) -> Any:
    return load(__name__, _HOMES, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
