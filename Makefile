# aotc: the two set-up commands are `make demo` and `make test`.
PYTHON ?= python3

.PHONY: install demo test test-slow test-fast bench clean

install:
	$(PYTHON) -m pip install -q -e '.[dev]'

demo: install
	$(MAKE) -C examples/matmul run

# everything but the heavy tests (marked `slow`: TF models, the compiler-flag matrix over the
# corpus); CI runs those in a second step, `make test-slow`
test: install
	$(PYTHON) -m pytest -q -m "not slow"

test-slow: install
	$(PYTHON) -m pytest -q -m slow

test-fast:
	$(PYTHON) -m pytest -q -x -m "not slow"

bench: install
	$(PYTHON) benchmarks/bench.py

clean:
	$(MAKE) -C examples/matmul clean
	rm -rf build .pytest_cache
