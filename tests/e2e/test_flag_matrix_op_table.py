"""The op table gives XLA's results whatever flags build the generated C: every
op-table fixture (tests/data/fixtures, the cases test_op_table.py runs) under the
compiler-flag matrix of the corpus (test_flag_matrix_corpus.py: gcc and clang at
-O1, -O2, -O3, -Os and `-O2 -march=native`, with aotc's relaxations undone by
-ftrapping-math -fmath-errno).

Each (case, compiler, flags) is one test: the case is compiled through
`aotc.compile` with those options into a shared library, loaded with cffi, run
with the op table's thread counts and compared with the fixture's XLA outputs by
the op table's own check (FixtureCase.check: its tolerances, NaN, inf and
signed-zero rules). A failure names the case, the compiler, the flags and the
thread count.

The matrix. Every case runs, under 7 of the 10 flag sets: gcc and clang at -O3
(the most aggressive loop optimization and vectorization) and at `-O2
-march=native` (the widest ISA the machine has: AVX-512 where present), plus clang
at -O1, -O2 and -Os. gcc at -O1, -O2 and -Os is left to `pytest --flag-matrix=full`
(all 10 sets, 2,710 tests). Why: the C compiler dominates, one compile per case
and flag set, mostly parsing the runtime and the intrinsics headers, which no
compile can share with another since each generated file is its own translation
unit (so neither one library per flag set nor several files per compiler call
saves much). All 10 sets cost about 1,000 CPU seconds (gcc about 0.42 s a case,
clang 0.25 s), 8.5 minutes on two idle cores on top of a slow step already near
12; these 7 cost about 40% less (615 CPU seconds measured), and the three gcc
sets left out are the ones whose code paths -O3 and -O2 -march=native of the same compiler cover most
closely. The builds go through the e2e ModelCache, compiled ahead in test order
on two worker threads while the main thread runs and compares; each build is
dropped (closed, its directory deleted) once its test is done."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import (FLAG_MATRIX, FLAG_MATRIX_IDS, OP_TABLE_THREADS, ModelCache,
                       user_flag_label, user_flag_options)


def pytest_generate_tests(metafunc):
    """The matrix: gcc at -O1, -O2 and -Os only with `--flag-matrix=full` (see the docstring)."""
    if metafunc.function is not test_op_case_under_user_flags:
        return
    full = metafunc.config.getoption("flag_matrix") == "full"
    pairs = [(p, i) for p, i in zip(FLAG_MATRIX, FLAG_MATRIX_IDS)
             if full or p[0] == "clang" or p[1] in ("O3", "O2-native")]
    metafunc.parametrize("cc,flags", [p for p, _ in pairs], ids=[i for _, i in pairs])


def _builds_ahead(items, module) -> list:
    """(case, options) for this module's selected tests, in test order."""
    ahead = []
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is None or getattr(item, "module", None) is not module:
            continue
        cc, flags = spec.params.get("cc"), spec.params.get("flags")
        case = spec.params.get("op_case")
        if case is not None and cc is not None and shutil.which(cc) is not None:
            ahead.append((case, user_flag_options(cc, flags)))
    return ahead


@pytest.fixture(scope="module")
def flag_models(request, tmp_path_factory):
    try:
        import aotc
        ready = all(hasattr(aotc, a) for a in ("compile", "load", "CompileOptions"))
    except Exception:
        ready = False
    ahead = _builds_ahead(request.session.items, request.module) if ready else []
    cache = ModelCache(tmp_path_factory.mktemp("aotc_flag_matrix"), ahead)
    yield cache
    cache.close()


@pytest.mark.slow
def test_op_case_under_user_flags(op_case, cc, flags, flag_models):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    label = user_flag_label(cc, flags)
    try:
        model = flag_models.take(op_case, user_flag_options(cc, flags))
    except AssertionError as e:
        raise AssertionError(f"[{label}] {e}") from None
    errors = []
    try:
        for threads in OP_TABLE_THREADS:
            model.set_num_threads(threads)
            try:
                op_case.check(model(*op_case.inputs()), label=f"{label} threads={threads}")
            except AssertionError as e:
                errors.append(str(e))
    finally:
        model.close()
        shutil.rmtree(Path(model.path).parent, ignore_errors=True)
    assert not errors, "\n".join(errors)
