"""The top-level API: a curated ``__all__`` whose every name resolves, loaded without the heavy libraries."""

from __future__ import annotations

import subprocess
import sys

import pytest

import trialscore


def test_every_public_name_resolves() -> None:
    for name in trialscore.__all__:
        assert getattr(trialscore, name) is not None, name
    assert set(trialscore.__all__) <= set(dir(trialscore))


def test_result_types_and_the_error_tree_are_public() -> None:
    for name in ("Interval", "Comparison", "BayesComparison", "SampleSizePlan", "Ranking", "Bank"):
        assert isinstance(getattr(trialscore, name), type), name
    assert issubclass(trialscore.EvaluationError, trialscore.TrialscoreError)
    assert issubclass(trialscore.EvaluationError, ValueError)
    for name in ("StoreError", "OutputError", "TargetError", "GraderError"):
        error = getattr(trialscore, name)
        assert issubclass(error, trialscore.TrialscoreError) and not issubclass(error, ValueError)
    assert issubclass(trialscore.TransientTargetError, trialscore.TargetError)


@pytest.mark.slow
def test_importing_the_library_and_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys, trialscore, trialscore.cli; "
        "print(sorted(m for m in ('scipy', 'duckdb', 'pandas', 'pyarrow', 'httpx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_stats_index_names_every_public_function() -> None:
    import trialscore.stats as stats

    functions = [name for name in stats.__all__ if not name[0].isupper()]
    assert [name for name in functions if f":func:`{name}`" not in (stats.__doc__ or "")] == []


def test_the_runner_namespace_is_its_extension_api() -> None:
    import trialscore.runner as runner

    for name in runner.__all__:
        assert getattr(runner, name) is not None, name
    assert {"register_target", "register_grader", "TargetSpecBase", "GraderSpecBase"} <= set(runner.__all__)
