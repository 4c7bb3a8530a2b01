"""The tau-bench and tau2-bench fixture builders (fixtures/tau-bench/make_fixtures.py), for tests that write
files of their own in the tools' formats: tau2-bench#497's counts, tau-bench runs with errored trials."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

MAKER = Path(__file__).parent / "fixtures" / "tau-bench" / "make_fixtures.py"


def tau_fixtures() -> ModuleType:
    """The fixture maker as a module (it is a script beside the fixtures, not a package)."""
    spec = importlib.util.spec_from_file_location("tau_fixtures", MAKER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tau2_497_file(folder: Path, model: str, solved: int, all_errored: int) -> Path:
    """A tau2-bench Results file with tau2-bench#497's counts (the maker's ``tau2_497_results``)."""
    path = folder / f"{model}_banking_knowledge_4trials.json"
    path.write_text(json.dumps(tau_fixtures().tau2_497_results(model, solved, all_errored)))
    return path
