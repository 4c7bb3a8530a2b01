"""The suite's own scheduling (tests/_units.py): the files that share a costly thing are one unit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._units import BROWSER_FILES, LIBRARIES, LIBRARY_FILES, RAY_FILES, UNITS, FilesTogether

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("files", "fixture"), [(RAY_FILES, "local_ray"), (BROWSER_FILES, "open_page")])
def test_every_listed_file_exists_and_takes_the_fixture(files: frozenset[str], fixture: str) -> None:
    for name in sorted(files):
        assert fixture in (ROOT / name).read_text(encoding="utf-8"), name


def test_the_files_that_import_a_heavy_library_are_the_listed_ones() -> None:
    imports = re.compile(rf"^\s*(?:from|import) ({'|'.join(LIBRARIES)})\b", re.M)
    importers = set()
    for path in (ROOT / "tests").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        helpers = set(re.findall(r"^\s*from (?:tests\.\w+\.)?(_\w+) import", text, re.M))  # e.g. _big_eval
        if imports.search(text) or any(
            imports.search(helper.read_text(encoding="utf-8"))
            for helper in path.parent.glob("_*.py")
            if helper.stem in helpers
        ):
            importers.add(path.relative_to(ROOT).as_posix())
    assert {name for name in importers if Path(name).name.startswith("test_")} == LIBRARY_FILES


def test_the_listed_files_are_one_unit_each_set_and_the_rest_keep_their_own() -> None:
    scheduler = FilesTogether.__new__(FilesTogether)  # _split_scope reads nothing of its state
    for unit, (files, _) in UNITS.items():
        assert {scheduler._split_scope(f"{name}::test_a") for name in files} == {unit}
    assert scheduler._split_scope("tests/test_units.py::test_a") == "tests/test_units.py"
