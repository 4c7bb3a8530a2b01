"""Running a suite's trials beyond one process: local worker processes or Ray actors, one protocol.

The run's controller (:mod:`.controller`) takes the units from the run's
:class:`~trialscore.runner.session.Session`, which keeps the SQLite store as its only writer, and
leases them to workers (:mod:`.leases`); admission decides at lease time what may start
(per-target caps, cost reserved against the budget: :mod:`.admission`).  Workers rebuild the
suite from its text and run each unit on a session of their own (:mod:`.worker`: the same code
as a single-process run); the transport is N local processes (:mod:`.local`) or Ray actors
(:mod:`.ray_backend`).  Nothing here imports Ray until the Ray backend is chosen.
"""
