"""The seed interfaces, kept as their seeds specify them (see docs/seed-names.md).

* :mod:`~trialscore.compat.scoring`: seed 000, trial → stimulus → skill scores and flakiness;
* :mod:`~trialscore.compat.multi_sample`: seed 001, ``MultiSampleMetric``, ``PassAtK``, ``PassHatK``;
* :mod:`~trialscore.compat.advice`: seed 002, retry strategy, insights, sample-size bands;
* :mod:`~trialscore.compat.tracking`: seed 002, pass@k per task category over time.

They are built on :mod:`trialscore.core` and :mod:`trialscore.stats`; the command line and the
results layer use the advice and tracking from here.
"""
