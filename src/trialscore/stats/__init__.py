"""Honest uncertainty: intervals, bootstrap, standard errors, paired comparisons, power.

>>> from trialscore.stats import compare_paired, proportion_interval
>>> print(proportion_interval(7, 10))
0.7 [0.3968, 0.8922] (95% wilson, n=10)
>>> compare_paired([[1, 1, 0], [0, 1, 1], [1, 1, 1]], [[1, 1, 0], [0, 1, 1], [1, 1, 1]]).verdict
'identical'
"""

from trialscore.stats.bootstrap import (
    bootstrap_distribution,
    bootstrap_interval,
    bootstrap_mean_interval,
    resample_histogram,
)
from trialscore.stats.compare import (
    BayesComparison,
    Comparison,
    compare_bayes,
    compare_clustered,
    compare_paired,
    compare_unpaired,
    sign_flip_p_value,
)
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
from trialscore.stats.power import (
    SampleSizePlan,
    design_power,
    detectable_effect,
    items_needed,
    minimum_detectable_effect,
    plan_sample_size,
    trials_needed,
)
from trialscore.stats.variance import (
    ClusteredStandardError,
    VarianceDecomposition,
    clustered_standard_error,
    decompose_variance,
    item_moments,
    standard_error,
)

__all__ = [
    "BayesComparison",
    "ClusteredStandardError",
    "Comparison",
    "Interval",
    "SampleSizePlan",
    "VarianceDecomposition",
    "bayes_interval",
    "bootstrap_distribution",
    "bootstrap_interval",
    "bootstrap_mean_interval",
    "bounded_mean_interval",
    "clustered_interval",
    "clustered_standard_error",
    "compare_bayes",
    "compare_clustered",
    "compare_paired",
    "compare_unpaired",
    "decompose_variance",
    "design_power",
    "detectable_effect",
    "item_interval",
    "item_moments",
    "items_needed",
    "mean_interval",
    "minimum_detectable_effect",
    "normal_quantile",
    "plan_sample_size",
    "proportion_interval",
    "resample_histogram",
    "sign_flip_p_value",
    "standard_error",
    "trials_needed",
]
