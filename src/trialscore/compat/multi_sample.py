r"""Seed 001's multi-sample metrics: pass@k and pass^k over one case's trial scores.

A :class:`MultiSampleMetric` folds the per-trial :class:`NumericalScore`
results of one eval case into one :class:`NumericalScore`.  Its config holds
``K_VALUE`` (the draw size ``k``, required) and ``NO_OF_TRIALS`` (the number
of trials ``n`` the case was run for; defaults to the number of results
given).  With ``s`` the number of successful trials:

==============  ===============================  ===========================================
class           formula                          meaning
==============  ===============================  ===========================================
``PassAtK``     ``1 - C(n-s, k) / C(n, k)``      at least one of ``k`` drawn trials succeeds
``PassHatK``    ``C(s, k) / C(n, k)``            all ``k`` drawn trials succeed
==============  ===============================  ===========================================

Seed 001 words pass^k as "exactly k randomly sampled trials are successful";
its formula ``C(s,k)/C(n,k)`` is the probability that all ``k`` of the ``k``
drawn trials succeed, which is what is implemented.  The values come from
:func:`trialscore.state_scores` (accurate for any ``n``).

Every rule of seed 001 raises :class:`EvaluationError`: ``k_value <= 0``,
``num_trials <= 0``, a number of results different from ``num_trials`` (more
is an error too), ``k_value > num_trials``; and also a missing ``k_value``, a
non-integer (or bool) ``k_value`` or ``num_trials``, and scores other than
0 and 1.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

from trialscore._record import Record
from trialscore._validate import check_integer, check_real, describe
from trialscore.core.estimators import state_scores
from trialscore.errors import EvaluationError

__all__ = [
    "K_VALUE",
    "NO_OF_TRIALS",
    "EvaluationError",
    "MultiSampleMetric",
    "NumericalScore",
    "PassAtK",
    "PassHatK",
]

#: Config key of the draw size ``k``.
K_VALUE = "k_value"
#: Config key of the number of trials ``n`` each case was run for.
NO_OF_TRIALS = "num_trials"
#: agent_inspect's spelling of :data:`NO_OF_TRIALS`, accepted as an alias.
NO_OF_TRIALS_ALIAS = "no_of_trials"
#: The config keys a multi-sample metric reads; any other key is an error, not silently ignored.
CONFIG_KEYS = (K_VALUE, NO_OF_TRIALS)


@dataclass(frozen=True)
class NumericalScore(Record):
    """A numeric score, per trial (input) or aggregated (output).

    Parameters
    ----------
    score : float
        A finite real number (a success flag 0/1 for the pass metrics' inputs).
    explanation : str, optional
        How the score was obtained.

    >>> NumericalScore(score=1).to_dict()
    {'score': 1.0, 'explanation': None}
    >>> NumericalScore(score=float("nan"))
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: score must be a finite real number; got score=nan
    """

    score: float
    explanation: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", check_real(self.score, "score"))
        if self.explanation is not None and not isinstance(self.explanation, str):
            raise EvaluationError(f"explanation must be a string or None; got {describe(self.explanation)}")


class MultiSampleMetric(ABC):
    """Base class of metrics that fold several trials' scores into one.

    Parameters
    ----------
    config : mapping, optional
        Metric settings (for the pass metrics: ``K_VALUE`` and ``NO_OF_TRIALS``);
        copied and kept read-only.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        if config is not None and not isinstance(config, Mapping):
            raise EvaluationError(f"config must be a mapping or None; got {describe(config)}")
        settings = dict(config or {})
        if NO_OF_TRIALS_ALIAS in settings:  # agent_inspect's spelling
            if NO_OF_TRIALS in settings and settings[NO_OF_TRIALS] != settings[NO_OF_TRIALS_ALIAS]:
                raise EvaluationError(
                    f"config gives {NO_OF_TRIALS}={settings[NO_OF_TRIALS]!r} and its alias "
                    f"{NO_OF_TRIALS_ALIAS}={settings[NO_OF_TRIALS_ALIAS]!r}; give one"
                )
            settings[NO_OF_TRIALS] = settings.pop(NO_OF_TRIALS_ALIAS)
        unknown = sorted(str(key) for key in settings if key not in CONFIG_KEYS)
        if unknown:
            raise EvaluationError(
                f"config keys must be among {', '.join(CONFIG_KEYS)} (or {NO_OF_TRIALS_ALIAS}); "
                f"got unknown {', '.join(repr(key) for key in unknown)}"
            )
        self.config: Mapping[str, Any] = MappingProxyType(settings)

    @abstractmethod
    def compute(self, scorer_results: Sequence[NumericalScore]) -> NumericalScore:
        """Fold one case's per-trial results into one aggregated score."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(config={dict(self.config)!r})"


def _config_integer(config: Mapping[str, Any], key: str) -> int:
    return check_integer(config[key], key, 1)


class _DrawMetric(MultiSampleMetric):
    """A metric of the number of successes among ``k`` trials drawn from ``n`` without replacement."""

    #: Name of the per-state estimator in :func:`trialscore.state_scores`.
    metric: ClassVar[str]
    #: Formula quoted in the result's explanation.
    formula: ClassVar[str]

    def compute(self, scorer_results: Sequence[NumericalScore]) -> NumericalScore:
        """Validate the config and results against seed 001's rules, then estimate.

        Raises
        ------
        EvaluationError
            If ``k_value`` is missing, not an integer or ``<= 0``; if
            ``num_trials`` is not an integer or ``<= 0``; if the number of
            results differs from ``num_trials``; if ``k_value > num_trials``;
            if a result is not a :class:`NumericalScore` with score 0 or 1.
        """
        if self.config.get(K_VALUE) is None:
            raise EvaluationError(
                f"{K_VALUE} must be set in the config (config[K_VALUE]) before evaluation; got none"
            )
        k = _config_integer(self.config, K_VALUE)
        trials = _config_integer(self.config, NO_OF_TRIALS) if NO_OF_TRIALS in self.config else None
        if isinstance(scorer_results, (str, bytes, Mapping)) or not isinstance(scorer_results, Sequence):
            raise EvaluationError(
                f"scorer_results must be a list of NumericalScore; got {describe(scorer_results)}"
            )
        if trials is None:
            if not scorer_results:
                raise EvaluationError("scorer_results must hold at least one NumericalScore; got none")
            trials = len(scorer_results)
        if len(scorer_results) != trials:
            raise EvaluationError(
                f"scorer_results must hold exactly {NO_OF_TRIALS}={trials} results; got {len(scorer_results)}"
            )
        if k > trials:
            raise EvaluationError(
                f"{K_VALUE} must be <= {NO_OF_TRIALS}; got {K_VALUE}={k} with {NO_OF_TRIALS}={trials}"
            )
        successes = 0
        for index, result in enumerate(scorer_results):
            if not isinstance(result, NumericalScore):
                raise EvaluationError(
                    f"scorer_results[{index}] must be a NumericalScore; got {describe(result)} "
                    f"({type(result).__name__})"
                )
            if result.score not in (0.0, 1.0):
                raise EvaluationError(
                    f"scorer_results[{index}].score must be 0 or 1 (a success flag); got {result.score!r}"
                )
            successes += result.score == 1.0
        value = float(state_scores([trials], [successes], self.metric, k=k)[0])
        return NumericalScore(
            score=value,
            explanation=f"{self.formula} with n={trials} trials, s={successes} successes, k={k}",
        )


class PassAtK(_DrawMetric):
    r"""pass@k: the probability that at least one of ``k`` randomly drawn trials succeeds.

    .. math::

        \text{pass@k} = 1 - \frac{\binom{n-s}{k}}{\binom{n}{k}}

    with ``n`` trials (``NO_OF_TRIALS``), ``s`` successes and ``k`` draws
    (``K_VALUE``, required).  Unbiased (Chen et al., 2021).

    Examples
    --------
    Seed 001's example: 2 successes in 5 trials, ``k = 2`` gives
    ``1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7``.

    >>> metric = PassAtK(config={K_VALUE: 2, NO_OF_TRIALS: 5})
    >>> scores = [NumericalScore(score=1), NumericalScore(score=0),
    ...           NumericalScore(score=1), NumericalScore(score=0),
    ...           NumericalScore(score=0)]
    >>> result = metric.compute(scores)
    >>> print(result.score)
    0.7
    """

    metric = "pass@k"
    formula = "pass@k = 1 - C(n-s,k)/C(n,k)"


class PassHatK(_DrawMetric):
    r"""pass^k: the probability that all ``k`` randomly drawn trials succeed.

    .. math::

        \text{pass}^k = \frac{\binom{s}{k}}{\binom{n}{k}}

    Seed 001's prose says "exactly k ... are successful"; of ``k`` drawn
    trials, that is all of them, which is what the formula (implemented here)
    computes.  Unbiased (Yao et al., 2024); for the plug-in ``p**k`` see
    :func:`trialscore.compat.scoring.pass_to_the_k`.

    Examples
    --------
    Seed 001's example: 2 successes in 5 trials, ``k = 2`` gives
    ``C(2,2)/C(5,2) = 1/10``.

    >>> metric = PassHatK(config={K_VALUE: 2, NO_OF_TRIALS: 5})
    >>> scores = [NumericalScore(score=1), NumericalScore(score=1),
    ...           NumericalScore(score=0), NumericalScore(score=0),
    ...           NumericalScore(score=0)]
    >>> result = metric.compute(scores)
    >>> print(result.score)
    0.1
    """

    metric = "pass^k"
    formula = "pass^k = C(s,k)/C(n,k)"
