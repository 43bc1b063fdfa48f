"""Convolution as GEMM: rows of output pixels times a (window position, input feature) x
output feature matrix, through the runtime's packed sgemm/dgemm.

Used for ungrouped float convolutions whose output features are innermost;
`gemm_conv_plan` decides, convolution.py calls. The lhs is copied into an im2col
matrix by blocks of rows: each row is zeroed when its window reaches padding or
dilation holes, then the window indices that land on input (window.py spans) are
copied, so no load depends on a guard.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction, Window
from ..hlo.shape import ArrayShape, row_major_strides
from ..kernel import ir as K
from ..kernel.builder import load_value, store_value
from ..runtime_c import gemm_part_scratch_bytes, gemm_scratch_bytes
from .dot import GEMM_PARTS, THREADED_MACS
from .elementwise import convert_expr
from .window import (NEVER, ZERO, ConvDims, all_of, conv_acc_type, dot_terms, negate, open_span, reversed_index,
                     span_misses_input, window_span)

F32, F64, U8, U32 = DTYPES["f32"], DTYPES["f64"], DTYPES["u8"], DTYPES["u32"]


@dataclass(frozen=True, slots=True)
class GemmConv:
    elem: DType  # f32 or f64
    P: int  # output pixels (rows)
    K: int  # window positions x input features
    O: int  # output features
    rows: int  # rows per GEMM call
    parts: int  # slices of one GEMM call over the thread pool (1: serial)
    part_bytes: int  # packing scratch of one slice
    chunks: int  # pixel ranges of `blocks` x `rows` pixels with scratch of their own (0: one shared block)
    blocks: int
    direct_a: bool  # the lhs is already the P x K matrix
    direct_b: bool  # the rhs is already the K x O matrix
    direct_c: bool  # the result is the P x O matrix, in the GEMM's type
    off_b: int  # scratch byte offset of the packed rhs
    off_chunk: int  # where the first block's scratch starts, and the bytes of each
    chunk_bytes: int
    off_a: int  # in a block's scratch (after the GEMM's packing scratch): im2col rows, result rows
    off_c: int
    scratch_bytes: int


_GEMM_ROWS = 256
_MIN_ROWS = 32
# an epilogue's GEMM is cut into row ranges (each packing the rhs) only when each range
# has this many rows; smaller (DenseNet's 14x14 and 7x7 1x1 convolutions, 49-row ranges
# packing 1000 x 128 weights four times): one GEMM sliced over the pool, then the epilogue
_MIN_RANGE_ROWS = 96
_COL_BYTES = 512 * 1024
_TILE_ROWS = 12


def _align(n: int) -> int:
    return (n + 63) // 64 * 64


def _chunking(P: int, threaded: bool, row_bytes: int) -> tuple[int, int, int] | None:
    """(chunks, blocks, rows) with chunks * blocks * rows == P, rows at most _GEMM_ROWS, an
    im2col block of at most _COL_BYTES (it stays in cache while the GEMM reads it, and each
    chunk's scratch is small) and not tiny, so every loop has a constant trip count; None
    when P does not factor so. Among the row counts that fit, the one that wastes least of
    the GEMM's row tiles (12 rows: a multiple of every micro-kernel's) is taken."""
    cap = max(1, min(_GEMM_ROWS, _COL_BYTES // max(row_bytes, 1)))
    for nc in ((GEMM_PARTS, 2, 1) if threaded else (1,)):
        if P % nc:
            continue
        pc = P // nc
        fits = [r for r in range(1, min(pc, cap) + 1) if pc % r == 0]
        rows = max(fits, key=lambda r: (r / (-(-r // _TILE_ROWS) * _TILE_ROWS), r), default=0)
        if rows >= min(pc, _MIN_ROWS):
            return nc, pc // rows, rows
    return None


def gemm_conv_plan(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> GemmConv | None:
    """How to run this convolution as GEMM calls, or None for the direct loop nest (groups,
    integer types, tiny matrices, an output whose features are not innermost)."""
    out = instr.array_shape
    if instr.attr("feature_group_count", 1) != 1 or instr.attr("batch_group_count", 1) != 1:
        return None
    if {lhs.dtype.kind, rhs.dtype.kind, out.dtype.kind} != {"float"}:
        return None
    c = ConvDims(instr, lhs.rank, rhs.rank)
    wins = (instr.attr("window") or Window(())).dims
    if c.out_f != out.rank - 1 or 0 in lhs.dims or 0 in rhs.dims or 0 in out.dims:
        return None
    elem = conv_acc_type(instr, lhs, rhs)
    es = elem.bits // 8
    O, C = rhs.dims[c.rhs_o], lhs.dims[c.lhs_f]
    K = C * prod(w.size for w in wins)
    P = out.size // O
    if K * O < 64 or O < 4:
        return None
    same = (lambda dt: dt == elem)
    labels = instr.attr("dim_labels")
    unit = all(w.size == 1 and w.stride == 1 and w.pad_lo == 0 and w.pad_hi == 0 and w.lhs_dilate == 1
               for w in wins)
    direct_a = (unit and same(lhs.dtype) and c.lhs_f == lhs.rank - 1
                and labels.lhs.replace("f", "") == labels.out.replace("f", ""))
    direct_b = (same(rhs.dtype) and not any(w.reversal for w in wins)
                and labels.rhs == "".join(str(k) for k in range(c.spatial)) + "io")
    direct_c = same(out.dtype)
    threaded = P * O * K >= THREADED_MACS
    # im2col: with the rhs used in place, pixel ranges (each with its own scratch) are
    # independent, so threads split them; otherwise one block at a time, GEMM sliced over the
    # pool. Fewer pixels than output features: every pixel range would pack the whole rhs, while
    # the sliced GEMM cuts the rhs (its larger operand) and packs each column range once.
    split = _chunking(P, threaded, K * es) if direct_b and not direct_a and P >= O else None
    chunks, blocks, rows = split if split else (0, 0, P if direct_a else min(P, _GEMM_ROWS))
    parts = GEMM_PARTS if not chunks and rows * O * K >= THREADED_MACS else 1
    # the lhs or im2col rows are row-major; with parts, each is a slice of the sliced GEMM or
    # (direct lhs with an epilogue) a GEMM of its own over a range of rows
    part_bytes = gemm_scratch_bytes(rows, O, K, es, a_rows=True) if parts == 1 else max(
        gemm_part_scratch_bytes(rows, O, K, parts, es, a_rows=True),
        gemm_scratch_bytes(-(-rows // parts), O, K, es, a_rows=True))
    off_b = 0
    off = 0 if direct_b else _align(K * O * es)
    off_chunk = off
    off_a = parts * part_bytes
    off_c = off_a + (0 if direct_a else _align(rows * K * es))
    chunk_bytes = off_c + (0 if direct_c else _align(rows * O * es))
    off += max(chunks, 1) * chunk_bytes
    return GemmConv(elem, P, K, O, rows, parts, part_bytes, chunks, blocks, direct_a, direct_b, direct_c, off_b,
                    off_chunk, chunk_bytes, off_a, off_c, off)


def emit_gemm_conv(kb, instr: Instruction, plan: GemmConv, out: K.Buf) -> None:
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs, res = lhs_i.array_shape, rhs_i.array_shape, instr.array_shape
    c = ConvDims(instr, lhs.rank, rhs.rank)
    wins = (instr.attr("window") or Window(())).dims
    ls, rs = row_major_strides(lhs.dims), row_major_strides(rhs.dims)
    lbuf, rbuf = kb.buffers[lhs_i.name], kb.buffers[rhs_i.name]
    T, Kd, O, C = plan.elem, plan.K, plan.O, lhs.dims[c.lhs_f]
    gemm = "aotc_dgemm" if T == F64 else "aotc_sgemm"
    # LD: elements between output rows; more than O when the output is the strided part of
    # a concatenation's buffer (KernelBuilder.out_rows: only without an epilogue)
    LD = O
    if kb.out_rows is not None:
        if kb.epilogue is not None or kb.out_rows[0] != res.rank - 1 or c.out_f != res.rank - 1:
            raise AssertionError(f"{instr.name}: a strided output needs features innermost and no epilogue")
        LD = kb.out_rows[1]
        kb.out_rows_done = True

    def cast(v: K.Expr) -> K.Expr:
        return v if v.ty == T else K.Cast(v, T)

    def scratch_at(off: K.Expr, base: str, size: int, elem: DType = T) -> K.Buf:
        """A typed view of `size` elements at byte `off` of the scratch."""
        name = kb.fresh(base)
        kb.emit(K.Let(K.Var(name, None), K.Ptr(kb.scratch, off, elem=elem, byte_view=True)))
        return K.Buf(name, elem, size)

    def call(m: K.Expr, a: K.Expr, b: K.Expr, cdst: K.Expr, scratch: K.Expr, ldc: int = O) -> None:
        fn, head = gemm, ()
        if plan.parts > 1:  # each call sliced over the pool when there is one; serial otherwise
            fn, head = f"{gemm}_threads", (kb.pool(), K.Const(plan.parts), K.Const(plan.part_bytes, U32))
        if rbuf.panels:  # weights stored in panels (convolution.py conv_rhs_in_panels): aotc_sgemm_pb
            kb.emit(K.CallStmt(fn.replace(gemm, "aotc_sgemm_pb"),
                               head + (m, K.Const(O), K.Const(Kd), a, K.Const(Kd), b, cdst, K.Const(ldc), scratch)))
            return
        kb.emit(K.CallStmt(fn, head + (m, K.Const(O), K.Const(Kd), a, K.Const(Kd), K.Const(1), b, K.Const(O),
                                         K.Const(1), cdst, K.Const(ldc), scratch)))

    # B: (window position, input feature) x output feature
    if plan.direct_b:
        b = rbuf
    else:
        b = scratch_at(K.Const(plan.off_b), "wk", Kd * O)
        ks, r_pairs = [], []
        for k, wd in enumerate(wins):
            v = kb.loop(kb.fresh(f"k{k}"), wd.size) if wd.size > 1 else ZERO
            ks.append(v)
            r_pairs.append((reversed_index(v, wd), rs[c.rhs_s[k]]))
        kpos = _window_position(ks, wins)
        ic = kb.loop(kb.fresh("ic"), C)
        oc = kb.loop(kb.fresh("oc"), O, (K.VECTOR,))
        src = dot_terms(r_pairs + [(ic, rs[c.rhs_i]), (oc, rs[c.rhs_o])])
        kb.store(b, (kpos * C + ic) * O + oc, cast(load_value(rhs.dtype, K.Load(rbuf, src))))
        kb.close()
        kb.close()
        for v in ks:
            if isinstance(v, K.Var):
                kb.close()

    def store_rows(cbuf: K.Buf, first: K.Expr, count: K.Expr) -> None:
        """Round `count` rows of the GEMM's result to the result type, from row `first` on."""
        dst = F32 if res.dtype.name in ("bf16", "f16") else res.dtype
        if LD != O:  # rows LD apart
            r = kb.loop(kb.fresh("r"), count)
            j = kb.loop(kb.fresh("j"), O, (K.VECTOR,))
            kb.store(out, (first + r) * LD + j, store_value(res.dtype, convert_expr(K.Load(cbuf, r * O + j), T, dst)))
            kb.close()
            kb.close()
            return
        i = kb.loop(kb.fresh("i"), count * O, (K.VECTOR,))
        kb.store(out, first * O + i, store_value(res.dtype, convert_expr(K.Load(cbuf, i), T, dst)))
        kb.close()

    def gemm_rows(first: K.Expr, count: K.Expr, a: K.Buf, cbuf: K.Buf | None, base: K.Expr) -> None:
        """C rows [first, first + count) from im2col rows `a` (scratch from byte `base` on),
        then the epilogue on those rows while they are in cache, if the kernel has one."""
        scratch = K.Ptr(kb.scratch, base, elem=U8, byte_view=True)
        if cbuf is None:
            call(count, K.Ptr(a), K.Ptr(b), K.Ptr(out, first * LD), scratch, LD)
        else:
            call(count, K.Ptr(a), K.Ptr(b), K.Ptr(cbuf), scratch)
        if kb.epilogue is not None:
            src, at = (out, first * O) if cbuf is None else (cbuf, ZERO)
            kb.apply_epilogue(instr, out, src, at, O, first, count, O)
        elif cbuf is not None:
            store_rows(cbuf, first, count)

    # an epilogue whose result type is not the GEMM's needs result rows of its own
    own_c = kb.epilogue is not None and plan.direct_c and out.dtype != T
    own_bytes = _align(plan.rows * O * (T.bits // 8))

    def result_rows(at: K.Expr, index: K.Expr, copies: int) -> K.Buf | None:
        """The scratch rows the GEMM writes (None: straight into the output)."""
        if not plan.direct_c:
            return scratch_at(at, "cbuf", plan.rows * O)
        if not own_c:
            return None
        kb.need_scratch(plan.scratch_bytes + copies * own_bytes)
        return scratch_at(index * own_bytes + plan.scratch_bytes, "cbuf", plan.rows * O)

    if plan.direct_a:
        cbuf = result_rows(K.Const(plan.off_chunk + plan.off_c), ZERO, 1)
        if (kb.epilogue is None or plan.parts == 1 or plan.P < 2 * plan.parts or plan.P < plan.O
                or plan.P // plan.parts < _MIN_RANGE_ROWS):
            gemm_rows(ZERO, K.Const(plan.P), lbuf, cbuf, K.Const(plan.off_chunk))
            return
        # with an epilogue and at least as many pixels as output features (and ranges of at
        # least _MIN_RANGE_ROWS: each range packs the whole rhs again): row ranges threads
        # may split, each GEMM (scratch of its own, at least 2 rows) then its epilogue, instead
        # of one GEMM sliced over the pool (which cuts the larger operand: with fewer pixels,
        # the rhs, so each column range is packed once, not once per row range)
        n = plan.parts
        ch = kb.loop(kb.fresh("ch"), n, (K.PARALLEL,))
        first = kb.let(ch * plan.P // n, "first")
        rows = K.Const(plan.P // n) if plan.P % n == 0 else kb.let((ch + 1) * plan.P // n - first, "rows")
        scratch = K.Ptr(kb.scratch, ch * plan.part_bytes + plan.off_chunk, elem=U8, byte_view=True)
        dst, at = (out, first * O) if cbuf is None else (cbuf, first * O)
        work = (plan.P // n) * O * Kd // 32
        if rbuf.panels:
            kb.emit(K.CallStmt("aotc_sgemm_pb", (rows, K.Const(O), K.Const(Kd), K.Ptr(lbuf, first * Kd), K.Const(Kd),
                                                 K.Ptr(b), K.Ptr(dst, at), K.Const(O), scratch), work))
        else:
            kb.emit(K.CallStmt(gemm, (rows, K.Const(O), K.Const(Kd), K.Ptr(lbuf, first * Kd), K.Const(Kd), K.Const(1),
                                      K.Ptr(b), K.Const(O), K.Const(1), K.Ptr(dst, at), K.Const(O), scratch), work))
        kb.apply_epilogue(instr, out, dst, at, O, first, rows, O)
        kb.close()
        return

    def im2col_row(a: K.Buf, row: K.Expr, o_var: dict[int, K.Expr]) -> None:
        """Row `row` of `a` for the output pixel at `o_var`: zeros on padding and dilation holes,
        then the window indices that land on input."""
        misses = any(span_misses_input(o_var[c.out_s[k]], wd, lhs.dims[c.lhs_s[k]]) for k, wd in enumerate(wins))
        spans = [] if misses else [window_span(kb, o_var[c.out_s[k]], wd, lhs.dims[c.lhs_s[k]],
                                               res.dims[c.out_s[k]], f"k{k}") for k, wd in enumerate(wins)]
        inside = NEVER if misses else all_of(s.inside for s in spans)
        if inside is not None:  # the row reaches padding or holes (for some output pixels): zeros first
            if inside != NEVER:
                kb.if_(negate(inside))
            z = kb.loop(kb.fresh("z"), Kd, (K.VECTOR,))
            kb.store(a, row + z, K.Const(0.0, T))
            kb.close()
            if inside != NEVER:
                kb.close()
        if misses:
            return
        # the last window dimension's indices that land, times the features, are one run in
        # the row and in the input when they are adjacent there (no dilation, features
        # innermost): one copy of up to KW*C elements instead of KW copies of C
        last, wl = len(spans) - 1, wins[-1]
        merge = (ls[c.lhs_f] == 1 and ls[c.lhs_s[last]] == C and wl.rhs_dilate == 1 and wl.lhs_dilate == 1
                 and spans[last].step == 1 and isinstance(spans[last].w, K.Var))
        opened, ks, l_pairs = 0, [], []
        for k, span in enumerate(spans):
            if merge and k == last:
                pos = kb.let(K.substitute_expr(span.pos, {span.w.name: span.lo}), "pos")
                ks.append(span.lo)
            else:
                pos, n = open_span(kb, span, ())
                opened += n
                ks.append(span.w)
            l_pairs.append((pos, ls[c.lhs_s[k]]))
        at = kb.let(row + _window_position(ks, wins) * C, "at")
        x_at = kb.let(dot_terms([(o_var[c.out_b], ls[c.lhs_b])] + l_pairs), "x_at")
        run = kb.let((spans[last].hi - spans[last].lo) * C, "run") if merge else K.Const(C)
        ic = kb.loop(kb.fresh("ic"), run, (K.VECTOR,))
        kb.store(a, at + ic, cast(load_value(lhs.dtype, K.Load(lbuf, x_at + ic * ls[c.lhs_f]))))
        kb.close()
        for _ in range(opened):
            kb.close()

    pixel_dims = [d for d in range(res.rank) if d != c.out_f]
    if plan.chunks:
        # pixel ranges with scratch of their own: threads may split them
        ch = kb.loop(kb.fresh("chunk"), plan.chunks, (K.PARALLEL,))
        base = kb.let(ch * plan.chunk_bytes + plan.off_chunk, "base")
        a = scratch_at(base + plan.off_a, "col", plan.rows * Kd)
        cbuf = result_rows(base + plan.off_c, ch, plan.chunks)
        blk = kb.loop(kb.fresh("blk"), plan.blocks)
        p0 = kb.let((ch * plan.blocks + blk) * plan.rows, "p0")
        i = kb.loop(kb.fresh("i"), plan.rows)
        p = kb.let(p0 + i, "p")
        o_var: dict[int, K.Expr] = {}
        stride = 1
        for d in reversed(pixel_dims):
            m = res.dims[d]
            o_var[d] = ZERO if m == 1 else kb.let((p // stride) % m if d != pixel_dims[0] else p // stride,
                                                  "b" if d == c.out_b else f"o{c.out_s.index(d)}")
            stride *= m
        im2col_row(a, kb.let(i * Kd, "row"), o_var)
        kb.close()
        gemm_rows(p0, K.Const(plan.rows), a, cbuf, base)
        kb.close()
        kb.close()
        return

    # one block of rows at a time, filled in pixel order; the GEMM runs when the block is full
    base = K.Const(plan.off_chunk)
    a = scratch_at(base + plan.off_a, "col", plan.rows * Kd)
    cbuf = result_rows(base + plan.off_c, ZERO, 1)
    r = kb.local(K.INDEX, ZERO, "r")  # rows filled in the current block
    p0 = kb.local(K.INDEX, ZERO, "p0")  # the block's first output pixel
    o_var = {}
    for d in pixel_dims:
        m = res.dims[d]
        o_var[d] = kb.loop(kb.fresh("b" if d == c.out_b else f"o{c.out_s.index(d)}"), m) if m > 1 else ZERO
    im2col_row(a, kb.let(r * Kd, "row"), o_var)
    kb.assign(r, r + 1)
    kb.if_(K.Binary("||", r.eq(plan.rows), (p0 + r).eq(plan.P), K.BOOL))
    gemm_rows(p0, r, a, cbuf, base)
    kb.assign(p0, p0 + r)
    kb.assign(r, ZERO)
    kb.close()
    for v in o_var.values():
        if isinstance(v, K.Var):
            kb.close()


def _window_position(ks: list[K.Expr], wins) -> K.Expr:
    """The row-major index of window position `ks` among all window positions."""
    return dot_terms((v, prod(w.size for w in wins[k + 1:])) for k, v in enumerate(ks))
