"""Every corpus case (tests/data/corpus), pre-optimization and XLA-optimized HLO
text and the StableHLO text JAX prints (model.mlir), through `aotc.run` (the path
`aotc run` uses) for the host, generic and aarch64 (qemu) targets, compared with
the XLA:CPU outputs stored beside them. model.mlir and model.hlo matching the same
outputs is the round trip between the two front ends."""
from __future__ import annotations

import pytest

from .conftest import CORE_OPS, STRUCTURAL_OPS, corpus_core_cases, have_aarch64, require_aotc

_AARCH64, _AARCH64_WHY = have_aarch64()

TARGETS = [
    "host",
    "generic",
    pytest.param("aarch64", marks=[
        pytest.mark.aarch64,
        pytest.mark.skipif(not _AARCH64, reason=f"aarch64 cross toolchain unavailable: "
                                                 f"{_AARCH64_WHY}")]),
]


@pytest.mark.parametrize("form", ["model.hlo", "model.opt.hlo", "model.mlir"])
@pytest.mark.parametrize("target", TARGETS)
def test_corpus_case(corpus_case, target, form):
    aotc = require_aotc("run")
    outs = aotc.run(str(corpus_case.dir / form), config=str(corpus_case.cfg_path),
                    inputs=corpus_case.input_dict(), target=target)
    corpus_case.check(outs, label=f"aotc.run {form} target={target}")


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
