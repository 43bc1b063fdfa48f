"""Every corpus case, and a selection of the op table (tests/data/fixtures), built with
AddressSanitizer and UndefinedBehaviorSanitizer (any report aborts the run) still
reproduces XLA's outputs: generated code has no out-of-bounds access, signed overflow,
bad shift or misaligned load. (The op-family edge cases of tests/ops run the same way
in their slow `asan` variant.)"""
from __future__ import annotations

import shutil

import pytest

from .conftest import FIXTURES, list_cases, require_aotc

SAN = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer")
_INTEGER_TYPES = {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}


def op_table_selection() -> list:
    """The op-table cases built with sanitizers: the model cases, every case on integers and
    pred only (shifts, overflow, division and bit counts: where undefined behaviour lives),
    then, greedily in name order, cases until every op and every element type of the table
    is covered. Deterministic; about a third of the table."""
    cases = list_cases(FIXTURES)
    chosen = [c for c in cases if c.meta.get("category") == "model" or set(c.meta["dtypes"]) <= _INTEGER_TYPES]

    def key(c):
        return set(c.meta["ops"]) | {"type " + d for d in c.meta["dtypes"]}

    left = set().union(*(key(c) for c in cases)) - set().union(*(key(c) for c in chosen))
    while left:
        best = max(cases, key=lambda c: len(key(c) & left))  # the first in name order on a tie
        chosen.append(best)
        left -= key(best)
    return sorted(chosen, key=lambda c: c.name)


SELECTION = op_table_selection()


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
@pytest.mark.parametrize("case", SELECTION, ids=[c.name for c in SELECTION])
def test_op_table_case_under_sanitizers(case):
    aotc = require_aotc("run")
    opts = aotc.CompileOptions(cc="gcc", cflags=SAN, opt_level="-O1")
    outs = aotc.run(str(case.model_path), config=str(case.cfg_path), inputs=case.input_dict(), options=opts)
    case.check(outs, label="ASan+UBSan")


def test_op_table_selection_covers_every_op_and_type():
    cases = list_cases(FIXTURES)
    assert {o for c in SELECTION for o in c.meta["ops"]} == {o for c in cases for o in c.meta["ops"]}
    assert {d for c in SELECTION for d in c.meta["dtypes"]} == {d for c in cases for d in c.meta["dtypes"]}
    assert {c.name for c in cases if c.meta.get("category") == "model"} <= {c.name for c in SELECTION}
    assert len(SELECTION) < len(cases)
