"""The pretty (custom) syntax of each StableHLO op as JAX prints it, read into the generic
shape of `syntax.Op`: `stablehlo.compare LT, %a, %b, FLOAT : ...` gets the attributes
`comparison_direction` and `compare_type` its generic form has, `reduce ... applies
stablehlo.add` gets its region, `while(%x = %init) ... cond {...} do {...}` its two.

`PRETTY` maps op names to readers; an op without one (in pretty form) is a located
"aotc cannot read X yet". Ops JAX prints in the generic form (sort, scatter, gather,
reduce_window, case, ...) need no entry here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .attributes import Enum, Ident, Struct, read_attr_dict, read_attribute, read_conv_dims
from .lexer import describe
from .syntax import Arg, Block, Op, Use
from .types import read_results, read_type

if TYPE_CHECKING:
    from .parser import Parser

TERMINATORS = ("return", "func.return", "stablehlo.return")
DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
COMPARE_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "NOTYPE")

# ops whose pretty form is `operands [attr_dict] : types`
SIMPLE = """abs add and atan2 bitcast_convert cbrt ceil clamp complex convert cosine count_leading_zeros
divide dynamic_update_slice exponential exponential_minus_one floor imag is_finite log log_plus_one
logistic maximum minimum multiply negate not optimization_barrier or popcnt power real remainder
reshape round_nearest_afz round_nearest_even rsqrt select shift_left shift_right_arithmetic
shift_right_logical sign sine sqrt subtract tan tanh tuple xor""".split()


def _op(name: str, pos: int, operands, attrs: dict, result_types, regions=()) -> Op:
    return Op(name, (), tuple(operands), attrs, tuple(regions), tuple(result_types), pos, pos)


def _suffix(p: Parser, n: int) -> tuple:
    """':' followed by `(A, B) -> R`, `A -> R` or `A[, B]` (the last is the result's type,
    all of them for an op with several results)."""
    lx = p.lx
    lx.expect(":", "before the op's type")
    if lx.at("("):
        _type_list(p)
        lx.expect("->", "after the operand types")
        return read_results(lx)
    types = [read_type(lx)]
    while lx.accept(","):
        types.append(read_type(lx))
    if lx.accept("->"):
        return read_results(lx)
    return tuple(types) if n > 1 else (types[-1],)


def _type_list(p: Parser) -> tuple:
    lx = p.lx
    lx.expect("(")
    out = []
    if not lx.accept(")"):
        while True:
            out.append(read_type(lx))
            if lx.accept(")"):
                break
            lx.expect(",", "or ')' in a type list")
    return tuple(out)


def _ints(p: Parser, what: str) -> tuple[int, ...]:
    """'[' [INT (',' INT)*] ']'"""
    lx = p.lx
    lx.expect("[", f"to start {what}")
    out: list[int] = []
    if not lx.accept("]"):
        while True:
            out.append(lx.expect_int(f"an integer in {what}"))
            if lx.accept("]"):
                break
            lx.expect(",", f"or ']' in {what}")
    return tuple(out)


def _keyword(p: Parser, key: str, first: bool = False) -> None:
    """[','] KEY '='"""
    if not first:
        p.lx.expect(",", f"before '{key}'")
    p.lx.expect(key)
    p.lx.expect("=", f"after '{key}'")


def _operands(p: Parser) -> list[Use]:
    return p.uses() if p.lx.peek().kind == "value" else []


def simple(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = _operands(p)
    attrs = p.opt_attr_dict()
    return _op(name, pos, operands, attrs, _suffix(p, n))


def compare(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    tok = lx.expect_kind("name", "a comparison direction (EQ, NE, LT, LE, GT, GE)")
    if tok.text not in DIRECTIONS:
        raise lx.error(f"unknown comparison direction {describe(tok)} (expected one of {', '.join(DIRECTIONS)})",
                       tok.pos)
    lx.expect(",", "after the comparison direction")
    operands = p.uses()
    attrs: dict = {"comparison_direction": Enum("comparison_direction", tok.text)}
    if lx.accept(","):
        ty = lx.expect_kind("name", "a comparison type")
        if ty.text not in COMPARE_TYPES:
            raise lx.error(f"unknown comparison type {describe(ty)} (expected one of {', '.join(COMPARE_TYPES)})",
                           ty.pos)
        attrs["compare_type"] = Enum("comparison_type", ty.text)
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def _with_ints(key: str, attr: str) -> Callable:
    """`%x, KEY = [..]` (broadcast_in_dim, transpose, reverse, dynamic_slice)."""
    def read(p: Parser, name: str, pos: int, n: int) -> Op:
        operands = p.uses()
        _keyword(p, key)
        attrs = {attr: _ints(p, f"'{key}'")}
        attrs.update(p.opt_attr_dict())
        return _op(name, pos, operands, attrs, _suffix(p, n))
    return read


def slice_(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    operands = p.uses()
    lx.expect("[", "to start the slice ranges")
    starts, limits, strides = [], [], []
    if not lx.accept("]"):
        while True:
            starts.append(lx.expect_int("the slice start"))
            lx.expect(":", "after the slice start")
            limits.append(lx.expect_int("the slice limit"))
            strides.append(lx.expect_int("the slice stride") if lx.accept(":") else 1)
            if lx.accept("]"):
                break
            lx.expect(",", "or ']' between slice ranges")
    attrs = {"start_indices": tuple(starts), "limit_indices": tuple(limits), "strides": tuple(strides)}
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def concatenate(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = p.uses()
    _keyword(p, "dim")
    attrs = {"dimension": p.lx.expect_int("the concatenation dimension")}
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def iota(p: Parser, name: str, pos: int, n: int) -> Op:
    _keyword(p, "dim", first=True)
    attrs = {"iota_dimension": p.lx.expect_int("the iota dimension")}
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, [], attrs, _suffix(p, n))


def pad(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = p.uses()
    attrs: dict = {}
    for key, attr in (("low", "edge_padding_low"), ("high", "edge_padding_high"), ("interior", "interior_padding")):
        _keyword(p, key)
        attrs[attr] = _ints(p, f"'{key}'")
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def dot_general(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    operands = p.uses()
    fields: dict = {}
    attrs: dict = {}
    while lx.accept(","):
        key = lx.expect_kind("name", "batching_dims, contracting_dims, precision or algorithm")
        lx.expect("=", f"after '{key.text}'")
        if key.text in ("batching_dims", "contracting_dims"):
            side = "batching" if key.text == "batching_dims" else "contracting"
            fields[f"lhs_{side}_dimensions"] = _ints(p, f"'{key.text}'")
            lx.expect("x", f"between the two sides of '{key.text}'")
            fields[f"rhs_{side}_dimensions"] = _ints(p, f"'{key.text}'")
        elif key.text in ("precision", "algorithm"):
            attrs["precision_config" if key.text == "precision" else "algorithm"] = read_attribute(lx)
        else:
            raise lx.error(f"unknown dot_general field {describe(key)}", key.pos)
    attrs["dot_dimension_numbers"] = Struct("dot", fields)
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def dot(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = p.uses()
    attrs: dict = {}
    if p.lx.accept(","):
        p.lx.expect("precision")
        p.lx.expect("=", "after 'precision'")
        attrs["precision_config"] = read_attribute(p.lx)
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


_WINDOW = {"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
           "rhs_dilate": "rhs_dilation", "reverse": "window_reversal"}


def convolution(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    lx.expect("(", "after 'convolution'")
    operands = p.uses(")")
    lx.expect("dim_numbers")
    lx.expect("=", "after 'dim_numbers'")
    attrs: dict = {"dimension_numbers": read_conv_dims(lx)}
    lx.expect(",", "after the dimension numbers")
    _keyword(p, "window", first=True)
    lx.expect("{", "to start the window")
    if not lx.accept("}"):
        while True:
            key = lx.expect_kind("name", "a window field (stride, pad, lhs_dilate, rhs_dilate, reverse)")
            if key.text not in _WINDOW:
                raise lx.error(f"unknown window field {describe(key)}", key.pos)
            lx.expect("=", f"after '{key.text}'")
            attrs[_WINDOW[key.text]] = read_attribute(lx)
            if lx.accept("}"):
                break
            lx.expect(",", "or '}' between window fields")
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def _init_pairs(p: Parser) -> tuple[list[Use], list[Use]]:
    """'(' VALUE 'init' ':' VALUE ')' (',' ...)*"""
    lx = p.lx
    inputs, inits = [], []
    while True:
        lx.expect("(", "to start a reduce operand")
        inputs.append(p.use())
        lx.expect("init", "after the reduce operand")
        lx.expect(":", "after 'init'")
        inits.append(p.use())
        lx.expect(")", "to close a reduce operand")
        if not (lx.at(",") and lx.text.startswith("(", p.after_comma())):
            return inputs, inits
        lx.next()


def reduce(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    inputs, inits = _init_pairs(p)
    applied = None
    if lx.accept("applies"):
        applied = lx.expect_kind("name", "the op a reduction applies")
    lx.expect("across", "in a reduce")
    _keyword(p, "dimensions", first=True)
    attrs: dict = {"dimensions": _ints(p, "'dimensions'")}
    attrs.update(p.opt_attr_dict())
    lx.expect(":", "before the reduce's type")
    operand_types = _type_list(p)
    lx.expect("->", "after the operand types")
    results = read_results(lx)
    if applied is not None:
        body = _applied_body(applied.text, applied.pos, operand_types[len(inputs):])
    else:
        lx.expect("reducer", "or 'applies' in a reduce")
        firsts, seconds = [], []
        for _ in inputs:
            lx.expect("(", "to start a pair of reducer arguments")
            firsts.append(p.arg())
            lx.expect(",", "between reducer arguments")
            seconds.append(p.arg())
            lx.expect(")", "to close a pair of reducer arguments")
        body = p.region(tuple(firsts + seconds))
    return _op(name, pos, inputs + inits, attrs, results, (body,))


def _applied_body(op_name: str, pos: int, init_types: tuple) -> Block:
    """The region of `applies OP`: (lhs..., rhs...) -> OP(lhs_i, rhs_i) for each operand."""
    n = len(init_types)
    args = tuple(Arg(f"%lhs{i}", t, pos) for i, t in enumerate(init_types)) + \
        tuple(Arg(f"%rhs{i}", t, pos) for i, t in enumerate(init_types))
    ops = [Op(op_name, (f"%applied{i}",), (Use(f"%lhs{i}", pos), Use(f"%rhs{i}", pos)), {}, (), (init_types[i],),
              pos, pos, str(i)) for i in range(n)]
    ops.append(Op("stablehlo.return", (), tuple(Use(f"%applied{i}", pos) for i in range(n)), {}, (), (), pos, pos))
    return Block(args, ops, pos)


def while_(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    lx.expect("(", "after 'stablehlo.while'")
    keys: list = []
    inits: list[Use] = []
    if not lx.accept(")"):
        while True:
            tok = lx.expect_kind("value", "a loop variable such as %iterArg")
            lx.expect("=", "after the loop variable")
            keys.append(tok)
            inits.append(p.use())
            if lx.accept(")"):
                break
            lx.expect(",", "or ')' between loop variables")
    lx.expect(":", "before the loop variable types")
    types = [read_type(lx)] if keys else []
    while keys and lx.accept(","):
        types.append(read_type(lx))
    if len(types) != len(keys):
        raise lx.error(f"while has {len(keys)} loop variable{'s' if len(keys) != 1 else ''} but "
                       f"{len(types)} type{'s' if len(types) != 1 else ''}", pos)
    attrs: dict = {}
    if lx.accept("attributes"):
        lx.expect("{", "after 'attributes'")
        attrs = read_attr_dict(lx)
    args = tuple(Arg(k.text, t, k.pos) for k, t in zip(keys, types))
    lx.expect("cond", "before the loop condition")
    cond = p.region(args)
    lx.expect("do", "before the loop body")
    body = p.region(args)
    return _op(name, pos, inits, attrs, types, (cond, body))


def constant(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    attrs = p.opt_attr_dict()
    tok = lx.peek()
    value = read_attribute(lx)
    if not hasattr(value, "shape") or not hasattr(value, "value"):
        raise lx.error(f"expected a dense literal and its type, found {describe(tok)}", tok.pos)
    attrs["value"] = value
    return _op(name, pos, [], attrs, (value.shape,))


def call(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    sym = lx.expect_kind("symbol", "the called function such as @f")
    lx.expect("(", "after the called function")
    operands = p.uses(")")
    attrs = {"callee": sym.text[1:].strip('"')}
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def top_k(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    lx.expect("(", "after 'chlo.top_k'")
    operands = p.uses()
    _keyword(p, "k")
    attrs: dict = {"k": lx.expect_int("k")}
    if lx.accept(","):
        lx.expect("largest")
        lx.expect("=", "after 'largest'")
        attrs["largest"] = read_attribute(lx)
    lx.expect(")", "to close chlo.top_k")
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def return_(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = _operands(p)
    if operands:
        p.opt_attr_dict()
        p.lx.expect(":", "before the returned types")
        read_type(p.lx)
        while p.lx.accept(","):
            read_type(p.lx)
    return _op(name, pos, operands, {}, ())


def get_tuple_element(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = p.uses()
    p.lx.expect("[", "before the tuple index")
    attrs = {"index": p.lx.expect_int("a tuple index")}
    p.lx.expect("]", "after the tuple index")
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def reduce_precision(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = p.uses()
    _keyword(p, "format")
    tok = p.lx.expect_kind("name", "a format such as e8m7")
    attrs = {"format": Ident(tok.text)}
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


# CHLO ops with no HLO opcode, written like the elementwise ops (chlo.py reads them)
CHLO_OPS = ("chlo.acos", "chlo.acosh", "chlo.asin", "chlo.asinh", "chlo.atan", "chlo.atanh", "chlo.bessel_i1e",
            "chlo.cosh", "chlo.digamma", "chlo.erf_inv", "chlo.erfc", "chlo.lgamma", "chlo.next_after",
            "chlo.polygamma", "chlo.sinh", "chlo.square", "chlo.zeta")

PRETTY: dict[str, Callable] = {
    **{f"stablehlo.{n}": simple for n in SIMPLE},
    "chlo.erf": simple,
    **{name: simple for name in CHLO_OPS},
    "stablehlo.compare": compare,
    "stablehlo.broadcast_in_dim": _with_ints("dims", "broadcast_dimensions"),
    "stablehlo.transpose": _with_ints("dims", "permutation"),
    "stablehlo.reverse": _with_ints("dims", "dimensions"),
    "stablehlo.dynamic_slice": _with_ints("sizes", "slice_sizes"),
    "stablehlo.slice": slice_,
    "stablehlo.concatenate": concatenate,
    "stablehlo.iota": iota,
    "stablehlo.pad": pad,
    "stablehlo.dot_general": dot_general,
    "stablehlo.dot": dot,
    "stablehlo.convolution": convolution,
    "stablehlo.reduce": reduce,
    "stablehlo.while": while_,
    "stablehlo.constant": constant,
    "stablehlo.get_tuple_element": get_tuple_element,
    "stablehlo.reduce_precision": reduce_precision,
    "call": call,
    "func.call": call,
    "chlo.top_k": top_k,
    **{t: return_ for t in TERMINATORS},
}
