"""The numeric core: per-item counts and the estimators on them.

* :mod:`~trialscore.core.bank`: validated per-item counts ``(n, c)`` (and item ids);
* :mod:`~trialscore.core.hypergeometric`: accurate hypergeometric probabilities;
* :mod:`~trialscore.core._kernels`: the per-state kernels of the pass family;
* :mod:`~trialscore.core.metrics`: the one metric registry;
* :mod:`~trialscore.core.estimators`: the bank-level estimators (seed 004).

Nothing here imports from the rest of trialscore but :mod:`trialscore.errors`,
:mod:`trialscore._validate` and :mod:`trialscore._record`.
"""

#: The estimators of :mod:`~trialscore.core.estimators` that :mod:`trialscore` exports at its top
#: level, named here (importing this package costs nothing) so that ``import trialscore`` lists them
#: without loading NumPy.
TOP_LEVEL_ESTIMATORS = (
    "PassCurve",
    "avg",
    "bayes",
    "estimator_by_name",
    "g_pass_at_k",
    "g_pass_at_k_tao",
    "g_pass_at_k_tau",
    "item_scores",
    "maj_at_k",
    "mg_pass_at_k",
    "pass_at_k",
    "pass_curve",
    "pass_hat_k",
    "state_scores",
    "tau_threshold",
)
