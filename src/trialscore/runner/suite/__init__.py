"""The eval-suite file: a YAML document validated by a Pydantic schema, its cross-field rules and the machine.

A suite names its ``targets`` (what is evaluated), its ``cases`` (inputs, the
expected answer, a category and the graders that judge an output) and its
``execution`` settings (trials, strategy, cost limits, concurrency, timeouts,
retries, seed and pass threshold).  :func:`load_suite` reads a file and reports
*every* problem at once, each as ``file:line: field: rule; got value``, with the
line taken from the YAML node the field came from.

The pieces: :mod:`~trialscore.runner.suite.schema` (the Pydantic models of the parts),
:mod:`~trialscore.runner.suite.rules` (validation piece by piece, the cross-field
rules and the environment checks), :mod:`~trialscore.runner.suite.model` (the validated
:class:`Suite`) and :mod:`~trialscore.runner.suite.locations`
(reading the file with ruamel.yaml, bounds on hostile files, line numbers).

>>> import tempfile, pathlib
>>> text = '''
... name: arithmetic
... targets:
...   - {name: calc, type: command, argv: [bc, -q]}
... cases:
...   - {id: add, input: "2+2", expected: "4", graders: [{type: exact}]}
... execution:
...   trials: {count: 5, strategy: pass_at_k}
... '''
>>> path = pathlib.Path(tempfile.mkdtemp()) / "suite.yaml"
>>> _ = path.write_text(text)
>>> suite = load_suite(path)
>>> suite.name, suite.cases[0].id, suite.settings_for(suite.cases[0]).trials
('arithmetic', 'add', 5)
>>> _ = path.write_text(text.replace("count: 5", "count: 0").replace("exact", "regex, pattern: '(a'"))
>>> load_suite(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: ...suite.yaml: invalid suite (2 problems):
  ...suite.yaml:6: cases[0].graders[0].pattern: not a valid regular expression (missing ), ...
  ...suite.yaml:8: execution.trials.count: Input should be greater than or equal to 1; got 0
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from trialscore.runner.suite import schema
from trialscore.runner.suite.locations import parse_suite, read_suite_text
from trialscore.runner.suite.model import Suite, validated
from trialscore.runner.suite.schema import *  # noqa: F403  (the schema's names are the package's)

#: The schema's names (but :func:`~trialscore.runner.suite.schema.case_settings`, the validation's
#: own helper), the validated suite and its loaders.
__all__ = ["Suite", "load_suite", "suite_from_text"]
__all__ += [name for name in schema.__all__ if name != "case_settings"]


def suite_from_text(
    text: str,
    source: str,
    path: Path | None,
    *,
    environment: bool = True,
    targets: Collection[str] | None = None,
) -> Suite:
    """Validate suite text read from ``path`` (or kept in the run store); see :func:`load_suite`.

    Relative paths in the suite resolve against ``path``'s directory (the working directory
    when ``path`` is None).
    """
    parsed = parse_suite(text, source)
    resolved = path.resolve() if path is not None else None
    return validated(
        parsed.data,
        source,
        resolved.parent if resolved is not None else Path.cwd(),
        text,
        path=resolved,
        locations=parsed.locations,
        duplicates=parsed.duplicates,
        environment=environment,
        targets=targets,
    )


def load_suite(
    path: str | Path, *, environment: bool = True, targets: Collection[str] | None = None
) -> Suite:
    """Read and validate a suite file; every problem is reported as ``file:line: field: rule; got value``.

    Everything that can be checked before a run is: the schema, the rules across fields (unique
    names, judges naming targets, thresholds, regular expressions that compile, schema files) and,
    with ``environment`` (the default), what only this machine can tell: every python callable
    (target or grader) imports and every ``api_key_env`` variable is set (for ``targets`` and the
    judges they need; None = every target).

    Raises
    ------
    EvaluationError
        When the file cannot be read, is not UTF-8 YAML within the bounds, or breaks a rule.
    """
    path = Path(path)
    return suite_from_text(read_suite_text(path), str(path), path, environment=environment, targets=targets)
