"""trialscore: score non-deterministic evaluations of LLMs and agents.

Run every eval case many times, then ask the questions that matter with the
estimators the field uses:

>>> import trialscore as ts
>>> R = [[0, 1, 1, 0, 1],
...      [1, 1, 0, 1, 1]]
>>> ts.pass_at_k(R, 2), round(ts.pass_hat_k(R, 2), 12)
(0.95, 0.45)
"""

from importlib import import_module
from typing import Any

# The exceptions and the estimators' names are light and always at hand; everything else loads on
# first use (below), so that importing a submodule (``trialscore.pytest_plugin``, which pytest loads
# in every session of an environment where trialscore is installed) does not import NumPy.
from trialscore.core import TOP_LEVEL_ESTIMATORS
from trialscore.errors import (
    EvaluationError,
    GraderError,
    OptionError,
    OutputError,
    StoreError,
    TargetError,
    TransientTargetError,
    TrialscoreError,
)

_CORE = {
    "trialscore.core.bank": ("Bank", "CategoryBank"),
    "trialscore.core.estimators": TOP_LEVEL_ESTIMATORS,
    "trialscore.core.metrics": ("METRICS", "Metric", "metric_names", "resolve_metric"),
    "trialscore.ranking": (
        "Ranking",
        "average_ranks_from_scores",
        "competition_ranks_from_scores",
        "dense_ranks_from_scores",
        "rank_models",
    ),
}

#: Imported on first use, so ``import trialscore`` (and every CLI start) stays fast.
_LAZY = {
    **{name: (module, name) for module, names in _CORE.items() for name in names},
    "advice": ("trialscore.compat.advice", None),
    "multi_sample": ("trialscore.compat.multi_sample", None),
    "scoring": ("trialscore.compat.scoring", None),
    "stats": ("trialscore.stats", None),
    "tracking": ("trialscore.compat.tracking", None),
    "recommend_retry_strategy": ("trialscore.compat.advice", "recommend_retry_strategy"),
    "bootstrap_interval": ("trialscore.stats", "bootstrap_interval"),
    "compare_paired": ("trialscore.stats", "compare_paired"),
    "compare_unpaired": ("trialscore.stats", "compare_unpaired"),
    "compare_bayes": ("trialscore.stats", "compare_bayes"),
    "beat_probability": ("trialscore.stats", "beat_probability"),
    "plan_sample_size": ("trialscore.stats", "plan_sample_size"),
    "Interval": ("trialscore.stats", "Interval"),
    "read_counts": ("trialscore.results", "read_counts"),
    "list_formats": ("trialscore.results.formats", "list_formats"),
    "TrialRecord": ("trialscore.results", "TrialRecord"),
    "Comparison": ("trialscore.stats", "Comparison"),
    "BayesComparison": ("trialscore.stats", "BayesComparison"),
    "SampleSizePlan": ("trialscore.stats", "SampleSizePlan"),
    "item_interval": ("trialscore.stats", "item_interval"),
    "proportion_interval": ("trialscore.stats", "proportion_interval"),
    "run_suite": ("trialscore.api", "run_suite"),
    "run_suite_async": ("trialscore.api", "run_suite_async"),
    "RunOptions": ("trialscore.runner.options", "RunOptions"),
    "RunReport": ("trialscore.runner.run_report", "RunReport"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'trialscore' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "METRICS",
    "Bank",
    "BayesComparison",
    "CategoryBank",
    "Comparison",
    "EvaluationError",
    "GraderError",
    "Interval",
    "Metric",
    "OptionError",
    "OutputError",
    "PassCurve",
    "Ranking",
    "RunOptions",
    "RunReport",
    "SampleSizePlan",
    "StoreError",
    "TargetError",
    "TransientTargetError",
    "TrialRecord",
    "TrialscoreError",
    "__version__",
    "advice",
    "average_ranks_from_scores",
    "avg",
    "bayes",
    "beat_probability",
    "bootstrap_interval",
    "compare_bayes",
    "compare_paired",
    "compare_unpaired",
    "competition_ranks_from_scores",
    "dense_ranks_from_scores",
    "estimator_by_name",
    "g_pass_at_k",
    "g_pass_at_k_tao",
    "g_pass_at_k_tau",
    "item_interval",
    "item_scores",
    "list_formats",
    "maj_at_k",
    "metric_names",
    "mg_pass_at_k",
    "multi_sample",
    "pass_at_k",
    "pass_curve",
    "pass_hat_k",
    "plan_sample_size",
    "proportion_interval",
    "rank_models",
    "read_counts",
    "recommend_retry_strategy",
    "resolve_metric",
    "run_suite",
    "run_suite_async",
    "scoring",
    "state_scores",
    "stats",
    "tau_threshold",
    "tracking",
]
