"""Convolution as one GEMM over the window positions, with no im2col matrix: the plan
(which convolutions take it, how output rows are blocked over threads) and the kernel
calling the runtime's aotc_taps_* functions (runtime_c/aotc_taps.c).

A block of output rows copies the input rows it reads, zero-padded, into a small slice;
the GEMM's micro-kernel then reads each window position's input features from the slice
in place. The sums are the im2col GEMM's (conv_gemm.py), term for term and in the same K
blocks, so the bits are the same; what is saved is writing and reading the im2col matrix,
KH*KW times the input, which costs most where the output has few features (DenseNet's
3x3 convolutions to 32).

Taken for stride-1, undilated, unreversed f32 convolutions without groups, with 1 or 2
spatial dimensions, [batch, spatial..., feature] input and output and [spatial..., in, out]
weights, a window of more than one position, at least _MIN_C input features and packed
weights of at most _MAX_PACKED_BYTES (wider products lose little to im2col).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction, Window
from ..hlo.shape import ArrayShape, row_major_strides
from ..kernel import ir as K
from ..kernel.parallel import RANGE_START
from .dot import GEMM_PARTS, THREADED_MACS
from .window import ConvDims

F32, U8 = DTYPES["f32"], DTYPES["u8"]

_MIN_C = 16  # fewer input features: each window position's run is too short for the micro-kernel
_MAX_PACKED_BYTES = 1 << 20
_NR_MAX = 32  # AOTC__TAPS_NR_MAX: the packed weights' columns are rounded up to this
_BLOCK_PIXELS = 256  # output pixels per block, in whole output rows
_SLICE_BYTES = 256 * 1024  # a block's padded input rows stay in L2


@dataclass(frozen=True, slots=True)
class TapsConv:
    B: int  # batch
    H: int  # input rows, columns (1 for one spatial dimension), features
    W: int
    C: int
    OH: int  # output rows, columns, features
    OW: int
    O: int
    KH: int  # window rows, columns
    KW: int
    pad_h: int  # the window's low padding: input rows (columns) before the first
    pad_w: int
    x_strides: tuple[int, int, int]  # lhs element strides of batch, row, column
    rows: int  # output rows per block
    blocks: int  # blocks per image
    chunks: int  # ranges of blocks with a slice of their own (threads split them)
    packed_bytes: int  # the packed weights, at the start of each chunk's scratch
    slice_bytes: int  # then the chunk's slice
    chunk_bytes: int
    scratch_bytes: int

    def stored(self) -> TapsConv:
        """The plan for a constant weight stored in aotc_sgemm_pb's panels
        (ops/convolution.py conv_rhs_in_panels): nothing is packed, a chunk's scratch is its slice."""
        return replace(self, packed_bytes=0, chunk_bytes=self.slice_bytes, scratch_bytes=self.chunks * self.slice_bytes)


def _align(n: int) -> int:
    return (n + 63) // 64 * 64


def _slice_bytes(C: int, KH: int, KW: int, OW: int, rows: int) -> int:
    """aotc_taps_scratch_need."""
    return _align((rows + KH - 1) * (OW + KW - 1) * C * 4)


def taps_plan(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> TapsConv | None:
    """How to run this convolution through aotc_taps_conv_f32, or None when it does not
    qualify (conv_gemm.py's im2col path then runs it, with the same bits)."""
    out = instr.array_shape
    if not (lhs.dtype == rhs.dtype == out.dtype == F32) or 0 in lhs.dims or 0 in rhs.dims or 0 in out.dims:
        return None
    if instr.attr("feature_group_count", 1) != 1 or instr.attr("batch_group_count", 1) != 1:
        return None
    wins = (instr.attr("window") or Window(())).dims
    if len(wins) not in (1, 2) or lhs.rank != len(wins) + 2 or prod(w.size for w in wins) < 2:
        return None
    if any(w.stride != 1 or w.lhs_dilate != 1 or w.rhs_dilate != 1 or w.reversal for w in wins):
        return None
    c = ConvDims(instr, lhs.rank, rhs.rank)
    n = len(wins)
    spatial = tuple(range(1, n + 1))
    if (c.lhs_b, c.lhs_s, c.lhs_f) != (0, spatial, n + 1) or (c.out_b, c.out_s, c.out_f) != (0, spatial, n + 1):
        return None
    if (c.rhs_s, c.rhs_i, c.rhs_o) != (tuple(range(n)), n, n + 1):
        return None
    C, O = lhs.dims[-1], out.dims[-1]
    K_ = C * prod(w.size for w in wins)
    packed = _align(-(-O // _NR_MAX) * _NR_MAX * K_ * 4)
    if C < _MIN_C or packed > _MAX_PACKED_BYTES:
        return None
    B = lhs.dims[0]
    if n == 1:
        H, W, OH, OW, KH, KW, pad_h, pad_w = 1, lhs.dims[1], 1, out.dims[1], 1, wins[0].size, 0, wins[0].pad_lo
    else:
        H, W, OH, OW = lhs.dims[1], lhs.dims[2], out.dims[1], out.dims[2]
        KH, KW, pad_h, pad_w = wins[0].size, wins[1].size, wins[0].pad_lo, wins[1].pad_lo
    ls = row_major_strides(lhs.dims)
    x_strides = (ls[0], ls[1] if n == 2 else 0, ls[-2])
    cap = max(1, min(OH, _BLOCK_PIXELS // OW))
    while cap > 1 and _slice_bytes(C, KH, KW, OW, cap) > _SLICE_BYTES:
        cap -= 1
    blocks = -(-OH // cap)
    threaded = out.size * K_ >= THREADED_MACS
    if threaded:  # at least one block per slice, and a whole number of blocks per slice for one image
        blocks = max(blocks, -(-GEMM_PARTS // B))
        if B == 1:
            blocks = -(-blocks // GEMM_PARTS) * GEMM_PARTS
    rows = -(-OH // min(blocks, OH))  # blocks of even height: threads get even shares
    blocks = -(-OH // rows)
    chunks = min(GEMM_PARTS, B * blocks) if threaded else 1
    slice_bytes = _slice_bytes(C, KH, KW, OW, rows)
    return TapsConv(B, H, W, C, OH, OW, O, KH, KW, pad_h, pad_w, x_strides, rows, blocks, chunks, packed,
                    slice_bytes, packed + slice_bytes, chunks * (packed + slice_bytes))


def chunk_items(kb, ch: K.Expr, items: int, chunks: int) -> K.Expr:
    """Open the loop over chunk `ch`'s share of `items` work items (the chunks take them in
    order, as evenly as they divide, the larger shares first) and return the item's index;
    the caller closes it. The pool hands chunks out in order to whichever thread is free, so
    larger shares first even the threads out: 14 blocks in 4 chunks as 4, 3, 4, 3 finish
    on two threads after 7 blocks each, as 3, 4, 3, 4 after 6 and 8.
    Shared by the blocked convolutions here and in conv_winograd.py."""
    first = kb.let((ch * items + (chunks - 1)) // chunks, "first") if chunks > 1 else K.Const(0)
    if items % chunks == 0:
        count: K.Expr = K.Const(items // chunks)
    else:
        count = kb.let(((ch + 1) * items + (chunks - 1)) // chunks - first, "count")
    it = kb.loop(kb.fresh("it"), count)
    return kb.let(first + it, "item")


def emit_taps_conv(kb, instr: Instruction, plan: TapsConv, out: K.Buf) -> None:
    """Per slice of the blocks (threads split them): the weights packed (once per call of the
    threaded loop; not at all when the compiler stored them in panels), then blocks of output
    rows, each one GEMM over the window positions, then the epilogue on its rows while they
    are in cache."""
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lbuf, rbuf = kb.buffers[lhs_i.name], kb.buffers[rhs_i.name]
    p = plan.stored() if rbuf.panels else plan
    res = instr.array_shape
    kb.need_scratch(p.scratch_bytes)
    LD = p.O  # elements between output pixels: more when the output is a concatenation's part
    if kb.out_rows is not None:
        if kb.epilogue is not None or kb.out_rows[0] != res.rank - 1:
            raise AssertionError(f"{instr.name}: a strided output needs features innermost and no epilogue")
        LD = kb.out_rows[1]
        kb.out_rows_done = True
    Kd = p.KH * p.KW * p.C
    items = p.B * p.blocks
    ch = kb.loop(kb.fresh("chunk"), p.chunks, (K.PARALLEL,)) if p.chunks > 1 else K.Const(0)
    if rbuf.panels:
        weights, conv = rbuf, "aotc_taps_conv_pb_f32"
    else:
        # each call of the threaded loop packs the weights once, at its first chunk, into that
        # chunk's scratch, and its other chunks read them there: a call before the threaded
        # loop would keep the kernel on one thread (kernel/parallel.py)
        first = RANGE_START if p.chunks > 1 else K.Const(0)
        name = kb.fresh("wp")
        kb.emit(K.Let(K.Var(name, None), K.Ptr(kb.scratch, first * p.chunk_bytes, elem=F32, byte_view=True)))
        weights, conv = K.Buf(name, F32, p.packed_bytes // 4), "aotc_taps_conv_f32"
        pack = K.CallStmt("aotc_taps_pack_f32", (K.Const(Kd), K.Const(p.O), K.Ptr(rbuf), K.Ptr(weights)),
                          Kd * p.O // 32)
        kb.emit(K.If(ch.eq(first), (pack,)) if p.chunks > 1 else pack)
    base = kb.let(ch * p.chunk_bytes + p.packed_bytes, "slice")
    item = chunk_items(kb, ch, items, p.chunks)
    b = kb.let(item // p.blocks, "b") if p.B > 1 else K.Const(0)
    r0 = kb.let(item % p.blocks * p.rows, "r0") if p.blocks > 1 else K.Const(0)
    if p.OH % p.rows == 0:
        nrows: K.Expr = K.Const(p.rows)
    else:
        left = K.Const(p.OH) - r0
        nrows = kb.let(K.Select(left.lt(K.Const(p.rows)), left, K.Const(p.rows), K.INDEX), "nrows")
    px = kb.let((b * p.OH + r0) * p.OW, "px")
    xs_b, xs_h, xs_w = p.x_strides
    kb.emit(K.CallStmt(conv,
                       (K.Const(p.C), K.Const(p.O), K.Const(p.KH), K.Const(p.KW), K.Ptr(lbuf, b * xs_b),
                        K.Const(p.H), K.Const(p.W), K.Const(xs_h), K.Const(xs_w), K.Const(p.pad_h),
                        K.Const(p.pad_w), K.Const(p.OW), r0, nrows, K.Ptr(weights), K.Ptr(out, px * LD),
                        K.Const(LD), K.Ptr(kb.scratch, base, elem=U8, byte_view=True)),
                       p.OH * p.OW * p.O * Kd // p.blocks // 32))  # a block's share of the GEMM
    if kb.epilogue is not None:
        kb.apply_epilogue(instr, out, out, px * p.O, p.O, px, nrows * p.OW, p.O)
    kb.close()
    if p.chunks > 1:
        kb.close()
