r"""Rank models by their scores (seed 004's ``competition_ranks_from_scores``) or by any estimator.

A higher score is a better rank.  Three conventions for tied models:

===============  ==========================  ======================================
method           ``[.95, .87, .87, .72]``    rank of a model
===============  ==========================  ======================================
``competition``  ``[1, 2, 2, 4]``            1 + number of models in better groups
``dense``        ``[1, 2, 2, 3]``            1 + number of better groups
``average``      ``[1, 2.5, 2.5, 4]``        mean of the positions its group spans
===============  ==========================  ======================================

Ties within a tolerance
-----------------------
Scores within ``tol`` of each other tie, and tie groups are formed against the
group's *leader*, never by chaining: scores are taken best first, the first
score opens a group, every following score within ``tol`` of that leader
joins it, and the first score more than ``tol`` below the leader opens the
next group.  So a group never spans more than ``tol``: with ``tol = 1``,
scores ``3.0, 2.4, 1.8`` rank ``1, 1, 3`` (2.4 is within 1 of 3.0, but 1.8 is
not), whereas chaining neighbours would tie all three although 3.0 and 1.8
differ by 1.2.  With ``tol = 0`` the ranks are exactly those of
:func:`scipy.stats.rankdata` on the negated scores (methods ``min``,
``dense`` and ``average``).

:func:`rank_models` scores each of L models with one estimator of
:mod:`trialscore.core.estimators` and ranks the scores.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_real, check_values
from trialscore._words import did_you_mean
from trialscore.core.bank import Bank
from trialscore.core.estimators import estimator_by_name
from trialscore.core.metrics import MetricLike, resolve_metric
from trialscore.errors import EvaluationError

__all__ = [
    "RANK_METHODS",
    "Ranking",
    "average_ranks_from_scores",
    "competition_ranks_from_scores",
    "dense_ranks_from_scores",
    "rank_models",
]

#: The tie conventions :func:`rank_models` accepts as ``method``.
RANK_METHODS = ("competition", "dense", "average")


def _checked_scores(scores: ArrayLike) -> NDArray[np.float64]:
    """``scores`` as a non-empty 1-D float array of finite numbers."""
    try:
        array = np.asarray(scores)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"scores must be a 1-D sequence of numbers; got {scores!r}") from exc
    if array.ndim != 1:
        raise EvaluationError(
            f"scores must be a 1-D sequence of numbers; got {array.ndim} dimension(s) "
            f"with shape {array.shape}"
        )
    if array.size == 0:
        raise EvaluationError("scores must hold at least one score; got an empty sequence")
    if array.dtype.kind not in "iuf":
        raise EvaluationError(f"scores must hold real numbers; got dtype {array.dtype}: {scores!r}")
    return check_values(array, "scores", 1)


def _checked_tol(tol: object) -> float:
    return check_real(tol, "tol", 0.0)


def _tie_groups(scores: ArrayLike, tol: object) -> tuple[NDArray[np.intp], list[tuple[int, int]]]:
    """Best-first order of the scores and the ``[start, stop)`` slices of that order that tie.

    A group holds every score within ``tol`` of its first (best) score.
    """
    values = _checked_scores(scores)
    tolerance = _checked_tol(tol)
    order = np.argsort(-values, kind="stable")
    ordered = values[order].tolist()
    groups = []
    start = 0
    for position in range(1, len(ordered) + 1):
        if position == len(ordered) or ordered[start] - ordered[position] > tolerance:
            groups.append((start, position))
            start = position
    return order, groups


def competition_ranks_from_scores(scores: ArrayLike, tol: float = 1e-12) -> NDArray[np.int64]:
    r"""Competition ranks ("1224"): a higher score ranks better, tied models share the best rank.

    .. math::

        \text{rank}_i = 1 + \#\{\, j : j \text{ is in a tie group above } i \,\}

    Scores within ``tol`` of their group's leader tie (see the module notes:
    ties compare to the leader, they do not chain).

    Parameters
    ----------
    scores : 1-D sequence of finite real numbers, one per model (in id order)
    tol : float, >= 0; scores this close to their group's leader tie

    Returns
    -------
    numpy.ndarray of int64, the rank of each model in input order

    >>> competition_ranks_from_scores([0.95, 0.87, 0.87, 0.72, 0.65]).tolist()
    [1, 2, 2, 4, 5]
    >>> competition_ranks_from_scores([3.0, 2.4, 1.8], tol=1.0).tolist()
    [1, 1, 3]
    """
    order, groups = _tie_groups(scores, tol)
    ranks = np.empty(order.size, dtype=np.int64)
    for start, stop in groups:
        ranks[order[start:stop]] = start + 1
    return ranks


def dense_ranks_from_scores(scores: ArrayLike, tol: float = 1e-12) -> NDArray[np.int64]:
    r"""Dense ranks ("1223"): one more than the number of better tie groups.

    .. math::

        \text{rank}_i = 1 + \#\{\text{tie groups above } i\}

    >>> dense_ranks_from_scores([0.95, 0.87, 0.87, 0.72, 0.65]).tolist()
    [1, 2, 2, 3, 4]
    """
    order, groups = _tie_groups(scores, tol)
    ranks = np.empty(order.size, dtype=np.int64)
    for group, (start, stop) in enumerate(groups):
        ranks[order[start:stop]] = group + 1
    return ranks


def average_ranks_from_scores(scores: ArrayLike, tol: float = 1e-12) -> NDArray[np.float64]:
    r"""Fractional ranks ("1 2.5 2.5 4"): tied models share the mean of the positions they span.

    A group occupying best-first positions ``s+1 .. t`` gets rank
    :math:`(s + 1 + t) / 2`, so the ranks always sum to :math:`L(L+1)/2`.

    >>> average_ranks_from_scores([0.95, 0.87, 0.87, 0.72, 0.65]).tolist()
    [1.0, 2.5, 2.5, 4.0, 5.0]
    """
    order, groups = _tie_groups(scores, tol)
    ranks = np.empty(order.size, dtype=np.float64)
    for start, stop in groups:
        ranks[order[start:stop]] = (start + 1 + stop) / 2
    return ranks


_RANKERS: dict[str, Callable[[ArrayLike, float], NDArray[Any]]] = {
    "competition": competition_ranks_from_scores,
    "dense": dense_ranks_from_scores,
    "average": average_ranks_from_scores,
}


@dataclass(frozen=True)
class Ranking(Record):
    """Scores and ranks of L models under one metric.

    ``scores[i]`` is model ``i``'s metric value (Bayes@N: the posterior mean
    mu, with its sd in ``sigmas``), ``ranks[i]`` its rank (1 = best) under
    ``method`` with tolerance ``tol``; ``metric`` the metric as given (its name
    when given as a :class:`~trialscore.core.metrics.Metric`).

    >>> rank_models([[[0, 1]], [[1, 1]]], "avg", names=["a", "b"]).to_dict()["ranks"]
    [2, 1]
    """

    metric: str
    metric_args: Mapping[str, object]
    method: str
    tol: float
    scores: tuple[float, ...]
    ranks: tuple[int, ...] | tuple[float, ...]
    names: tuple[str, ...] | None = None
    sigmas: tuple[float, ...] | None = None

    def order(self) -> tuple[int, ...]:
        """Model indices best first (ties keep input order).

        >>> rank_models([[[0, 1]], [[1, 1]], [[0, 0]]], "avg").order()
        (1, 0, 2)
        """
        return tuple(sorted(range(len(self.ranks)), key=lambda model: self.ranks[model]))


def _model_inputs(R: object) -> list[object]:
    """The L per-model inputs of an L x M x N tensor or a list of per-model inputs."""
    if isinstance(R, np.ndarray):
        if R.ndim != 3:
            raise EvaluationError(
                f"R must be an L x M x N tensor (models x items x trials) or a list of per-model "
                f"inputs; got an array with {R.ndim} dimension(s) and shape {R.shape}"
            )
        models = list(R)
    elif isinstance(R, (list, tuple)):
        models = list(R)
    else:
        raise EvaluationError(
            f"R must be an L x M x N tensor (models x items x trials) or a list of per-model "
            f"inputs (matrices, ragged lists or Banks); got {type(R).__name__}"
        )
    if not models:
        raise EvaluationError("R must hold at least one model; got none")
    return models


def _checked_names(names: Sequence[str] | None, models: int) -> tuple[str, ...] | None:
    if names is None:
        return None
    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise EvaluationError(f"names must be a sequence of strings, one per model; got {names!r}")
    if len(names) != models:
        raise EvaluationError(
            f"names must have one entry per model; got {len(names)} names for {models} models"
        )
    if len(set(names)) != len(names):
        repeated = sorted({name for name in names if list(names).count(name) > 1})
        raise EvaluationError(f"names must be unique; got {repeated[0]!r} more than once")
    return tuple(names)


def _checked_metric_args(
    metric: MetricLike, estimator: Callable[..., object], metric_args: dict[str, object]
) -> None:
    signature = inspect.signature(estimator)
    try:
        signature.bind(None, **metric_args)
    except TypeError as exc:
        takes = ", ".join(list(signature.parameters)[1:]) or "no arguments"
        given = ", ".join(metric_args) or "none"
        raise EvaluationError(
            f"metric_args must match the arguments of metric {str(metric)!r} ({takes}); got {given} ({exc})"
        ) from exc


def _item_count(model: object) -> int:
    return model.items if isinstance(model, Bank) else len(model)  # type: ignore[arg-type]


def rank_models(
    R: ArrayLike | Sequence[ArrayLike | Bank],
    metric: MetricLike = "pass@k",
    tol: float = 1e-12,
    method: str = "competition",
    names: Sequence[str] | None = None,
    **metric_args: object,
) -> Ranking:
    r"""Score each of L models with ``metric`` and rank them (higher score = better, unless lower is).

    .. math::

        s_\ell = \text{metric}(R_\ell, \text{**metric\_args}), \qquad
        \text{ranks} = \text{<method>\_ranks\_from\_scores}(s, \text{tol})

    Parameters
    ----------
    R : an L x M x N array (models x items x trials), or a list of L per-model
        inputs, each an M x N matrix, a ragged list of per-item outcome lists
        or a :class:`~trialscore.core.bank.Bank`.
    metric : any metric of the registry, by name, alias or object:
        ``"avg"``, ``"pass@k"``, ``"pass^k"``, ``"g-pass@k_tau"``,
        ``"mg-pass@k"``, ``"maj@k"``, ``"bayes"`` or a Python name such as
        ``"pass_hat_k"``.  Bayes@N models are ranked by the posterior mean mu;
        a metric better lower ranks the lowest score first.
    tol : scores within ``tol`` of their tie group's leader tie.
    method : ``"competition"`` (1224), ``"dense"`` (1223) or ``"average"`` (1 2.5 2.5 4).
    names : optional unique model names, one per model.
    **metric_args : passed to the estimator for every model (``k``, ``tau``, ``w``, ``R0``).

    Rule on items: every model must be scored on the same M items (a score is
    a mean over items, and means over different item sets do not rank models),
    so models with different item counts are an error.  Items are matched by
    position.  The number of trials may differ between models and between
    items; each estimate uses its own ``n`` and ``k`` must fit every item.

    >>> R = [[[1, 1, 0, 1], [0, 0, 0, 1]],   # model 0: 3/4 and 1/4 on two items
    ...      [[1, 1, 1, 1], [0, 0, 0, 0]],   # model 1: 4/4 and 0/4
    ...      [[1, 0, 0, 0], [0, 0, 0, 0]]]   # model 2: 1/4 and 0/4
    >>> ranking = rank_models(R, "pass@k", k=2, names=["a", "b", "c"])
    >>> [round(score, 12) for score in ranking.scores], ranking.ranks
    ([0.75, 0.5, 0.25], (1, 2, 3))
    >>> rank_models(R, "avg").ranks
    (1, 1, 3)
    """
    models = _model_inputs(R)
    _checked_tol(tol)
    checked_names = _checked_names(names, len(models))
    if method not in _RANKERS:
        hint = did_you_mean(method, RANK_METHODS)
        raise EvaluationError(f"method must be one of {', '.join(RANK_METHODS)}; got {method!r}{hint}")
    resolved = resolve_metric(metric)
    posterior = resolved.aggregation == "posterior"
    estimator = estimator_by_name(resolved)
    _checked_metric_args(metric, estimator, metric_args)
    scores: list[float] = []
    sigmas: list[float] = []
    items = None
    for index, model in enumerate(models):
        label = f"R[{index}]" if checked_names is None else f"R[{index}] (model {checked_names[index]!r})"
        try:
            value = estimator(model, **metric_args)
        except EvaluationError as exc:
            raise EvaluationError(f"{label}: {exc}") from exc
        if posterior:
            mu, sigma = cast("tuple[float, float]", value)
            scores.append(mu)
            sigmas.append(sigma)
        else:
            scores.append(float(value))  # type: ignore[arg-type]
        count = _item_count(model)
        if items is None:
            items = count
        elif count != items:
            raise EvaluationError(
                f"every model must be scored on the same items; R[0] has {items} items "
                f"but {label} has {count}"
            )
    ranks = _RANKERS[method](scores if resolved.higher_is_better else [-score for score in scores], tol)
    return Ranking(
        metric=str(metric),
        metric_args=MappingProxyType(dict(metric_args)),
        method=method,
        tol=float(tol),
        scores=tuple(scores),
        ranks=tuple(ranks.tolist()),
        names=checked_names,
        sigmas=tuple(sigmas) if posterior else None,
    )
