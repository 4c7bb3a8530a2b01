"""Plugins: modules that installed packages name in trialscore's entry-point groups.

=========================  ==================================================================
entry-point group          what the named module does when imported
=========================  ==================================================================
``trialscore.targets``     :func:`trialscore.runner.register_target` (a target type)
``trialscore.graders``     :func:`trialscore.runner.register_grader` (a grader type)
``trialscore.formats``     :func:`trialscore.results.formats.register_format` (a log format)
=========================  ==================================================================

A package declares them in its ``pyproject.toml`` (``[project.entry-points."trialscore.graders"]``,
``shout = "my_package.shout_grader"``); see docs/extending.md.  A plugin that cannot be imported
is an error naming it, never skipped in silence.
"""

from __future__ import annotations

from trialscore.errors import EvaluationError

__all__ = ["load_entry_points"]


def load_entry_points(group: str) -> list[str]:
    """Import every module named in the entry-point ``group`` (in name order); return their names.

    >>> load_entry_points("trialscore.no-such-group")
    []
    """
    from importlib.metadata import entry_points

    loaded = []
    for point in sorted(entry_points(group=group), key=lambda point: point.name):
        try:
            point.load()
        except Exception as exc:
            raise EvaluationError(
                f"plugin {point.name!r} ({point.value}, entry point group {group!r}) cannot be loaded: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        loaded.append(point.name)
    return loaded
