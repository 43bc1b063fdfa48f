"""The pretty syntax of the less common StableHLO ops, read into the generic shape of
`syntax.Op` like `pretty` does: `broadcast %x, sizes = [..]`, `fft %x, type = FFT, length
= [..]`, `rng %a, %b, %shape, distribution = UNIFORM`, `rng_bit_generator %s, algorithm =
DEFAULT`, `get_dimension_size %x, dim = 0`, `cholesky %a, lower = true`, `custom_call
@target(%x) {...}`, `composite "name" %x {...}`, and the operand-less `replica_id`,
`partition_id`, `create_token` and `after_all %t, ...`. Ops JAX prints in the generic form
(map, select_and_scatter, batch_norm_*, triangular_solve, collectives, infeed, send, ...)
need no entry here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..lexer import unquote
from .attributes import Enum, Symbol, read_attribute
from .lexer import describe
from .pretty import _ints, _keyword, _op, _operands, _suffix, _with_ints, simple

if TYPE_CHECKING:
    from .parser import Parser
    from .syntax import Op


def _enum_keyword(key: str, attr: str, kind: str, choices: tuple[str, ...]) -> Callable:
    """`%x, ..., KEY = VALUE` with VALUE one of `choices` (fft type, rng algorithm, ...)."""
    def read(p: Parser, name: str, pos: int, n: int) -> Op:
        lx = p.lx
        operands = p.uses()
        _keyword(p, key)
        tok = lx.expect_kind("name", f"the {key} ({', '.join(choices)})")
        if tok.text not in choices:
            raise lx.error(f"unknown {key} {describe(tok)} (expected one of {', '.join(choices)})", tok.pos)
        attrs: dict = {attr: Enum(kind, tok.text)}
        if name == "stablehlo.fft":
            _keyword(p, "length")
            attrs["fft_length"] = _ints(p, "'length'")
        attrs.update(p.opt_attr_dict())
        return _op(name, pos, operands, attrs, _suffix(p, n))
    return read


def _int_keyword(key: str, attr: str) -> Callable:
    """`%x, KEY = INT` (get_dimension_size)."""
    def read(p: Parser, name: str, pos: int, n: int) -> Op:
        operands = p.uses()
        _keyword(p, key)
        attrs: dict = {attr: p.lx.expect_int(f"'{key}'")}
        attrs.update(p.opt_attr_dict())
        return _op(name, pos, operands, attrs, _suffix(p, n))
    return read


def cholesky(p: Parser, name: str, pos: int, n: int) -> Op:
    operands = p.uses()
    attrs: dict = {}
    if p.lx.accept(","):
        p.lx.expect("lower")
        p.lx.expect("=", "after 'lower'")
        attrs["lower"] = read_attribute(p.lx)
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def custom_call(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    tok = lx.peek()
    if tok.kind == "symbol":
        lx.next()
        target = unquote(tok.text[1:]) if tok.text.startswith('@"') else tok.text[1:]
    elif tok.kind == "string":
        lx.next()
        target = unquote(tok.text)
    else:
        raise lx.error(f"expected the custom call target such as @foo, found {describe(tok)}", tok.pos)
    lx.expect("(", "after the custom call target")
    operands = p.uses(")")
    attrs: dict = {"call_target_name": target}
    attrs.update(p.opt_attr_dict())
    return _op(name, pos, operands, attrs, _suffix(p, n))


def composite(p: Parser, name: str, pos: int, n: int) -> Op:
    lx = p.lx
    tok = lx.expect_kind("string", 'the composite name such as "my.op"')
    operands = _operands(p)
    attrs: dict = {"name": unquote(tok.text)}
    attrs.update(p.opt_attr_dict())
    if not isinstance(attrs.get("decomposition"), Symbol):
        raise lx.error("stablehlo.composite needs decomposition = @function", pos)
    return _op(name, pos, operands, attrs, _suffix(p, n))


PRETTY: dict[str, Callable] = {
    "stablehlo.broadcast": _with_ints("sizes", "broadcast_sizes"),
    "stablehlo.fft": _enum_keyword("type", "fft_type", "fft_type", ("FFT", "IFFT", "RFFT", "IRFFT")),
    "stablehlo.rng": _enum_keyword("distribution", "rng_distribution", "rng_distribution", ("UNIFORM", "NORMAL")),
    "stablehlo.rng_bit_generator": _enum_keyword("algorithm", "rng_algorithm", "rng_algorithm",
                                                 ("DEFAULT", "THREE_FRY", "PHILOX")),
    "stablehlo.get_dimension_size": _int_keyword("dim", "dimension"),
    "stablehlo.cholesky": cholesky,
    "stablehlo.custom_call": custom_call,
    "stablehlo.composite": composite,
    **{f"stablehlo.{n}": simple for n in ("replica_id", "partition_id", "create_token", "after_all")},
}
