"""The op table gives XLA's results whatever flags build the generated C: the
op-table fixtures (tests/data/fixtures, the cases test_op_table.py runs) under the
compiler-flag matrix of the corpus (test_flag_matrix_corpus.py: gcc and clang at
-O1, -O2, -O3, -Os and `-O2 -march=native`, with aotc's relaxations undone by
-ftrapping-math -fmath-errno).

Each (case, compiler, flags) is one test: the case is compiled through
`aotc.compile` with those options into a shared library, loaded with cffi, run
with the op table's thread counts and compared with the fixture's XLA outputs by
the op table's own check (FixtureCase.check: its tolerances, NaN, inf and
signed-zero rules). A failure names the case, the compiler, the flags and the
thread count.

The matrix. Every case is built twice, once by gcc and once by clang, and the
five flag sets of each compiler rotate over the cases in name order (case i: gcc
with set i mod 5, clang with set (i + 2) mod 5): every flag set of both compilers
builds a fifth of the cases, the dtype variants of one op (adjacent names) land
on different sets, and no case is left out. `pytest --flag-matrix=full` runs the
whole product (10 builds a case). Why: the C compiler dominates, one compile per
case and flag set (mostly parsing the intrinsics headers, which no compile can
share with another since each generated file is its own translation unit); the
whole product is about 2,800 compiles, more than the rest of the slow step
together, while the defects it is there for (a flag set that changes bits) show
on any case whose code the flag set reaches, and this rotation puts every kernel
family under several sets of each compiler. The builds go through the e2e
ModelCache, compiled ahead in test order on two threads per worker (each build by
one worker only) while the main thread runs and compares; each build is dropped
(closed, its directory deleted) once its test is done."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import (FIXTURES, OP_TABLE_THREADS, ModelCache, flag_matrix_params, list_cases,
                       shared_root, user_flag_label, user_flag_options)


def pytest_generate_tests(metafunc):
    """(case, compiler, flags): the rotation, or the whole product with `--flag-matrix=full`."""
    if metafunc.function is not test_op_case_under_user_flags:
        return
    params, ids = flag_matrix_params(metafunc.config, list_cases(FIXTURES, "op"), 1)
    metafunc.parametrize("flag_case,cc,flags", params, ids=ids)


def _builds_ahead(items, module) -> list:
    """(case, options) for this module's selected tests, in test order."""
    ahead = []
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is None or getattr(item, "module", None) is not module:
            continue
        cc, flags = spec.params.get("cc"), spec.params.get("flags")
        case = spec.params.get("flag_case")
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
    cache = ModelCache(shared_root(tmp_path_factory, "aotc_flag_matrix"), ahead)
    yield cache
    cache.close()


@pytest.mark.slow
def test_op_case_under_user_flags(flag_case, cc, flags, flag_models):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    label = user_flag_label(cc, flags)
    try:
        model = flag_models.take(flag_case, user_flag_options(cc, flags))
    except AssertionError as e:
        raise AssertionError(f"[{label}] {e}") from None
    errors = []
    try:
        for threads in OP_TABLE_THREADS:
            model.set_num_threads(threads)
            try:
                flag_case.check(model(*flag_case.inputs()), label=f"{label} threads={threads}")
            except AssertionError as e:
                errors.append(str(e))
    finally:
        model.close()
        shutil.rmtree(Path(model.path).parent, ignore_errors=True)
    assert not errors, "\n".join(errors)
