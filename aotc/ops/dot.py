"""Dot (dot_general): shape rule and emission.

f32/f64 dots whose contracting dimensions collapse to one stride become
loops (batch dimensions, free dimensions that are not one stride) over the
runtime's packed GEMM (`aotc_sgemm` / `aotc_dgemm`), which reads the operands
in place with their strides, transposed or not; bf16 x bf16 and s8 x s8 -> s32
go to the reduced-precision GEMMs (dot_lowp.py) the same way. Every other
dot (integer, half types, exotic dimension orders) is a plain loop nest that
accumulates in the compute type: correct first, fast later.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, row_major_strides
from ..hlo.dtypes import DTYPES
from ..kernel import ir as K
from ..runtime_c import GEMM_PANEL, gemm_part_scratch_bytes, gemm_scratch_bytes
from ..kernel.builder import Index, compute_type, load_value, narrow_result, store_value
from .dot_lowp import emit_lowp, lowp_kind, lowp_scratch
from .elementwise import _arr, convert_expr, suffix

F32 = DTYPES["f32"]
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


def _dnums(instr: Instruction):
    return (tuple(instr.attr("lhs_batch_dims", ())), tuple(instr.attr("lhs_contracting_dims", ())),
            tuple(instr.attr("rhs_batch_dims", ())), tuple(instr.attr("rhs_contracting_dims", ())))


def _free(rank: int, *groups: tuple[int, ...]) -> tuple[int, ...]:
    used = {d for g in groups for d in g}
    return tuple(d for d in range(rank) if d not in used)


def _dot_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    lhs, rhs = _arr(shapes[0], "lhs"), _arr(shapes[1], "rhs")
    lb, lc, rb, rc = _dnums(instr)
    for name, dims, a in (("lhs_batch_dims", lb, lhs), ("lhs_contracting_dims", lc, lhs),
                          ("rhs_batch_dims", rb, rhs), ("rhs_contracting_dims", rc, rhs)):
        for d in dims:
            if not 0 <= d < a.rank:
                raise ShapeError(f"{name} value {d} is out of range for rank {a.rank}")
    if len(set(lb + lc)) != len(lb + lc) or len(set(rb + rc)) != len(rb + rc):
        raise ShapeError("a dot dimension is both batch and contracting, or repeated")
    if len(lb) != len(rb) or any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lb, rb)):
        raise ShapeError(f"dot batch dimensions do not match: {lhs.text(False)} vs {rhs.text(False)}")
    if len(lc) != len(rc) or any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lc, rc)):
        raise ShapeError(f"dot contracting dimensions do not match: {lhs.text(False)} vs {rhs.text(False)}")
    dims = ([lhs.dims[d] for d in lb] + [lhs.dims[d] for d in _free(lhs.rank, lb, lc)]
            + [rhs.dims[d] for d in _free(rhs.rank, rb, rc)])
    return ArrayShape(instr.array_shape.dtype, tuple(dims))


@dataclass(frozen=True, slots=True)
class GemmPlan:
    """One `m x n x k` GEMM per point of `loops`, the batch dimensions and the free ones
    the GEMM cannot take as a stride (outermost first)."""
    loops: tuple[tuple[int, int, int, int], ...]  # (size, lhs stride, rhs stride, result stride)
    m: int
    n: int
    k: int
    a_rs: int
    a_cs: int
    b_rs: int
    b_cs: int
    ldc: int  # result elements between the GEMM's rows

    @property
    def count(self) -> int:
        """GEMM calls (points of `loops`)."""
        return prod(size for size, *_ in self.loops)

    def loop_offsets(self, bv: K.Expr) -> tuple[K.Expr, K.Expr, K.Expr, K.Expr]:
        """The element offsets into lhs, rhs and the result of GEMM call number `bv` of the plan's
        loops (the last loop fastest), and that call's first result row (when ldc divides every
        result stride)."""
        loff: K.Expr = K.Const(0)
        roff: K.Expr = K.Const(0)
        coff: K.Expr = K.Const(0)
        row: K.Expr = K.Const(0)
        rem: K.Expr = bv
        for d in range(len(self.loops) - 1, -1, -1):
            size, lst, rst, ost = self.loops[d]
            idx = rem % size if d > 0 else rem
            if d > 0:
                rem = rem // size
            loff, roff, coff = loff + idx * lst, roff + idx * rst, coff + idx * ost
            row = row + idx * (ost // self.ldc)
        return loff, roff, coff, row


def _collapse(dims: tuple[int, ...], strides: tuple[int, ...], group: tuple[int, ...]) -> tuple[int, int] | None:
    """(size, stride) of `group` viewed as one dimension, or None if it is not one stride."""
    live = [d for d in group if dims[d] != 1]
    size = prod(dims[d] for d in group)
    if not live:
        return size, 0
    for a, b in zip(live, live[1:]):
        if strides[a] != strides[b] * dims[b]:
            return None
    return size, strides[live[-1]]


def _split_free(dims: tuple[int, ...], strides: tuple[int, ...], group: tuple[int, ...]) -> tuple[int, tuple[int, int]]:
    """How many leading dimensions of a free `group` become loops so that the rest is one
    stride (a GEMM dimension), and that dimension's (size, stride)."""
    for lead in range(len(group) + 1):
        run = _collapse(dims, strides, group[lead:])
        if run is not None:
            return lead, run
    raise AssertionError("an empty group always collapses")


def _contracting(lhs: ArrayShape, ls: tuple[int, ...], lc: tuple[int, ...], rhs: ArrayShape,
                 rs: tuple[int, ...], rc: tuple[int, ...]) -> tuple[int, int, int] | None:
    """(k, lhs stride, rhs stride) of the contracting dimensions as one, taking the pairs in
    the lhs's memory order or else the rhs's (the sum's order is the GEMM's either way)."""
    pairs = list(zip(lc, rc))
    for key in (lambda p: -ls[p[0]], lambda p: -rs[p[1]]):
        order = sorted(pairs, key=key)
        ka = _collapse(lhs.dims, ls, tuple(a for a, _ in order))
        kb = _collapse(rhs.dims, rs, tuple(b for _, b in order))
        if ka is not None and kb is not None:
            return ka[0], ka[1], kb[1]
    return None


_F32_LIKE = ("f32", "bf16", "f16")


def gemm_type(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> str | None:
    """"f64" or "f32" when the dot runs on that GEMM (half operands and results are
    widened to f32 and the result rounded once, as XLA:CPU computes them), else None."""
    dt = instr.array_shape.dtype.name
    if dt == "f64" and lhs.dtype.name == rhs.dtype.name == "f64":
        return "f64"
    if dt in _F32_LIKE and lhs.dtype.name in _F32_LIKE and rhs.dtype.name in _F32_LIKE:
        return "f32"
    return None


def _widened(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> bool:
    return any(t.dtype.name in ("bf16", "f16") for t in (instr.array_shape, lhs, rhs))


def gemm_plan(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> GemmPlan | None:
    """How to run this dot on the packed GEMM, or None if it needs the loop nest: the
    contracting dimensions must read as one stride of each operand (in some common order);
    batch dimensions, and leading free dimensions that do not, become loops of GEMM calls.
    Operands are read in place with their strides, transposed or not."""
    if (gemm_type(instr, lhs, rhs) is None and lowp_kind(instr, lhs, rhs) is None) or instr.array_shape.size == 0:
        return None
    lb, lc, rb, rc = _dnums(instr)
    ls, rs = row_major_strides(lhs.dims), row_major_strides(rhs.dims)
    os_ = row_major_strides(instr.array_shape.dims)
    k = _contracting(lhs, ls, lc, rhs, rs, rc)
    if k is None or k[0] == 0:  # an empty sum: the loop nest, no packing
        return None
    lf, rf = _free(lhs.rank, lb, lc), _free(rhs.rank, rb, rc)
    mlead, (m, a_rs) = _split_free(lhs.dims, ls, lf)
    nlead, (n, b_cs) = _split_free(rhs.dims, rs, rf)
    nb = len(lb)
    loops = [(lhs.dims[a], ls[a], rs[b], os_[j]) for j, (a, b) in enumerate(zip(lb, rb))]
    loops += [(lhs.dims[d], ls[d], 0, os_[nb + j]) for j, d in enumerate(lf[:mlead])]
    loops += [(rhs.dims[d], 0, rs[d], os_[nb + len(lf) + j]) for j, d in enumerate(rf[:nlead])]
    ldc = max(prod(rhs.dims[d] for d in rf), 1)
    return GemmPlan(tuple(x for x in loops if x[0] != 1), m, n, k[0], a_rs, k[1], k[2], b_cs, ldc)


def _up64(n: int) -> int:
    return (n + 63) // 64 * 64


def _widen_layout(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> tuple[int, int, int, int]:
    """Byte offsets in scratch of the f32 copies of lhs, rhs and the result (halves only),
    and where the GEMM's own scratch starts."""
    if not _widened(instr, lhs, rhs):
        return 0, 0, 0, 0
    a = 0
    b = a + _up64(lhs.size * 4)
    c = b + _up64(rhs.size * 4)
    g = c + _up64(instr.array_shape.size * 4)
    return a, b, c, g


# GEMMs with at least this many multiply-adds are split into GEMM_PARTS slices for
# the thread pool (each slice with its own packing scratch)
THREADED_MACS = 1 << 20
GEMM_PARTS = 4
# rows or columns of the range of a GEMM with an epilogue threads may split (see _split)
RANGE_MIN = 128


def _parts(p: GemmPlan) -> int:
    """Slices of one GEMM call for the pool (a lone call: the product is cut)."""
    return GEMM_PARTS if p.count == 1 and p.m * p.n * p.k >= THREADED_MACS else 1


def _chunks(p: GemmPlan) -> int:
    """Ranges of the calls of a looped GEMM for the pool (each range makes its calls whole,
    one after the other, with scratch of its own): the loop is cut, not the products."""
    if p.count == 1 or p.count * p.m * p.n * p.k < THREADED_MACS:
        return 1
    return min(p.count, GEMM_PARTS)


def _gemm_bytes(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape, p: GemmPlan) -> int:
    """Packing scratch of one slice."""
    es = 8 if gemm_type(instr, lhs, rhs) == "f64" else 4
    return gemm_part_scratch_bytes(p.m, p.n, p.k, _parts(p), es, a_rows=p.a_cs == 1)


def _dot_scratch(instr: Instruction, shapes: list[Shape]) -> int:
    plan = gemm_plan(instr, shapes[0], shapes[1])
    if plan is None:
        return 0
    kind = lowp_kind(instr, shapes[0], shapes[1])
    if kind is not None:
        return lowp_scratch(instr, kind, plan)
    return _widen_layout(instr, shapes[0], shapes[1])[3] + max(_parts(plan), _chunks(plan)) * _gemm_bytes(instr, shapes[0], shapes[1], plan)


def _takes_epilogue(instr: Instruction, shapes: list[Shape]) -> bool:
    """Dots on the packed GEMM apply their elementwise consumers to their output rows."""
    return gemm_plan(instr, shapes[0], shapes[1]) is not None


def _dot_kernel(kb, instr: Instruction, outs) -> None:
    (out,) = outs
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs = lhs_i.array_shape, rhs_i.array_shape
    for s in (lhs, rhs, instr.array_shape):
        if s.dtype.width == 2:  # XLA:CPU: "unsupported operand type S2 in op dot"
            raise ShapeError(f"dot of {s.dtype.name} values is not supported (XLA:CPU refuses it too)")
    lbuf, rbuf = kb.buffers[lhs_i.name], kb.buffers[rhs_i.name]
    plan = gemm_plan(instr, lhs, rhs)
    if plan is None:
        _emit_loops(kb, instr, lhs, rhs, out)
        return
    kind = lowp_kind(instr, lhs, rhs)
    if kind is not None:
        emit_lowp(kb, instr, kind, plan, lbuf, rbuf, out)
        return
    if kb.epilogue is not None and not _widened(instr, lhs, rhs) and plan.count == 1:
        _emit_gemm_epilogue(kb, instr, plan, lbuf, rbuf, out)
        return
    if kb.epilogue is not None and not _widened(instr, lhs, rhs) and plan.ldc == plan.n \
            and out.dtype == instr.array_shape.dtype:  # each call's rows, then their epilogue
        _emit_gemm(kb, instr, plan, K.Ptr(lbuf), K.Ptr(rbuf), K.Ptr(out), 0, epilogue=out)
        return
    if kb.epilogue is not None:  # looped or widened: the whole product, then the epilogue
        _emit_whole_then_epilogue(kb, instr, plan, lhs, rhs, lbuf, rbuf, out)
        return
    if not _widened(instr, lhs, rhs):
        _emit_gemm(kb, instr, plan, K.Ptr(lbuf), K.Ptr(rbuf), K.Ptr(out), 0)
        return
    # widen half operands to f32 copies in scratch, multiply in f32, round the result once
    a, b, c, g = _widen_layout(instr, lhs, rhs)

    def view(off: int, size: int) -> K.Buf:
        name = kb.fresh("wide")
        kb.emit(K.Let(K.Var(name, None), K.Ptr(kb.scratch, K.Const(off), elem=F32, byte_view=True)))
        return K.Buf(name, F32, size)

    srcs = []
    for buf, shape, off in ((lbuf, lhs, a), (rbuf, rhs, b)):
        if shape.dtype.name == "f32":
            srcs.append(buf)
            continue
        dst = view(off, shape.size)
        i = kb.loop(kb.fresh("i"), shape.size, (K.VECTOR,))
        kb.store(dst, i, load_value(shape.dtype, K.Load(buf, i)))
        kb.close()
        srcs.append(dst)
    odt = instr.array_shape.dtype
    res = out if odt.name == "f32" else view(c, instr.array_shape.size)
    _emit_gemm(kb, instr, plan, K.Ptr(srcs[0]), K.Ptr(srcs[1]), K.Ptr(res), g)
    if odt.name != "f32":
        i = kb.loop(kb.fresh("i"), instr.array_shape.size, (K.VECTOR,))
        kb.store(out, i, store_value(odt, narrow_result(odt, K.Load(res, i))))
        kb.close()


def _split(p: GemmPlan) -> tuple[str, int]:
    """How a GEMM with an epilogue splits for threads: ("rows" | "cols", ranges). As the
    sliced GEMM does, the larger operand is cut (each range packs only its part of it) and
    the smaller one is read whole by every range. Each range has scratch of its own and at
    least 2 rows or columns (a 1-row or 1-column product sums in another order), and at
    least RANGE_MIN: every range packs the whole smaller operand again, which costs ~20%
    of a 128x256x256 product cut into 4 ranges of 64 columns, ~4% cut into 2 of 128."""
    axis = "rows" if p.m * p.k >= p.k * p.n else "cols"
    if p.m * p.n * p.k < THREADED_MACS:
        return axis, 1
    size = p.m if axis == "rows" else p.n
    return axis, next((c for c in (GEMM_PARTS, 2) if size >= max(2, RANGE_MIN) * c), 1)


def rhs_in_panels(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> bool:
    """Whether this dot reads a constant rhs stored in panels (aotc_sgemm_pb: no call packs
    it; the lowering stores a constant so when every reader says yes). An f32 product run as
    one GEMM with A row-major and B the whole rhs, row-major [K, N], N a whole number of
    panels; threads cut its columns in whole panels."""
    if not (lhs.dtype == rhs.dtype == instr.array_shape.dtype == F32):
        return False
    p = gemm_plan(instr, lhs, rhs)
    if p is None or p.count != 1 or p.a_cs != 1 or p.b_cs != 1 or p.b_rs != p.n \
            or rhs.size != p.k * p.n or p.n % GEMM_PANEL:
        return False
    axis, ranges = _split(p)
    return axis == "rows" or (p.n % ranges == 0 and p.n // ranges % GEMM_PANEL == 0)


def pack_panels(values: np.ndarray, n: int) -> np.ndarray:
    """A row-major [K, n] matrix (any shape of K * n elements) in the panel layout of
    aotc_sgemm_pb: element (k, j) at (j // 32) * K * 32 + k * 32 + j % 32."""
    k = values.size // n
    flat = np.ascontiguousarray(values).reshape(k, n // GEMM_PANEL, GEMM_PANEL)
    return np.ascontiguousarray(flat.transpose(1, 0, 2)).reshape(values.shape)


def _epilogue_scratch(kb, instr, p: GemmPlan, direct: bool) -> tuple[int, int]:
    """(bytes of one range's scratch, where its result block starts) for `_split` ranges."""
    es = 8 if gemm_type(instr, *(kb.producers[o].array_shape for o in instr.operands)) == "f64" else 4
    axis, ranges = _split(p)
    rows = -(-p.m // ranges) if axis == "rows" else p.m
    cols = -(-p.n // ranges) if axis == "cols" else p.n
    gemm = _up64(gemm_scratch_bytes(rows, cols, p.k, es, a_rows=p.a_cs == 1))
    return gemm + (0 if direct else _up64(rows * cols * es)), gemm


def _emit_gemm_epilogue(kb, instr, p: GemmPlan, lbuf: K.Buf, rbuf: K.Buf, out: K.Buf) -> None:
    """The product in ranges of rows or columns (threads may split them, each with scratch
    of its own), each range's epilogue applied right after its GEMM, while its block is in
    cache. The block goes straight to the output when it has the GEMM's type (the epilogue
    then works in place), else to scratch."""
    elem = DTYPES["f64"] if gemm_type(instr, *(kb.producers[o].array_shape for o in instr.operands)) == "f64" \
        else F32
    fn = "aotc_dgemm" if elem.name == "f64" else "aotc_sgemm"
    direct = out.dtype == elem
    axis, ranges = _split(p)
    size = p.m if axis == "rows" else p.n
    chunk_bytes, c_at = _epilogue_scratch(kb, instr, p, direct)
    kb.need_scratch(ranges * chunk_bytes)
    ch: K.Expr = kb.loop(kb.fresh("ch"), ranges, (K.PARALLEL,)) if ranges > 1 else K.Const(0)
    lo = kb.let(ch * size // ranges, "first") if ranges > 1 else K.Const(0)
    if size % ranges == 0:
        count: K.Expr = K.Const(size // ranges)
    else:
        count = kb.let((ch + 1) * size // ranges - lo, "count")
    base = kb.let(ch * chunk_bytes, "base") if ranges > 1 else K.Const(0)
    scratch = K.Ptr(kb.scratch, base, elem=DTYPES["u8"], byte_view=True)
    rows, cols = (count, K.Const(p.n)) if axis == "rows" else (K.Const(p.m), count)
    first, col0 = (lo, K.Const(0)) if axis == "rows" else (K.Const(0), lo)
    a_at, b_at = (lo * p.a_rs, K.Const(0)) if axis == "rows" else (K.Const(0), lo * p.b_cs)
    if direct:
        dst, dst_at, ld = out, first * p.n + col0, p.n
    else:
        name = kb.fresh("block_c")
        kb.emit(K.Let(K.Var(name, None), K.Ptr(kb.scratch, base + c_at, elem=elem, byte_view=True)))
        block = (-(-p.m // ranges) * p.n) if axis == "rows" else (p.m * -(-p.n // ranges))
        dst, dst_at = K.Buf(name, elem, block), K.Const(0)
        ld = p.n if axis == "rows" else cols
    work = p.m * p.n * p.k // ranges // 32
    if rbuf.panels:  # a range of columns starts a whole number of panels in
        b_at = lo * p.k if axis == "cols" else K.Const(0)
        kb.emit(K.CallStmt("aotc_sgemm_pb", (rows, cols, K.Const(p.k), K.Ptr(lbuf, a_at), K.Const(p.a_rs),
                                             K.Ptr(rbuf, b_at), K.Ptr(dst, dst_at), K.lift(ld), scratch), work))
    else:
        kb.emit(K.CallStmt(fn, (rows, cols, K.Const(p.k), K.Ptr(lbuf, a_at), K.Const(p.a_rs), K.Const(p.a_cs),
                                K.Ptr(rbuf, b_at), K.Const(p.b_rs), K.Const(p.b_cs), K.Ptr(dst, dst_at),
                                K.lift(ld), scratch), work))
    kb.apply_epilogue(instr, out, dst, dst_at, ld, first, rows, p.n, col0, cols)
    if ranges > 1:
        kb.close()


def _emit_whole_then_epilogue(kb, instr, p: GemmPlan, lhs: ArrayShape, rhs: ArrayShape, lbuf: K.Buf,
                              rbuf: K.Buf, out: K.Buf) -> None:
    """A looped or widened product computed whole, then its epilogue over every row."""
    rows = instr.array_shape.size // p.ldc
    if _widened(instr, lhs, rhs):
        res = K.Buf(kb.fresh("res"), F32, instr.array_shape.size)
        a, b, c, g = _widen_layout(instr, lhs, rhs)
        srcs = []
        for buf, shape, off in ((lbuf, lhs, a), (rbuf, rhs, b)):
            if shape.dtype.name == "f32":
                srcs.append(buf)
                continue
            name = kb.fresh("wide")
            kb.emit(K.Let(K.Var(name, None), K.Ptr(kb.scratch, K.Const(off), elem=F32, byte_view=True)))
            dst = K.Buf(name, F32, shape.size)
            i = kb.loop(kb.fresh("i"), shape.size, (K.VECTOR,))
            kb.store(dst, i, load_value(shape.dtype, K.Load(buf, i)))
            kb.close()
            srcs.append(dst)
        kb.emit(K.Let(K.Var(res.name, None), K.Ptr(kb.scratch, K.Const(c), elem=F32, byte_view=True)))
        _emit_gemm(kb, instr, p, K.Ptr(srcs[0]), K.Ptr(srcs[1]), K.Ptr(res), g)
        kb.apply_epilogue(instr, out, res, K.Const(0), p.ldc, K.Const(0), K.Const(rows), p.ldc)
        return
    elem = instr.array_shape.dtype
    if out.dtype == elem:
        _emit_gemm(kb, instr, p, K.Ptr(lbuf), K.Ptr(rbuf), K.Ptr(out), 0)
        kb.apply_epilogue(instr, out, out, K.Const(0), p.ldc, K.Const(0), K.Const(rows), p.ldc)
        return
    own = _dot_scratch(instr, [lhs, rhs])
    kb.need_scratch(own + _up64(instr.array_shape.size * elem.nbytes))
    res = K.Buf(kb.fresh("res"), elem, instr.array_shape.size)
    kb.emit(K.Let(K.Var(res.name, None), K.Ptr(kb.scratch, K.Const(own), elem=elem, byte_view=True)))
    _emit_gemm(kb, instr, p, K.Ptr(lbuf), K.Ptr(rbuf), K.Ptr(res), 0)
    kb.apply_epilogue(instr, out, res, K.Const(0), p.ldc, K.Const(0), K.Const(rows), p.ldc)


def _emit_gemm(kb, instr, p: GemmPlan, a: K.Ptr, b: K.Ptr, c: K.Ptr, scratch_at: int,
               epilogue: K.Buf | None = None) -> None:
    """One `aotc_[sd]gemm` call per point of the plan's loops, on operands read in place;
    the GEMM's scratch starts `scratch_at` bytes into the kernel's. A lone call is sliced
    over the pool (`_threads`); looped calls are cut into `_chunks` ranges by a parallel
    loop instead, each range with scratch of its own. Either way each product is computed
    whole or in slices that agree bit for bit, so any thread count gives the same bits.
    `epilogue`: the output the kernel's epilogue writes, applied (in place) to each call's
    rows right after the call; only for plans whose calls each write whole rows (ldc == n)."""
    fn = "aotc_dgemm" if gemm_type(instr, *(kb.producers[o].array_shape for o in instr.operands)) == "f64" \
        else "aotc_sgemm"
    u8 = DTYPES["u8"]
    parts, chunks = _parts(p), _chunks(p)
    per = _gemm_bytes(instr, *(kb.producers[o].array_shape for o in instr.operands), p)
    head: tuple[K.Expr, ...] = ()
    if parts > 1:  # sliced over the pool when there is one; the serial call otherwise
        fn = f"{fn}_threads"
        head = (kb.pool(), K.Const(parts), K.Const(per, DTYPES["u32"]))
    work = max(p.m * p.n * p.k // 32, 1)

    def call(ao: K.Expr, bo: K.Expr, co: K.Expr, at: K.Expr) -> None:
        scratch = K.Ptr(kb.scratch) if at == K.Const(0) else K.Ptr(kb.scratch, at, elem=u8, byte_view=True)
        if b.buf.panels:  # a lone call (rhs_in_panels): aotc_sgemm_pb[_threads]
            args = (K.Const(p.m), K.Const(p.n), K.Const(p.k), K.Ptr(a.buf, ao), K.Const(p.a_rs), K.Ptr(b.buf, bo),
                    K.Ptr(c.buf, co), K.Const(p.ldc), scratch)
            kb.emit(K.CallStmt(fn.replace("aotc_sgemm", "aotc_sgemm_pb"), head + args, work))
            return
        args = (K.Const(p.m), K.Const(p.n), K.Const(p.k), K.Ptr(a.buf, ao), K.Const(p.a_rs), K.Const(p.a_cs),
                K.Ptr(b.buf, bo), K.Const(p.b_rs), K.Const(p.b_cs), K.Ptr(c.buf, co), K.Const(p.ldc), scratch)
        kb.emit(K.CallStmt(fn, head + args, work))

    nb = p.count
    if nb == 1:
        call(K.Const(0), K.Const(0), K.Const(0), K.Const(scratch_at))
        if epilogue is not None:
            kb.apply_epilogue(instr, epilogue, c.buf, K.Const(0), p.ldc, K.Const(0), K.Const(p.m), p.ldc)
        return
    at: K.Expr = K.Const(scratch_at)
    if chunks > 1:
        ch = kb.loop(kb.fresh("ch"), chunks, (K.PARALLEL,))
        lo = kb.let(ch * nb // chunks, "first")
        hi = kb.let((ch + 1) * nb // chunks, "last")
        at = kb.let(ch * per + scratch_at, "base")
        bv = kb.loop(kb.fresh("b"), hi, start=lo)
    else:
        bv = kb.loop(kb.fresh("b"), nb)
    loff, roff, coff, row = p.loop_offsets(bv)
    call(loff, roff, coff, at)
    if epilogue is not None:
        assert p.ldc == p.n and all(ost % p.ldc == 0 for *_, ost in p.loops)
        kb.apply_epilogue(instr, epilogue, c.buf, coff, p.ldc, row, K.Const(p.m), p.ldc)
    kb.close()
    if chunks > 1:
        kb.close()


def _emit_loops(kb, instr, lhs: ArrayShape, rhs: ArrayShape, out) -> None:
    lb, lc, rb, rc = _dnums(instr)
    odt = instr.array_shape.dtype
    acc_t = compute_type(odt)
    lf, rf = _free(lhs.rank, lb, lc), _free(rhs.rank, rb, rc)
    o_vars = [kb.loop(f"o{d}", n, (K.PARALLEL,)) for d, n in enumerate(instr.array_shape.dims)]
    nb = len(lb)
    acc = kb.local(acc_t, K.Const(0, acc_t), "acc")
    k_vars = [kb.loop(f"k{j}", lhs.dims[d], (K.REDUCTION,)) for j, d in enumerate(lc)]
    li: list[K.Expr] = [K.Const(0)] * lhs.rank
    ri: list[K.Expr] = [K.Const(0)] * rhs.rank
    for j, (a, b) in enumerate(zip(lb, rb)):
        li[a], ri[b] = o_vars[j], o_vars[j]
    for j, d in enumerate(lf):
        li[d] = o_vars[nb + j]
    for j, d in enumerate(rf):
        ri[d] = o_vars[nb + len(lf) + j]
    for j, (a, b) in enumerate(zip(lc, rc)):
        li[a], ri[b] = k_vars[j], k_vars[j]
    x = kb.operand(instr, 0, Index(lhs.dims, tuple(li)))
    y = kb.operand(instr, 1, Index(rhs.dims, tuple(ri)))
    x = convert_expr(x, lhs.dtype, odt) if lhs.dtype != odt and lhs.dtype.kind != "float" else x
    y = convert_expr(y, rhs.dtype, odt) if rhs.dtype != odt and rhs.dtype.kind != "float" else y
    if odt.kind == "float":
        prod_ = K.Binary("*", _as(x, acc_t), _as(y, acc_t), acc_t)
        kb.assign(acc, K.Binary("+", acc, prod_, acc_t))
    elif odt.kind == "pred":
        kb.assign(acc, K.Cast(K.Binary("|", acc, K.Binary("&", x, y, acc_t), acc_t), acc_t))
    else:
        s = suffix(odt)
        kb.assign(acc, K.Call(f"aotc_add_{s}", (acc, K.Call(f"aotc_mul_{s}", (x, y), acc_t)), acc_t))
    for _ in lc:
        kb.close()
    kb.store(out, kb.linear(Index(instr.array_shape.dims, tuple(o_vars))), store_value(odt, narrow_result(odt, acc)))
    for _ in o_vars:
        kb.close()


def _as(x: K.Expr, ty) -> K.Expr:
    return x if x.ty == ty else K.Cast(x, ty)


RULES.append(OpRule("dot", shape=_dot_shape, kernel=_dot_kernel, scratch_bytes=_dot_scratch, buffered_operands=True,
                    epilogue=_takes_epilogue))
