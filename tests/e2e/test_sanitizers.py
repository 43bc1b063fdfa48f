"""Every corpus case and every op-table case (tests/data/fixtures), built with
AddressSanitizer and UndefinedBehaviorSanitizer (any report aborts the run) still
reproduces XLA's outputs: generated code has no out-of-bounds access, signed overflow,
bad shift or misaligned load. (The op-family edge cases of tests/ops run the same way
in their slow `asan` variant.)"""
from __future__ import annotations

import shutil

import pytest

from .conftest import FIXTURES, list_cases, require_aotc

SAN = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer")
OP_TABLE = list_cases(FIXTURES)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc with sanitizer runtimes")
@pytest.mark.parametrize("form", ["model.hlo", "model.opt.hlo"])
def test_corpus_case_under_sanitizers(corpus_case, form):
    aotc = require_aotc("run")
    opts = aotc.CompileOptions(cc="gcc", cflags=SAN, opt_level="-O1")
    outs = aotc.run(str(corpus_case.dir / form), config=str(corpus_case.cfg_path),
                    inputs=corpus_case.input_dict(), options=opts)
    corpus_case.check(outs, label=f"ASan+UBSan {form}")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc with sanitizer runtimes")
@pytest.mark.parametrize("case", OP_TABLE, ids=[c.name for c in OP_TABLE])
def test_op_table_case_under_sanitizers(case):
    aotc = require_aotc("run")
    opts = aotc.CompileOptions(cc="gcc", cflags=SAN, opt_level="-O1")
    outs = aotc.run(str(case.model_path), config=str(case.cfg_path), inputs=case.input_dict(), options=opts)
    case.check(outs, label="ASan+UBSan")
