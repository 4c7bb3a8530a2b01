"""How a run is spread over workers: the backend, the number of workers, the lease time-to-live."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trialscore._record import Record
from trialscore.errors import EvaluationError

__all__ = ["BACKENDS", "Distribution"]

#: The transports a run's workers can use.
BACKENDS = ("local", "ray")

#: The most local worker processes or Ray actors of one run.
MAX_WORKERS = 1024


@dataclass(frozen=True)
class Distribution(Record):
    """Run the trials on ``workers`` workers of ``backend`` (``local`` processes or ``ray`` actors).

    ``workers`` None means: 2 local processes, or one Ray actor per CPU of the cluster.
    ``address`` is the Ray cluster to join (``ray://host:10001``, ``auto``; None starts a local
    Ray).  A lease lives ``lease_ttl_s`` seconds without a heartbeat of its worker.

    >>> Distribution("local", 4).to_dict()
    {'backend': 'local', 'workers': 4, 'address': None, 'lease_ttl_s': 30.0}
    >>> Distribution("spark")
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: backend must be one of local, ray; got 'spark'
    """

    backend: Literal["local", "ray"] = "local"
    workers: int | None = None
    address: str | None = None
    lease_ttl_s: float = 30.0

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise EvaluationError(f"backend must be one of {', '.join(BACKENDS)}; got {self.backend!r}")
        if self.workers is not None and not 1 <= self.workers <= MAX_WORKERS:
            raise EvaluationError(f"workers must satisfy 1 <= workers <= {MAX_WORKERS}; got {self.workers}")
        if not self.lease_ttl_s > 0:
            raise EvaluationError(f"lease_ttl_s must be > 0; got {self.lease_ttl_s!r}")
        if self.address is not None and self.backend != "ray":
            raise EvaluationError(
                f"address {self.address!r} is for the ray backend; got backend {self.backend!r}"
            )
