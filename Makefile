# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Bytecode is written and reused: where the environment sets PYTHONDONTWRITEBYTECODE, every test
# process (and every CLI subprocess a test starts) would compile the package again and pytest would
# rewrite every test module's asserts again; that was a fifth of the suite's CPU time.
unexport PYTHONDONTWRITEBYTECODE
# The package with its base dependencies (what the demo needs), then the test extra on top.
BASE := $(VENV)/.installed-base
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench clean browser java

$(BASE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

$(STAMP): $(BASE)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job on embedded defaults: run the bundled suite against the seeded
# simulated agent (5 trials a case, no network, no keys), its report written live while
# it goes (demo-output/report.html reloads itself in a browser until the run ends), then
# score its trials.
demo: $(BASE)
	$(BIN)/trialscore run --demo --out demo-output --report demo-output/report.html
	$(BIN)/trialscore score demo-output/trials.jsonl --k 1,3,5

# The browser the report tests drive (headless Chromium, Debian package); idempotent.  Offline
# machines tolerate the failure: the browser tests are then skipped with a loud reason.
browser:
	@test -x /usr/bin/chromium || (apt-get install -y chromium >/dev/null 2>&1 || \
	  (apt-get update >/dev/null 2>&1 && apt-get install -y chromium >/dev/null 2>&1)) || \
	  echo "warning: could not install chromium; the report's browser tests will be skipped"

# Java for the local Spark that runs docs/scale.md's job in the tests (Debian package); idempotent.
java:
	@command -v java >/dev/null 2>&1 || (apt-get install -y default-jre-headless >/dev/null 2>&1 || \
	  (apt-get update >/dev/null 2>&1 && apt-get install -y default-jre-headless >/dev/null 2>&1)) || \
	  echo "warning: could not install Java; the Spark test will fail"

# Lint and types: ruff (rules and format) and mypy (strict on the core and the statistics).
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy src/trialscore

# One test process per core (pytest-xdist), each test file in one process (--dist loadfile: a file's
# module fixtures, such as a simulation's seeded grid or a started server, are built once, not in
# every process that ran one of its tests; the files that use Ray, those that drive Chromium and those
# that import inspect_ai or the judge statistics' reference libraries each go to one process together
# and share it, tests/_units.py); the slow tests included.
test: lint browser java
	$(BIN)/python -m pytest -n auto --dist loadfile

# The quick loop while developing: lint, types, and every test but the slow ones (the seeded
# simulations, and the tests that start processes, servers or a browser or grow big files).
test-fast: lint
	$(BIN)/python -m pytest -n auto --dist loadfile -m "not slow"

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python benchmarks/estimators.py
	$(BIN)/python benchmarks/stats.py
	$(BIN)/python benchmarks/runner.py
	$(BIN)/python benchmarks/isolation.py
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/ingest_formats.py
	$(BIN)/python benchmarks/report.py
	$(BIN)/python benchmarks/adaptive.py
	$(BIN)/python benchmarks/distributed.py
	$(BIN)/python benchmarks/scale.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist demo-output .trialscore
