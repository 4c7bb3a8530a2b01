"""The numeric core: per-item counts and the estimators on them.

* :mod:`~trialscore.core.bank`: validated per-item counts ``(n, c)`` (and item ids);
* :mod:`~trialscore.core.hypergeometric`: accurate hypergeometric probabilities;
* :mod:`~trialscore.core._kernels`: the per-state kernels of the pass family;
* :mod:`~trialscore.core.metrics`: the one metric registry;
* :mod:`~trialscore.core.estimators`: the bank-level estimators (seed 004).

Nothing here imports from the rest of trialscore but :mod:`trialscore.errors`,
:mod:`trialscore._validate` and :mod:`trialscore._record`.
"""
