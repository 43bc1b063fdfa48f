"""Printer round trip on real exports: parse(print(parse(t))) == parse(t), and printing is a fixed point."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aotc.frontend import parse_hlo, parse_hlo_file
from aotc.hlo.ir import Literal, Module
from aotc.hlo.printer import print_instruction, print_literal, print_module
from aotc.hlo.shape import TupleShape, array

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = sorted(DATA.glob("corpus/*/model*.hlo")) + sorted(DATA.glob("models/*.hlo"))


def _differences(a: Module, b: Module) -> list[str]:
    """Where two modules differ, to make a failure readable."""
    out = [f for f in ("name", "entry", "entry_params", "entry_result", "aliases", "header_attrs", "stack_frames")
           if getattr(a, f) != getattr(b, f)]
    for ca, cb in zip(a.computations, b.computations):
        if ca != cb:
            out.append(f"computation {ca.name}")
            out.extend(f"  {x}\n  {y}" for x, y in zip(ca.instructions, cb.instructions) if x != y)
    return out


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(DATA)) for p in FILES])
def test_parse_print_parse(path):
    first = parse_hlo_file(path)
    text = print_module(first)
    second = parse_hlo(text, "printed.hlo")
    assert second == first, _differences(first, second)
    assert print_module(second) == text


def test_corpus_is_present():
    assert len(FILES) >= 40


def test_round_trip_can_fail():
    """The equality the round trip relies on sees a one-ulp change in a constant."""
    text = "HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1.5, 2})\n}\n"
    other = text.replace("2}", "2.0000002}")
    assert parse_hlo(text) != parse_hlo(other)
    assert parse_hlo(text) == parse_hlo(text.replace("2}", "2.0}"))


def test_print_forms():
    m = parse_hlo(
        "HloModule m, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n"
        "ENTRY e {\n  p = f32[2]{0} parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT y = f32[5]{0} pad(p, z), padding=1_2_0, metadata={op_name=\"pad\"}\n}\n"
    )
    text = print_module(m)
    assert text.startswith("HloModule m, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n")
    assert "  ROOT %y = f32[5]{0} pad(%p, %z), padding=1_2, metadata={op_name=\"pad\"}\n" in text
    assert print_instruction(m.entry_computation.get("z")) == "%z = f32[] constant(0)"


@pytest.mark.parametrize("dtype,values,expected", [
    ("f32", [1.5, -0.0, np.inf, -np.inf, 0.1, 3.4028235e38, 1e-45], "{1.5, -0, inf, -inf, 0.1, 3.4028235e+38, 1e-45}"),
    ("f64", [0.1, 1e300, 2.0], "{0.1, 1e+300, 2}"),
    ("s32", [-2147483648, 7], "{-2147483648, 7}"),
    ("u64", [2**64 - 1], "{18446744073709551615}"),
    ("pred", [True, False], "{1, 0}"),
])
def test_print_literal_values(dtype, values, expected):
    shape = array(dtype, [len(values)])
    lit = Literal(shape, np.array(values, dtype=shape.dtype.numpy))
    assert print_literal(lit) == expected


def test_print_nans_and_nesting():
    f32 = array("f32", [2, 2])
    bits = np.array([[0x7FC00000, 0xFFC00000], [0x7F800001, 0xFFFFFFFF]], dtype=np.uint32)
    lit = Literal(f32, bits.view(np.float32))
    assert print_literal(lit) == "{ { nan, -nan }, { nan(0x1), -nan(0x7fffff) } }"
    tup = Literal(TupleShape((array("pred", []), f32)), (Literal(array("pred", []), np.array(True)), Literal(f32, None)))
    assert print_literal(tup) == "( true, {...} )"
