"""Calling a target with a per-call timeout, retrying transient errors with exponential backoff and jitter."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

import numpy as np

from trialscore.errors import EvaluationError
from trialscore.runner.offloop import within
from trialscore.runner.targets.base import (
    Target,
    TargetError,
    TargetReply,
    TransientTargetError,
    TrialRequest,
)

__all__ = ["MAX_BACKOFF_S", "RetryPolicy", "backoff_delay", "call_with_retries"]

#: No single wait between attempts is longer than this (seconds), whatever the server asks.
MAX_BACKOFF_S = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """``timeout_s`` per call, up to ``retries`` more attempts, waits starting at ``backoff_s``.

    >>> RetryPolicy(timeout_s=5, retries=-1, backoff_s=0.5)
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: retries must be an integer >= 0; got -1
    """

    timeout_s: float
    retries: int
    backoff_s: float

    def __post_init__(self) -> None:
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise EvaluationError(f"retries must be an integer >= 0; got {self.retries!r}")
        if not self.timeout_s > 0:
            raise EvaluationError(f"timeout_s must be > 0; got {self.timeout_s!r}")
        if not self.backoff_s >= 0:
            raise EvaluationError(f"backoff_s must be >= 0; got {self.backoff_s!r}")


def backoff_delay(attempt: int, base_s: float, jitter: float, retry_after: float | None = None) -> float:
    r"""Seconds to wait before retry number ``attempt + 1``.

    .. math:: d = \min\bigl(D_{max},\ \max(b\,2^{a}(0.5 + u),\ r)\bigr)

    with ``b = base_s``, ``a = attempt`` (0 for the first retry), ``u = jitter`` in
    [0, 1) drawn from the trial's seeded generator (so two runs with one seed wait
    alike, while concurrent trials spread out), ``r`` the server's ``Retry-After``.

    >>> backoff_delay(0, 0.5, 0.5), backoff_delay(3, 0.5, 0.0), backoff_delay(0, 0.5, 0.5, retry_after=7)
    (0.5, 2.0, 7.0)
    """
    delay = base_s * 2.0**attempt * (0.5 + jitter)
    if retry_after is not None:
        delay = max(delay, float(retry_after))
    return min(delay, MAX_BACKOFF_S)


async def call_with_retries(target: Target, request: TrialRequest, policy: RetryPolicy) -> TargetReply:
    """``await target(request)`` within ``policy.timeout_s``, retrying transient errors.

    Transient: a timeout, or :class:`TransientTargetError` (HTTP 429 / 5xx,
    connection failures, a command's exit status 75).  Anything else a target
    raises errors the trial at once.  The jitter comes from
    ``numpy.random.default_rng(request.seed)``.  Retry ``a`` is given ``attempt=a`` (and so
    the seed :func:`~trialscore.runner.seeds.attempt_seed` ``(request.seed, a)``).

    Raises
    ------
    TargetError
        The last error, once the attempts are used up (or at once for a permanent
        error); the message says how many attempts were made.
    """
    rng: np.random.Generator | None = None
    attempts = policy.retries + 1
    for attempt in range(attempts):
        try:
            called = replace(request, attempt=attempt, timeout_s=policy.timeout_s)
            if getattr(target, "timed_by_call", False):  # it keeps the deadline by the call's own clock
                return await target(called)
            return await within(target(called), policy.timeout_s)
        except TimeoutError:
            error = TransientTargetError(
                f"target {target.name!r}: no reply within timeout_s={policy.timeout_s:g}"
            )
        except TransientTargetError as exc:
            error = exc
        except TargetError:
            raise
        except EvaluationError as exc:
            raise TargetError(str(exc)) from exc
        except Exception as exc:
            raise TargetError(f"target {target.name!r}: raised {type(exc).__name__}: {exc}") from exc
        if attempt + 1 == attempts:
            break
        rng = rng or np.random.default_rng(request.seed)
        await asyncio.sleep(backoff_delay(attempt, policy.backoff_s, float(rng.random()), error.retry_after))
    raise TargetError(f"{error} (gave up after {attempts} attempt{'s' if attempts != 1 else ''})") from error
