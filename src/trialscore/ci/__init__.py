"""Output for continuous integration: JUnit XML, the GitHub Actions step summary and annotations.

* :mod:`trialscore.ci.junit`: a run as JUnit XML (a testcase per case and target).
* :mod:`trialscore.ci.github`: a Markdown step summary appended to ``$GITHUB_STEP_SUMMARY``,
  and ``::error file=...,line=...::`` workflow commands for cases that failed or regressed.
"""
