"""Running a suite's trials beyond one process: local worker processes or Ray actors, one protocol.

The run's controller (:mod:`.controller`) keeps the SQLite store as its only writer and leases
work units to workers (:mod:`.leases`); admission decides at lease time what may start (per-target
caps, cost reserved against the budget: :mod:`.admission`).  Workers rebuild the suite from its
text and run the ordinary asyncio trial loop (:mod:`.worker`); the transport is N local processes
(:mod:`.local`) or Ray actors (:mod:`.ray_backend`).  Nothing here imports Ray until the Ray
backend is chosen.
"""
