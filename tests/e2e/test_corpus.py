"""Corpus cases (tests/data/corpus) whose ops are all in aotc's core set, through
`aotc.run` (the path `aotc run` uses) for the host, generic and aarch64 (qemu)
targets, compared with the XLA:CPU outputs stored beside them."""
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


@pytest.mark.parametrize("target", TARGETS)
def test_corpus_case(corpus_case, target):
    aotc = require_aotc("run")
    outs = aotc.run(str(corpus_case.model_path), config=str(corpus_case.cfg_path),
                    inputs=corpus_case.input_dict(), target=target)
    corpus_case.check(outs, label=f"aotc.run target={target}")


def test_corpus_selection():
    """The selection is not empty and names the core cases we expect."""
    names = {c.name for c in corpus_core_cases()}
    for must in ("op_unary_f32", "op_binary_f32", "op_convert_matrix", "tf_matmul"):
        assert must in names
    for c in corpus_core_cases():
        assert set(c.meta["ops"]) <= CORE_OPS | STRUCTURAL_OPS
