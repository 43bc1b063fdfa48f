# aotc: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3

.PHONY: install demo test test-fast bench clean

install:
	$(PYTHON) -m pip install -q -e '.[dev]'

demo: install
	$(MAKE) -C examples/matmul run

test: install
	$(PYTHON) -m pytest -q

test-fast:
	$(PYTHON) -m pytest -q -x -m "not slow"

bench: install
	$(PYTHON) benchmarks/bench.py

clean:
	$(MAKE) -C examples/matmul clean
	rm -rf build .pytest_cache
