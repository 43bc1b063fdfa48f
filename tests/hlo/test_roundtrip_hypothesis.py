"""Random well-formed modules survive print -> parse unchanged (hypothesis).

The generator builds IR directly: random shapes (every element type, layouts,
bounded dynamic dims, nested tuples), constants from random bit patterns (so
NaN payloads, -0, infinities and subnormals all occur), elementwise and shape
ops, typed and raw attributes, several computations with calls between them,
header attributes, aliases and stack-frame tables.
"""
from __future__ import annotations

import json
from math import prod

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aotc.frontend import parse_hlo
from aotc.hlo.dtypes import DTYPES
from aotc.hlo.ir import (
    Alias,
    Computation,
    DimLabels,
    Instruction,
    Literal,
    Module,
    PadDim,
    Raw,
    SliceDim,
    StackFrames,
    Window,
    WindowDim,
)
from aotc.hlo.printer import print_literal, print_module, quote_string
from aotc.hlo.shape import ArrayShape, TupleShape

ARRAY_TYPES = sorted(n for n in DTYPES if n != "token")
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,7}", fullmatch=True)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
SMALL = st.integers(-3, 5)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def array_shapes(draw, max_rank=3, max_dim=3, types=ARRAY_TYPES):
    dt = DTYPES[draw(st.sampled_from(types))]
    rank = draw(st.integers(0, max_rank))
    dims = tuple(draw(st.lists(st.integers(0, max_dim), min_size=rank, max_size=rank)))
    layout = draw(st.none() | st.permutations(list(range(rank))).map(tuple))
    dynamic = tuple(draw(st.lists(st.booleans(), min_size=rank, max_size=rank)))
    return ArrayShape(dt, dims, layout, dynamic if any(dynamic) else ())


def shapes(leaves=array_shapes()):
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=3).map(lambda e: TupleShape(tuple(e))),
                        max_leaves=4)


@st.composite
def array_values(draw, shape: ArrayShape):
    dt, n = shape.dtype, prod(shape.dims)
    if dt.kind == "pred":
        flat = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.bool_)
    elif dt.is_subbyte_int:
        w = dt.width
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dt.kind == "sint" else (0, (1 << w) - 1)
        flat = np.array(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), dtype=dt.numpy)
    elif dt.width < dt.bits:  # f4e2m1fn: a code in the low bits of each byte
        codes = draw(st.lists(st.integers(0, (1 << dt.width) - 1), min_size=n, max_size=n))
        flat = np.array(codes, dtype=np.uint8).view(dt.numpy)
    else:
        raw = draw(st.binary(min_size=n * dt.numpy.itemsize, max_size=n * dt.numpy.itemsize))
        flat = np.frombuffer(raw, dtype=dt.numpy).copy()
        if dt.kind in ("float", "complex") and n:
            specials = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.1, 1e-30, 3e38])
            picks = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, len(specials) - 1)), max_size=3))
            with np.errstate(over="ignore", invalid="ignore"):
                for at, which in picks:
                    flat[at] = specials[which].astype(dt.numpy)
    return flat.reshape(shape.dims)


@st.composite
def literals(draw, shape):
    if isinstance(shape, TupleShape):
        if draw(st.integers(0, 4)) == 0:
            return Literal(shape, None)
        return Literal(shape, tuple(draw(literals(e)) for e in shape.elements))
    if draw(st.integers(0, 6)) == 0:
        return Literal(shape, None)
    return Literal(shape, draw(array_values(shape)))


@st.composite
def raw_values(draw):
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return Raw("{op_name=" + quote_string(draw(TEXT)) + f" source_line={draw(st.integers(0, 99))}}}")
    if kind == 1:
        doc = draw(st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4) | st.lists(SMALL, max_size=3),
                                   max_size=3))
        return Raw(json.dumps(doc, separators=(",", ":")))
    if kind == 2:
        return Raw(quote_string(draw(TEXT)))
    if kind == 3:
        return Raw(draw(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)))
    return Raw("{" + ", ".join(f"{k}={quote_string(v)}" for k, v in draw(
        st.dictionaries(st.from_regex(r"[a-z_]{1,5}", fullmatch=True), TEXT, max_size=3)).items()) + "}")


@st.composite
def windows(draw):
    rank = draw(st.integers(0, 3))
    return Window(tuple(
        WindowDim(draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(SMALL), draw(SMALL),
                  draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.booleans()))
        for _ in range(rank)
    ))


@st.composite
def dim_labels(draw):
    spatial = [str(i) for i in range(draw(st.integers(0, 3)))]
    lhs = "".join(draw(st.permutations(["b", "f", *spatial])))
    rhs = "".join(draw(st.permutations(["i", "o", *spatial])))
    out = "".join(draw(st.permutations(["b", "f", *spatial])))
    return DimLabels(lhs, rhs, out)


def attribute_values(callees: list[str]):
    ints = st.lists(st.integers(0, 5), max_size=4).map(tuple)
    choices = {
        "dimensions": ints, "slice_sizes": ints, "lhs_contracting_dims": ints,
        "index": st.integers(0, 9), "feature_group_count": st.integers(1, 4),
        "is_stable": st.booleans(), "indices_are_sorted": st.booleans(),
        "direction": st.sampled_from(["EQ", "NE", "LT", "LE", "GT", "GE"]),
        "type": st.sampled_from(["FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"]),
        "kind": st.sampled_from(["kLoop", "kInput", "kOutput", "kCustom"]),
        "custom_call_target": TEXT, "api_version": TEXT,
        "slice": st.lists(st.builds(SliceDim, SMALL, SMALL, st.integers(1, 3)), max_size=3).map(tuple),
        "padding": st.lists(st.builds(PadDim, SMALL, SMALL, st.integers(0, 3)), max_size=3).map(tuple),
        "window": windows(), "dim_labels": dim_labels(),
        "metadata": raw_values(), "backend_config": raw_values(), "sharding": st.just(Raw("{replicated}")),
        "frontend_attributes": raw_values(), "control-predecessors": st.just(Raw("{%a, %b.1}")),
    }
    if callees:
        choices["to_apply"] = st.sampled_from(callees)
        choices["branch_computations"] = st.lists(st.sampled_from(callees), max_size=3).map(tuple)
    return st.lists(st.sampled_from(sorted(choices)), unique=True, max_size=4).flatmap(
        lambda keys: st.tuples(*(st.tuples(st.just(k), choices[k]) for k in keys)))


OPS = ["add", "multiply", "negate", "abs", "select", "broadcast", "reshape", "transpose", "slice", "pad",
       "tuple", "get-tuple-element", "reduce", "convolution", "compare", "custom-call", "call", "fusion",
       "after-all", "sort", "dot"]


@st.composite
def computations(draw, name: str, callees: list[str], is_entry: bool, pool: list[str]):
    """A computation whose instruction names come from `pool` (8 names no other computation
    uses: instruction names are unique in a module, as the parser makes them)."""
    n_params = draw(st.integers(0, 3))
    n_ops = draw(st.integers(0 if n_params else 1, 5))
    names = pool[:n_params + n_ops]
    numbers = draw(st.permutations(list(range(n_params))))
    instrs: list[Instruction] = []
    for i, name_i in enumerate(names):
        if i < n_params:
            instrs.append(Instruction(name_i, "parameter", draw(shapes()), parameter_number=numbers[i],
                                      attrs=draw(attribute_values([]))))
        elif draw(st.integers(0, 2)) == 0:
            shape = draw(shapes(array_shapes(max_rank=2)))
            instrs.append(Instruction(name_i, "constant", shape, literal=draw(literals(shape)),
                                      attrs=draw(attribute_values(callees))))
        else:
            earlier = [x.name for x in instrs]
            operands = tuple(draw(st.lists(st.sampled_from(earlier), max_size=3))) if earlier else ()
            instrs.append(Instruction(name_i, draw(st.sampled_from(OPS)), draw(shapes()), operands,
                                      draw(attribute_values(callees))))
    instrs = draw(st.permutations(instrs))  # parameters and ROOT anywhere
    root = draw(st.sampled_from([x.name for x in instrs]))
    return Computation(name, tuple(instrs), root, is_entry, draw(st.booleans()))


@st.composite
def stack_frames(draw):
    present = draw(st.lists(st.sampled_from(["FileNames", "FunctionNames", "FileLocations", "StackFrames"]),
                            unique=True, min_size=1))
    rows = st.lists(st.integers(1, 99), max_size=3, unique=True)

    def table(section, value):
        return tuple((n, draw(value)) for n in draw(rows)) if section in present else ()

    braces = st.builds(lambda a, b: f"{{file_name_id={a} line={b}}}", SMALL, SMALL)
    return StackFrames(table("FileNames", TEXT), table("FunctionNames", TEXT), table("FileLocations", braces),
                       table("StackFrames", braces), tuple(present))


@st.composite
def modules(draw):
    count = draw(st.integers(1, 3))
    names = draw(st.lists(NAMES, min_size=count, max_size=count, unique=True))
    entry = draw(st.integers(0, count - 1))
    pool = draw(st.lists(NAMES, min_size=8 * count, max_size=8 * count, unique=True))
    comps = tuple(draw(computations(n, names[:i], i == entry, pool[8 * i:8 * i + 8])) for i, n in enumerate(names))
    layout = draw(st.none() | st.tuples(st.lists(shapes(), max_size=3).map(tuple), shapes()))
    aliases = draw(st.lists(st.builds(Alias, st.lists(st.integers(0, 3), max_size=2).map(tuple), st.integers(0, 3),
                                      st.lists(st.integers(0, 3), max_size=2).map(tuple),
                                      st.sampled_from(["may-alias", "must-alias"])), max_size=2))
    header = draw(st.lists(st.sampled_from([
        ("is_scheduled", Raw("true")), ("alias_passthrough_params", Raw("true")),
        ("allow_spmd_sharding_propagation_to_output", Raw("{true,false}")),
        ("frontend_attributes", Raw('{k="v->{}", x="\\"y"}')),
    ]), unique_by=lambda kv: kv[0], max_size=3))
    return Module(draw(NAMES), comps, names[entry],
                  entry_params=layout[0] if layout else None, entry_result=layout[1] if layout else None,
                  aliases=tuple(aliases), header_attrs=tuple(header),
                  stack_frames=draw(st.none() | stack_frames()))


@pytest.mark.slow  # 150 generated modules: half a minute
@SETTINGS
@given(modules())
def test_print_then_parse_is_identity(module: Module) -> None:
    text = print_module(module)
    parsed = parse_hlo(text, "generated.hlo")
    assert parsed == module, text
    assert print_module(parsed) == text


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_literal_values_round_trip_bit_exactly(data) -> None:
    shape = data.draw(array_shapes(max_rank=2, max_dim=4))
    lit = Literal(shape, data.draw(array_values(shape)))
    text = f"HloModule m\nENTRY e {{\n  ROOT c = {shape.text()} constant({print_literal(lit)})\n}}\n"
    parsed = parse_hlo(text).entry_computation.get("c").literal
    assert parsed.values.dtype == shape.dtype.numpy
    assert parsed.values.tobytes() == lit.values.tobytes(), text
