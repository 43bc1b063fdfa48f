"""Every corpus case (tests/data/corpus), pre-optimization and XLA-optimized HLO
text and the StableHLO text JAX prints (model.mlir), through `aotc.run` (the path
`aotc run` uses), compared with the XLA:CPU outputs stored beside them: every form for
the host target, and in the slow step one form each (rotating over the cases) for the
generic and the aarch64 (qemu) targets, whose code differs from the host's in the
kernels, not in the front ends. model.mlir and model.hlo matching the same outputs is the round trip
between the two front ends."""
from __future__ import annotations

import pytest

from .conftest import CORE_OPS, STRUCTURAL_OPS, corpus_all_cases, corpus_core_cases, have_aarch64, require_aotc

_AARCH64, _AARCH64_WHY = have_aarch64()

TARGETS = [
    "host",
    "generic",
    pytest.param("aarch64", marks=[
        pytest.mark.aarch64,
        pytest.mark.skipif(not _AARCH64, reason=f"aarch64 cross toolchain unavailable: "
                                                 f"{_AARCH64_WHY}")]),
]


FORMS = ("model.hlo", "model.opt.hlo", "model.mlir")


def pytest_generate_tests(metafunc):
    """(case, target, form): every form on the host; the generic and aarch64 targets one
    form a case, rotating (case i: generic with form i mod 3, aarch64 with form i + 1)."""
    if metafunc.function is not test_corpus_case:
        return
    params = []
    for i, case in enumerate(sorted(corpus_all_cases(), key=lambda c: c.name)):
        for target in TARGETS:
            name = getattr(target, "values", (target,))[0]
            forms = FORMS if name == "host" else (FORMS[(i + (name == "aarch64")) % len(FORMS)],)
            # the other targets' runs (aarch64 under qemu) go to the slow step
            marks = (*getattr(target, "marks", ()), *(() if name == "host" else (pytest.mark.slow,)))
            params += [pytest.param(case, name, form, marks=marks, id=f"{case.name}-{name}-{form}")
                       for form in forms]
    metafunc.parametrize("case,target,form", params)


def test_corpus_case(case, target, form):
    aotc = require_aotc("run")
    outs = aotc.run(str(case.dir / form), config=str(case.cfg_path),
                    inputs=case.input_dict(), target=target)
    case.check(outs, label=f"aotc.run {form} target={target}")


def test_corpus_selection():
    """The selection is not empty and names the core cases we expect."""
    names = {c.name for c in corpus_core_cases()}
    for must in ("op_unary_f32", "op_binary_f32", "op_convert_matrix", "tf_matmul"):
        assert must in names
    for c in corpus_core_cases():
        assert set(c.meta["ops"]) <= CORE_OPS | STRUCTURAL_OPS


# ------------------------------------------------------------------ the oracle itself

@pytest.mark.jax
@pytest.mark.parametrize("form", ["model.hlo", "model.opt.hlo"])
def test_oracle_reproduces_corpus(form):
    """tests/oracle/xla.py gives back the corpus' stored XLA outputs, for the
    pre-optimization text and for the optimized dump (fusion/bitcast rewritten)."""
    from .conftest import CORPUS, list_cases, require_jax

    require_jax()
    from tests.oracle.xla import run_hlo

    checked = 0
    for case in list_cases(CORPUS):
        path = case.dir / form
        if not path.is_file():
            continue
        case.check(run_hlo(path.read_text(), case.inputs()), label=f"oracle {form}")
        checked += 1
    assert checked >= 20


@pytest.mark.jax
def test_oracle_timing_child():
    """time_hlo runs in a single-threaded child process and reports its fields."""
    from .conftest import CORPUS, FixtureCase, require_jax

    require_jax()
    from tests.oracle.xla import time_hlo

    case = FixtureCase(CORPUS / "tf_matmul")
    res = time_hlo(case.model_path.read_text(), case.inputs(), iters=3, min_time_s=0.0)
    assert res["threads"] == 1 and res["iters"] >= 3
    assert 0 < res["min_us"] <= res["median_us"]
