"""Sign facts about f32 values that let an op rule pick a cheaper helper with the same bits.

`nonpositive` proves that every element of an instruction is <= 0 (up to the flush of a
subnormal, which XLA:CPU's DAZ/FTZ makes) or NaN. It knows -(a * a) and -|a|, and a row's
maximum taken away from the row, as every softmax and log-softmax is exported:

    m = reduce(x, init), dimensions=R, to_apply=maximum    (then any of: maximum with
    d = subtract(x, broadcast(...reshape(m)...))            more values, reshapes that add
                                                            or drop 1-sized dimensions,
                                                            broadcasts)

Each element of `d` is x[i] - m[j] where the chain of views maps i to a j whose row holds
x[i], so m[j] >= x[i]: the difference is <= 0, or NaN. The walk follows the index map of
each view exactly and answers False at anything else: a wrong True would change bits
(aotc_exp_nonpos drops exp's overflow clamps), a wrong False only costs time.
"""
from __future__ import annotations

from typing import Callable

from ..hlo.ir import Instruction
from ..hlo.opcodes import Op

# `dims[k]`: the dimension of the subtract's shape that dimension k of a view follows
# (None: its index is always 0)
_Dims = tuple[int | None, ...]


def nonpositive(producers: dict[str, Instruction], name: str, is_max: Callable[[str], bool],
                context: dict[str, Instruction] | None = None) -> bool:
    """Whether every element of `name` is <= 0 or NaN. `is_max(computation)`: whether a
    reduce's computation is the maximum of its two parameters. `context`: the enclosing
    computation when `producers` is a fusion's, whose parameters are named after the
    values they stand for there."""
    if context:
        producers = {**context, **{n: i for n, i in producers.items() if i.opcode != Op.PARAMETER}}
    d = producers.get(name)
    if d is None or d.array_shape.dtype.name != "f32":
        return False
    if d.opcode == Op.NEGATE:  # -(a * a), -|a|: erfc's exp(-x^2), as JAX exports it
        a = producers.get(d.operands[0])
        return a is not None and (a.opcode == Op.MULTIPLY and a.operands[0] == a.operands[1] or
                                  a.opcode == Op.ABS)
    if d.opcode != Op.SUBTRACT:
        return False
    # 1-sized dimensions are None from the start: every map then says None where the index is 0
    ident = tuple(k if n != 1 else None for k, n in enumerate(d.array_shape.dims))
    return _dominates(producers, d.operands[1], ident, _views(producers, d.operands[0], ident), is_max)


def _views(producers, name: str, dims: _Dims) -> dict[str, _Dims]:
    """The subtract's lhs and what it reshapes (1-sized dimensions only), each with its map."""
    out = {name: dims}
    v = producers.get(name)
    while v is not None and v.opcode == Op.RESHAPE and v.operands[0] in producers:
        src = producers[v.operands[0]]
        mapped = _through_ones(src.array_shape.dims, v.array_shape.dims, out[v.name])
        if mapped is None:
            break
        out[src.name] = mapped
        v = src
    return out


def _dominates(producers, name: str, dims: _Dims, x: dict[str, _Dims], is_max) -> bool:
    """Whether element i of the subtract's shape is <= the element of `name` that `dims`
    maps it to, for every i, where `x` maps the views of the subtract's lhs."""
    v = producers.get(name)
    if v is None:
        return False
    shape = v.array_shape.dims
    if v.opcode == Op.BROADCAST:
        at = tuple(v.attr("dimensions") or ())
        return _dominates(producers, v.operands[0], tuple(dims[k] for k in at), x, is_max)
    if v.opcode == Op.RESHAPE:
        src = producers.get(v.operands[0])
        if src is None:
            return False
        mapped = _through_ones(src.array_shape.dims, shape, dims)
        return mapped is not None and _dominates(producers, v.operands[0], mapped, x, is_max)
    if v.opcode == Op.MAXIMUM:  # max(a, b) >= a and >= b
        return any(_dominates(producers, o, dims, x, is_max) for o in v.operands)
    if v.opcode == Op.REDUCE and len(v.operands) == 2 and v.operands[0] in x:
        if not is_max(v.attr("to_apply")):
            return False
        xdims = x[v.operands[0]]
        reduced = set(v.attr("dimensions") or ())
        kept = [k for k in range(len(xdims)) if k not in reduced]
        # m[j] is the maximum of the row of x whose kept coordinates are j: each kept
        # dimension must follow the same dimension of the subtract's shape in x's map and
        # in the view's (None in both: index 0 in both)
        return len(kept) == len(dims) and all(dims[t] == xdims[k] for t, k in enumerate(kept))
    return False


def _through_ones(src: tuple[int, ...], out: tuple[int, ...], dims: _Dims) -> _Dims | None:
    """The map of a reshape's operand, when the reshape only adds or drops 1-sized
    dimensions (the sizes other than 1 the same, in the same order); else None."""
    big_src = [k for k, n in enumerate(src) if n != 1]
    big_out = [k for k, n in enumerate(out) if n != 1]
    if [src[k] for k in big_src] != [out[k] for k in big_out]:
        return None
    mapped: list[int | None] = [None] * len(src)
    for ks, ko in zip(big_src, big_out):
        mapped[ks] = dims[ko]
    return tuple(mapped)


def is_reducer(kb, computation: str | None, opcode: str) -> bool:
    """Whether `computation` (a reduce's to_apply) is `opcode` applied to its two parameters."""
    if kb.scalar_computation is None or computation is None:
        return False
    comp = kb.scalar_computation(computation)
    params = {i.name for i in comp.instructions if i.opcode == Op.PARAMETER}
    root = comp.root_instruction
    return root.opcode == opcode and len(params) == 2 and set(root.operands) == params
