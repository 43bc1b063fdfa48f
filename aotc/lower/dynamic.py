"""Bounded dynamic dimensions as XLA's dynamic padder treats them: every buffer keeps its bound
size, each dynamic dimension's real size becomes an s32[] value of the entry computation, and
the ops that would read the padding (a reduce over a dynamic dimension, a dot contracting one)
first mask it with the reduction's init value (zero for a dot). Afterwards every shape is static.
Ops aotc does not know to be safe on a dynamic dimension are a located error naming the op.
A fetched value with a dynamic dimension is returned as XLA's runtime returns it: its real-size
array row-major at the start of the bound-size buffer (zeros after), with an s32[rank] result
`NAME_dims` holding its real dimensions.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import located
from ..hlo.dtypes import DTYPES
from ..hlo.ir import Computation, Instruction, Literal, Module, name_maker
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape, TupleShape, leaves
from ..frontend.signature import Fetch
from ..ops.registry import rule
from ..ops.rule import KEEPS_INDEX

_S32 = ArrayShape(DTYPES["s32"], ())
_PRED = DTYPES["pred"]

Sizes = tuple  # per dimension: the name of the s32[] instruction holding its real size, or None (static)


def _is_dynamic(shape) -> bool:
    return any(any(s.dynamic) for _, s in leaves(shape))


def _static(shape):
    if isinstance(shape, TupleShape):
        return TupleShape(tuple(_static(e) for e in shape.elements))
    return ArrayShape(shape.dtype, shape.dims, shape.layout) if shape.dynamic else shape


class _Pad:
    """The rewrite of one entry computation: `sizes` maps an instruction to its Sizes."""

    def __init__(self, m: Module, comp: Computation, source_text: str | None):
        self.fresh = name_maker(m)
        self.comp = comp
        self.src = source_text
        self.out: list[Instruction] = []
        self.sizes: dict[str, Sizes] = {}
        self.shapes = {i.name: _static(i.shape) for i in comp.instructions}

    def error(self, ins: Instruction, msg: str):
        return located(msg, ins.loc, self.src)

    def emit(self, ins: Instruction) -> str:
        self.out.append(ins)
        return ins.name

    def new(self, base: str, opcode: Op, shape, operands=(), attrs=(), like=None, literal=None) -> str:
        return self.emit(Instruction(self.fresh(base), opcode, shape, tuple(operands), tuple(attrs), literal,
                                     loc=like.loc if like is not None else None))

    def constant(self, base: str, dtype, value, like) -> str:
        lit = Literal(ArrayShape(dtype, ()), np.array(value, dtype=dtype.numpy))
        return self.new(base, Op.CONSTANT, ArrayShape(dtype, ()), like=like, literal=lit)

    def mask(self, operand: str, shape: ArrayShape, dims: dict[int, str], fill: str, like: Instruction) -> str:
        """`operand` with every element at or past the real size of a dimension in `dims`
        (dimension -> size) replaced by the scalar `fill`: XLA's PadWithScalar."""
        s32 = ArrayShape(DTYPES["s32"], shape.dims)
        pred = ArrayShape(_PRED, shape.dims)
        keep = None
        for d, size in sorted(dims.items()):
            iota = self.new(f"{like.name}.iota{d}", Op.IOTA, s32, (), (("iota_dimension", d),), like)
            bound = self.new(f"{like.name}.size{d}", Op.BROADCAST, s32, (size,), (("dimensions", ()),), like)
            inside = self.new(f"{like.name}.inside{d}", Op.COMPARE, pred, (iota, bound), (("direction", "LT"),), like)
            keep = inside if keep is None else self.new(f"{like.name}.inside", Op.AND, pred, (keep, inside), (), like)
        filler = self.new(f"{like.name}.pad", Op.BROADCAST, shape, (fill,), (("dimensions", ()),), like)
        return self.new(f"{like.name}.masked", Op.SELECT, shape, (keep, operand, filler), (), like)

    def computation(self) -> Computation:
        return Computation(self.comp.name, tuple(self.out), self.comp.root, self.comp.is_entry,
                           self.comp.has_signature, self.comp.loc)

    def one(self, ins: Instruction) -> None:
        ops = [self.sizes.get(o) for o in ins.operands]
        op = ins.opcode
        if op == Op.SET_DIMENSION_SIZE:
            self.set_size(ins)
            return
        if op == Op.GET_DIMENSION_SIZE and ops[0] is not None:
            size = ops[0][ins.attr("dimensions")[0]]
            if size is not None:
                self.emit(Instruction(ins.name, Op.COPY, _S32, (size,), loc=ins.loc))
                return
        if not any(s is not None and any(s) for s in ops):
            if _is_dynamic(ins.shape):
                what = "an entry parameter" if op == Op.PARAMETER else f"{op} {ins.name}"
                raise self.error(ins, f"{what} has the bounded dynamic shape {ins.shape}: aotc takes a dynamic "
                                      "dimension only from set-dimension-size (dynamic entry parameters are not "
                                      "supported)")
            self.emit(ins)
            return
        out = self.consumer(ins, ops)
        if out is not None:
            self.sizes[ins.name] = out

    def set_size(self, ins: Instruction) -> None:
        dims = ins.attr("dimensions") or ()
        shape = self.shapes[ins.operands[0]] if ins.operands else None
        size_shape = self.shapes[ins.operands[1]] if len(ins.operands) == 2 else None
        if (not isinstance(shape, ArrayShape) or len(dims) != 1 or not 0 <= dims[0] < shape.rank
                or not isinstance(size_shape, ArrayShape) or (size_shape.dtype, size_shape.dims) != (_S32.dtype, ())):
            raise self.error(ins, f"set-dimension-size {ins.name} takes an array, an s32[] size and one dimension")
        x, n = ins.operands
        d = dims[0]
        # XLA leaves a size outside [0, bound] undefined (it reads past the buffer); aotc clamps it
        lo = self.constant(f"{ins.name}.zero", DTYPES["s32"], 0, ins)
        hi = self.constant(f"{ins.name}.bound", DTYPES["s32"], shape.dims[d], ins)
        size = self.new(f"{ins.name}.size", Op.CLAMP, _S32, (lo, n, hi), (), ins)
        before = self.sizes.get(x) or (None,) * shape.rank
        self.sizes[ins.name] = before[:d] + (size,) + before[d + 1:]
        self.emit(Instruction(ins.name, Op.COPY, _static(ins.shape), (x,), loc=ins.loc))

    def consumer(self, ins: Instruction, ops: list) -> Sizes | None:
        op = ins.opcode
        shape = _static(ins.shape)
        r = rule(op)
        if op == Op.GET_DIMENSION_SIZE:
            self.emit(ins)  # of a static dimension: expand makes it a constant
            return None
        if (r is not None and KEEPS_INDEX in r.traits and isinstance(shape, ArrayShape)
                and all(s is None or self.shapes[o].dims == shape.dims for o, s in zip(ins.operands, ops))):
            per_dim: list[set[str]] = [set() for _ in shape.dims]
            for o, s in zip(ins.operands, ops):
                if s is not None and len(s) == shape.rank:
                    for d, v in enumerate(s):
                        if v is not None:
                            per_dim[d].add(v)
            if any(len(p) > 1 for p in per_dim):
                raise self.error(ins, f"dynamic dimensions of different sizes reach {op} {ins.name}: not supported")
            self.emit(ins.with_(shape=shape))
            return tuple(next(iter(p)) if p else None for p in per_dim)
        if op == Op.BROADCAST:
            out: list = [None] * shape.rank
            for i, d in enumerate(ins.attr("dimensions")):
                out[d] = ops[0][i]
            self.emit(ins.with_(shape=shape))
            return tuple(out)
        if op == Op.TRANSPOSE:
            self.emit(ins.with_(shape=shape))
            return tuple(ops[0][p] for p in ins.attr("dimensions"))
        if op == Op.SLICE:
            src = self.shapes[ins.operands[0]]
            for d, (sd, size) in enumerate(zip(ins.attr("slice"), ops[0])):
                if size is not None and (sd.start, sd.limit, sd.stride) != (0, src.dims[d], 1):
                    raise self.error(ins, f"slice {ins.name} cuts the dynamic dimension {d}: not supported "
                                          "(only a dynamic dimension's whole bound can be sliced)")
            self.emit(ins.with_(shape=shape))
            return ops[0]
        if op == Op.TUPLE and ins.name == self.comp.root:  # the results: each fetch is compacted below
            self.emit(ins.with_(shape=shape))
            return None
        if op == Op.CONCATENATE:  # along a static dimension, the others of one size each
            d = ins.attr("dimensions")[0]
            sizes = [s or (None,) * shape.rank for s in ops]
            if any(s[d] is not None for s in sizes):
                raise self.error(ins, f"concatenate {ins.name} joins along the dynamic dimension {d}: not supported")
            if any(s != sizes[0] for s in sizes):
                raise self.error(ins, f"concatenate {ins.name}: operands with different dynamic sizes are not supported")
            self.emit(ins.with_(shape=shape))
            return sizes[0]
        if op == Op.REDUCE:
            return self.reduce(ins, ops, shape)
        if op == Op.DOT:
            return self.dot(ins, ops, shape)
        raise self.error(ins, f"dynamic dimension reaches `{op}` ({ins.name}): not supported")

    def reduce(self, ins: Instruction, ops: list, shape) -> Sizes:
        n = len(ins.operands) // 2
        dims = set(ins.attr("dimensions"))
        if any(s is not None and any(s) for s in ops[n:]):
            raise self.error(ins, f"reduce {ins.name}: a dynamic init value is not supported")
        sizes = [s for s in ops[:n] if s is not None]
        if any(s != sizes[0] for s in sizes):
            raise self.error(ins, f"reduce {ins.name}: operands with different dynamic sizes are not supported")
        size = sizes[0]
        masked = {d: v for d, v in enumerate(size) if v is not None and d in dims}
        operands = list(ins.operands)
        for k in range(n):
            if masked:
                operands[k] = self.mask(operands[k], self.shapes[operands[k]], masked, operands[n + k], ins)
        self.emit(ins.with_(shape=shape, operands=tuple(operands)))
        kept = tuple(v for d, v in enumerate(size) if d not in dims)
        if n > 1 and any(kept):
            raise self.error(ins, f"reduce {ins.name}: a variadic reduce keeping a dynamic dimension is not supported")
        return kept if any(kept) else None

    def dot(self, ins: Instruction, ops: list, shape) -> Sizes:
        lhs, rhs = ins.operands
        ls = ops[0] or (None,) * self.shapes[lhs].rank
        rs = ops[1] or (None,) * self.shapes[rhs].rank
        lb, rb = ins.attr("lhs_batch_dims") or (), ins.attr("rhs_batch_dims") or ()
        lc, rc = ins.attr("lhs_contracting_dims") or (), ins.attr("rhs_contracting_dims") or ()
        operands = [lhs, rhs]
        for k, (name, s, contract) in enumerate(((lhs, ls, lc), (rhs, rs, rc))):
            masked = {d: s[d] for d in contract if s[d] is not None}
            if masked:
                zero = self.constant(f"{ins.name}.zero", self.shapes[name].dtype, 0, ins)
                operands[k] = self.mask(name, self.shapes[name], masked, zero, ins)
        batch = []
        for a, b in zip(lb, rb):
            if ls[a] is not None and rs[b] is not None and ls[a] != rs[b]:
                raise self.error(ins, f"dot {ins.name}: batch dimensions of different dynamic sizes")
            batch.append(ls[a] if ls[a] is not None else rs[b])
        free_l = [ls[d] for d in range(len(ls)) if d not in lb and d not in lc]
        free_r = [rs[d] for d in range(len(rs)) if d not in rb and d not in rc]
        self.emit(ins.with_(shape=shape, operands=tuple(operands)))
        out = tuple(batch + free_l + free_r)
        return out if any(out) else None


    def value_of(self, fetch: Fetch, renamed: dict[str, str]) -> str:
        """The instruction whose value `fetch` returns (through the root tuple)."""
        name, index = renamed.get(fetch.instruction, fetch.instruction), fetch.shape_index
        while index:
            ins = next(i for i in self.out if i.name == name)
            if ins.opcode != Op.TUPLE:
                return ""
            name, index = ins.operands[index[0]], index[1:]
        return name

    def compact(self, v: str, sizes: Sizes, like: Instruction) -> tuple[str, str]:
        """(the value `v` compacted: its real-size array row-major at the start, zeros after;
        its real dims as s32[rank])."""
        shape = self.shapes[v]
        n = shape.size
        if n >= 2 ** 31:
            raise self.error(like, f"the dynamic result {like.name} has {n} elements at its bound: too many")
        s32 = DTYPES["s32"]
        flat = ArrayShape(s32, (n,))
        real = [sz if sz is not None else self.constant(f"{v}.dim{d}", s32, shape.dims[d], like)
                for d, sz in enumerate(sizes)]
        one = self.constant(f"{v}.one", s32, 1, like)

        def bcast(x: str) -> str:
            return self.new(f"{v}.b", Op.BROADCAST, flat, (x,), (("dimensions", ()),), like)

        k = self.new(f"{v}.k", Op.IOTA, flat, (), (("iota_dimension", 0),), like)
        rest, src, total, stride = k, None, one, 1
        for d in reversed(range(shape.rank)):
            safe = bcast(self.new(f"{v}.safe{d}", Op.MAXIMUM, _S32, (real[d], one), (), like))
            coord = self.new(f"{v}.c{d}", Op.REMAINDER, flat, (rest, safe), (), like)
            rest = self.new(f"{v}.q{d}", Op.DIVIDE, flat, (rest, safe), (), like)
            term = self.new(f"{v}.t{d}", Op.MULTIPLY, flat,
                            (coord, bcast(self.constant(f"{v}.stride{d}", s32, stride, like))), (), like)
            src = term if src is None else self.new(f"{v}.src", Op.ADD, flat, (src, term), (), like)
            total = self.new(f"{v}.total", Op.MULTIPLY, _S32, (total, real[d]), (), like)
            stride *= shape.dims[d]
        if src is None:  # rank 0 cannot be dynamic
            raise AssertionError(v)
        pred = ArrayShape(_PRED, (n,))
        valid = self.new(f"{v}.valid", Op.COMPARE, pred, (k, bcast(total)), (("direction", "LT"),), like)
        zero_i = bcast(self.constant(f"{v}.zero", s32, 0, like))
        src = self.new(f"{v}.from", Op.SELECT, flat, (valid, src, zero_i), (), like)
        index = self.new(f"{v}.index", Op.RESHAPE, ArrayShape(s32, (n, 1)), (src,), (), like)
        vflat = ArrayShape(shape.dtype, (n,))
        data = self.new(f"{v}.flat", Op.RESHAPE, vflat, (v,), (), like)
        got = self.new(f"{v}.gather", Op.GATHER, vflat, (data, index),
                       (("offset_dims", ()), ("collapsed_slice_dims", (0,)), ("start_index_map", (0,)),
                        ("index_vector_dim", 1), ("slice_sizes", (1,))), like)
        zero = self.new(f"{v}.pad", Op.BROADCAST, vflat, (self.constant(f"{v}.zero", shape.dtype, 0, like),),
                        (("dimensions", ()),), like)
        kept = self.new(f"{v}.kept", Op.SELECT, vflat, (valid, got, zero), (), like)
        out = self.new(f"{v}.compact", Op.RESHAPE, shape, (kept,), (), like)
        one_dim = ArrayShape(s32, (1,))
        parts = [self.new(f"{v}.d{d}", Op.BROADCAST, one_dim, (r,), (("dimensions", ()),), like)
                 for d, r in enumerate(real)]
        dims = self.new(f"{v}.dims", Op.CONCATENATE, ArrayShape(s32, (shape.rank,)), tuple(parts),
                        (("dimensions", (0,)),), like)
        return out, dims

    def fetches(self, sig, renamed: dict[str, str]):
        """`sig` with each dynamic fetch compacted and followed (after every fetch) by its dims;
        (the new signature, (result index, dims result index) pairs)."""
        fetches = list(sig.fetches)
        taken = {f.name for f in sig.fetches} | {f.name for f in sig.feeds}
        extra: list[Fetch] = []
        pairs = []
        for j, f in enumerate(sig.fetches):
            v = self.value_of(f, renamed)
            sizes = self.sizes.get(v)
            if not sizes or not any(sizes):
                if f.shape.dynamic:
                    raise self.error(self.comp.get(self.comp.root), f"result {f.name} is declared with the dynamic "
                                     f"shape {f.shape}, but no set-dimension-size gives its size")
                continue
            like = next(i for i in self.out if i.name == v)
            out, dims = self.compact(v, sizes, like)
            fetches[j] = Fetch(f.index, f.name, out, (), f.shape)
            name = f"{f.name}_dims"
            while name in taken:
                name += "_"
            taken.add(name)
            pairs.append((j, len(fetches) + len(extra)))
            extra.append(Fetch(len(fetches) + len(extra), name, dims, (), ArrayShape(DTYPES["s32"], (len(sizes),))))
        return replace(sig, fetches=tuple(fetches + extra)), tuple(pairs)


def pad_dynamic(m: Module, sig, renamed: dict[str, str], source_text: str | None = None):
    """(the module with every bounded dynamic dimension of its entry at its bound, the signature
    with each dynamic result compacted and its dims as one more result, (result, dims result)
    index pairs); see the module docstring. Runs after inlining (`renamed`: the instructions
    it renamed); a dynamic shape left in another computation (a loop or branch body, a
    reducer) is a located error. Without dynamic shapes nothing changes."""
    for comp in m.computations:
        for ins in comp.instructions if not comp.is_entry else ():
            if _is_dynamic(ins.shape):
                raise located(f"{ins.opcode} {ins.name} in {comp.name} has the bounded dynamic shape {ins.shape}: "
                              "aotc bounds dynamic dimensions only in the entry computation (after inlining "
                              "calls), not in loop or branch bodies", ins.loc, source_text)
    entry = m.entry_computation
    if not any(_is_dynamic(i.shape) for i in entry.instructions):
        return m, sig, ()
    pad = _Pad(m, entry, source_text)
    for ins in entry.instructions:
        pad.one(ins)
    sig, pairs = pad.fetches(sig, renamed)
    comp = pad.computation()
    return m.with_computations(tuple(comp if c.is_entry else c for c in m.computations)), sig, pairs
