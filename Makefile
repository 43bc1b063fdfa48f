# aotc: the two set-up commands are `make demo` and `make test`.
#
# pip refuses to install into a distribution's own Python (PEP 668: Debian's and Ubuntu's python3
# say "externally-managed-environment"). With such a Python and no virtual environment active,
# the targets create one in $(VENV) and use it; inside a virtual environment, or with a Python pip
# may install into (CI's), they use $(PYTHON) itself.
PYTHON ?= python3
VENV ?= .venv
PY := $(shell $(PYTHON) -c 'import os, sys, sysconfig; \
  managed = sys.prefix == sys.base_prefix and os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")); \
  print("$(VENV)/bin/python" if managed else sys.executable)')
# a running test count, no platform header, the 25 slowest tests at the end (to keep each
# step inside its time budget); with pytest-xdist (a dev dependency) one worker
# per core, tests handed out one by one (a file can hold a large share of a run); the e2e
# builds are shared between the workers, each compiled once by whichever claims it first
PYTEST = $(PY) -m pytest --no-header -o console_output_style=count --durations=25 \
  $(shell $(PY) -c 'import xdist' 2>/dev/null && echo "-n auto --dist load")

.PHONY: install demo test test-slow test-fast fuzz bench bench-models clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV) || { echo "make: cannot create $(VENV): on Debian or Ubuntu, apt-get install python3-venv" >&2; exit 1; }

install: $(if $(filter $(VENV)/bin/python,$(PY)),$(VENV)/bin/python)
	$(PY) -m pip install -q -e '.[dev]'

demo: install
	$(MAKE) -C examples/matmul run PYTHON=$(abspath $(PY)) AOTC="$(abspath $(PY)) -m aotc"

# everything but the heavy tests (marked `slow`: TF models, the compiler-flag matrix over the
# corpus); CI runs those in a second step, `make test-slow`
test: install
	$(PYTEST) -m "not slow"

test-slow: install
	$(PYTEST) -m slow

# no install, stop at the first failure, one dot per test
test-fast:
	$(PY) -m pytest -q -x -m "not slow"

# a longer fuzz run than the suite's: new mutants of every corpus model and config each round
# (tests/fuzz/run.py); failing inputs go to build/fuzz-crashes
FUZZ_ROUNDS ?= 20
fuzz: install
	$(PY) -m tests.fuzz.run --rounds $(FUZZ_ROUNDS) --build

bench: install
	$(PY) benchmarks/bench.py

# whole Keras models (exported on first use into build/models/, not committed) against XLA:CPU
bench-models: install
	$(PYTHON) benchmarks/models.py

clean:
	$(MAKE) -C examples/matmul clean
	rm -rf build .pytest_cache
