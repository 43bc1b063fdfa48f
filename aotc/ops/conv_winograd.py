"""Convolution by Winograd's minimal filtering, F(2x2,3x3) or F(4x4,3x3), when the
`conv_algorithm` option asks for it: the plan (which convolutions qualify, how tiles are
blocked over threads) and the kernel calling the runtime's aotc_wino_* functions.

Only stride-1, undilated, unreversed 3x3 f32 convolutions without groups whose result is
[batch, rows, columns, features] in that order, with at least _MIN_TILES tiles, qualify; everything else stays with
convolution.py and conv_gemm.py. Winograd rounds differently from XLA's direct sums
(docs/winograd.md has the measured errors), which is why it is an option.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction, Window
from ..hlo.shape import ArrayShape, row_major_strides
from ..kernel import ir as K
from ..runtime_c import gemm_scratch_bytes
from .conv_taps import chunk_items
from .dot import GEMM_PARTS, THREADED_MACS
from .window import ConvDims

F32, U8 = DTYPES["f32"], DTYPES["u8"]

# option value -> output tile size m of F(m x m, 3 x 3)
ALGORITHMS = {"winograd2": 2, "winograd4": 4}

# fewer tiles (over the batch) than this: the weight transform, done on every call, costs more
# than the tiles save, and the convolution stays direct
_MIN_TILES = 32
_BLOCK_TILES = 64  # tiles per block (the GEMMs' rows): at least this many, in whole tile rows
_BLOCK_BYTES = 4 * 1024 * 1024  # a block's transformed input and GEMM results fit in this


@dataclass(frozen=True, slots=True)
class WinogradConv:
    m: int  # output tile
    B: int  # batch
    H: int  # input rows, columns, features
    W: int
    C: int
    OH: int  # output rows, columns, features
    OW: int
    O: int
    pad_h: int  # input rows (columns) before the first: the window's low padding
    pad_w: int
    x_strides: tuple[int, int, int, int]  # lhs element strides of batch, row, column, feature
    w_strides: tuple[int, int, int, int]  # rhs element strides of row, column, input, output feature
    tile_rows: int  # tile rows per block
    blocks: int  # blocks per image
    chunks: int  # ranges of blocks with scratch of their own (threads split them)
    block_bytes: int  # a chunk's block scratch
    u_bytes: int  # transformed weights, at the start of each chunk's scratch
    scratch_bytes: int


@dataclass(frozen=True, slots=True)
class WinogradWeights:
    """The transform U = G g G^T a constant weight is stored as (lower/panels.py): for
    F(m x m, 3 x 3), C input and O output features, the weight's element strides of row,
    column, input and output feature. U[p][c][o], p = i * (m + 2) + j, row-major f32: the
    layout aotc_wino_weights_f32 writes."""
    m: int
    C: int
    O: int
    w_strides: tuple[int, int, int, int]


def _align(n: int) -> int:
    return (n + 63) // 64 * 64


def _block_bytes(m: int, T: int, C: int, O: int) -> int:
    """aotc_wino_scratch_need of aotc_winograd.c, on every ISA."""
    nn = (m + 2) ** 2
    return _align(nn * T * C * 4) + _align(nn * T * O * 4) + gemm_scratch_bytes(T, O, C, 4, a_rows=True)


def winograd_plan(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape, algorithm: str) -> WinogradConv | None:
    """How to run this convolution by Winograd under option `algorithm`, or None when the
    option is `direct` or the convolution does not qualify."""
    m = ALGORITHMS.get(algorithm)
    out = instr.array_shape
    if m is None or lhs.rank != 4 or 0 in lhs.dims or 0 in rhs.dims or 0 in out.dims:
        return None
    if instr.attr("feature_group_count", 1) != 1 or instr.attr("batch_group_count", 1) != 1:
        return None
    if not (lhs.dtype == rhs.dtype == out.dtype == F32):
        return None
    wins = (instr.attr("window") or Window(())).dims
    if len(wins) != 2 or any(w.size != 3 or w.stride != 1 or w.lhs_dilate != 1 or w.rhs_dilate != 1 or w.reversal
                             for w in wins):
        return None
    c = ConvDims(instr, lhs.rank, rhs.rank)
    if (c.out_b, c.out_s, c.out_f) != (0, (1, 2), 3):
        return None
    B, H, W, C = lhs.dims[c.lhs_b], lhs.dims[c.lhs_s[0]], lhs.dims[c.lhs_s[1]], lhs.dims[c.lhs_f]
    OH, OW, O = out.dims[1], out.dims[2], out.dims[3]
    ls, rs = row_major_strides(lhs.dims), row_major_strides(rhs.dims)
    tw, th = -(-OW // m), -(-OH // m)
    if B * tw * th < _MIN_TILES:
        return None
    rows = max(1, min(th, -(-_BLOCK_TILES // tw)))
    while rows > 1 and _block_bytes(m, rows * tw, C, O) > _BLOCK_BYTES:
        rows -= 1
    blocks = -(-th // rows)
    threaded = B * OH * OW * C * O * 9 >= THREADED_MACS
    chunks = min(GEMM_PARTS, B * blocks) if threaded else 1
    block_bytes = _align(_block_bytes(m, rows * tw, C, O))
    u_bytes = _align((m + 2) ** 2 * C * O * 4)
    return WinogradConv(m, B, H, W, C, OH, OW, O, wins[0].pad_lo, wins[1].pad_lo,
                        (ls[c.lhs_b], ls[c.lhs_s[0]], ls[c.lhs_s[1]], ls[c.lhs_f]),
                        (rs[c.rhs_s[0]], rs[c.rhs_s[1]], rs[c.rhs_i], rs[c.rhs_o]),
                        rows, blocks, chunks, block_bytes, u_bytes, chunks * (u_bytes + block_bytes))


def stored_transform(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape, algorithm: str) -> WinogradWeights | None:
    """The transform a constant weight of this convolution is stored as, when the
    convolution runs by Winograd (an f32 result: ops/convolution.py `_conv_kernel`)."""
    p = winograd_plan(instr, lhs, rhs, algorithm)
    return None if p is None else WinogradWeights(p.m, p.C, p.O, p.w_strides)


# G of F(2x2,3x3) and F(4x4,3x3) as aotc__wino_g2 / aotc__wino_g4 compute it, in double:
# each row's operations in the C code's order (the sums left to right, then the scale)
def _g2(v0: np.ndarray, v1: np.ndarray, v2: np.ndarray) -> list[np.ndarray]:
    return [v0, ((v0 + v1) + v2) * 0.5, ((v0 - v1) + v2) * 0.5, v2]


def _g4(v0: np.ndarray, v1: np.ndarray, v2: np.ndarray) -> list[np.ndarray]:
    a, b, c = 1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0
    return [v0 * 0.25, ((v0 + v1) + v2) * (-1.0 / 6.0), ((v0 - v1) + v2) * (-1.0 / 6.0),
            (v0 * a + v1 * b) + v2 * c, (v0 * a - v1 * b) + v2 * c, v2]


_TINY32 = float(np.finfo(np.float32).tiny)


def winograd_weights(w: np.ndarray, t: WinogradWeights) -> np.ndarray:
    """U of the weight `w` (its f32 values, any shape, read through `t.w_strides`), bit for
    bit what aotc_wino_weights_f32 writes under the kernels' floating-point environment:
    a subnormal weight reads as zero (DAZ), G is applied down the window's rows, then along
    its columns, in double, and each value is rounded once to f32, a subnormal result
    flushed to zero (FTZ)."""
    flat = np.ascontiguousarray(w, dtype=np.float32).reshape(-1)
    wr, ws, wi, wo = t.w_strides
    c, o = np.arange(t.C)[:, None], np.arange(t.O)[None, :]
    g = [[flat[r * wr + s * ws + c * wi + o * wo].astype(np.float64) for s in range(3)] for r in range(3)]
    g = [[np.where(np.abs(v) < _TINY32, np.copysign(0.0, v), v) for v in row] for row in g]
    G = _g2 if t.m == 2 else _g4
    with np.errstate(all="ignore"):  # inf and NaN weights give what C gives, silently
        cols = [G(g[0][s], g[1][s], g[2][s]) for s in range(3)]  # cols[s][i]: G down column s
        u = [G(cols[0][i], cols[1][i], cols[2][i]) for i in range(t.m + 2)]  # u[i][j]
        out = np.stack([u_ij for row in u for u_ij in row]).astype(np.float32)  # [p][c][o]
    out = np.where(np.abs(out) < _TINY32, np.copysign(np.float32(0), out), out)
    return out.reshape(-1)


def emit_winograd_conv(kb, instr: Instruction, plan: WinogradConv, out: K.Buf) -> None:
    """Per chunk of blocks (threads split them): the weight transform (every call, unless the
    compiler stored the constant weight transformed), then blocks of tile rows, each
    transformed, multiplied and written to the output, then the epilogue on its rows while
    they are in cache."""
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lbuf, rbuf = kb.buffers[lhs_i.name], kb.buffers[rhs_i.name]
    p = plan
    if rbuf.winograd:
        if rbuf.winograd != p.m:
            raise AssertionError(f"{instr.name}: weight stored for F({rbuf.winograd}x{rbuf.winograd}), run by {p.m}")
        p = replace(p, u_bytes=0, scratch_bytes=p.chunks * p.block_bytes)
    kb.need_scratch(p.scratch_bytes)

    def view(off: K.Expr, base: str, size: int) -> K.Buf:
        name = kb.fresh(base)
        kb.emit(K.Let(K.Var(name, None), K.Ptr(kb.scratch, off, elem=F32, byte_view=True)))
        return K.Buf(name, F32, size)

    items = p.B * p.blocks
    ch = kb.loop(kb.fresh("chunk"), p.chunks, (K.PARALLEL,)) if p.chunks > 1 else K.Const(0)
    # each chunk transforms the weights into its own scratch: a call before the threaded loop
    # would keep the kernel on one thread (kernel/parallel.py)
    at = kb.let(ch * (p.u_bytes + p.block_bytes), "at")
    if rbuf.winograd:
        u = rbuf
    else:
        u = view(at, "wu", (p.m + 2) ** 2 * p.C * p.O)
        kb.emit(K.CallStmt("aotc_wino_weights_f32", (K.Const(p.m), K.Const(p.C), K.Const(p.O), K.Ptr(rbuf))
                           + tuple(K.Const(s) for s in p.w_strides) + (K.Ptr(u),), p.C * p.O * 4))
    base = kb.let(at + p.u_bytes, "base")
    item = chunk_items(kb, ch, items, p.chunks)
    b = kb.let(item // p.blocks, "b") if p.B > 1 else K.Const(0)
    tr0 = kb.let(item % p.blocks * p.tile_rows, "tr0") if p.blocks > 1 else K.Const(0)
    xs_b, xs_h, xs_w, xs_c = p.x_strides
    img = p.OH * p.OW * p.O
    tiles = p.tile_rows * -(-p.OW // p.m)
    kb.emit(K.CallStmt("aotc_wino_conv_f32",
                       (K.Const(p.m), K.Const(p.C), K.Const(p.O), K.Ptr(lbuf, b * xs_b), K.Const(p.H), K.Const(p.W),
                        K.Const(xs_h), K.Const(xs_w), K.Const(xs_c), K.Const(p.pad_h), K.Const(p.pad_w),
                        K.Const(p.OH), K.Const(p.OW), tr0, K.Const(p.tile_rows), K.Ptr(u), K.Ptr(out, b * img),
                        K.Ptr(kb.scratch, base, elem=U8, byte_view=True)),
                       (p.m + 2) ** 2 * tiles * p.C * p.O // 32))
    if kb.epilogue is not None:
        row0 = kb.let(tr0 * p.m, "row0")
        left = K.Const(p.OH) - row0
        full = K.Const(p.tile_rows * p.m)
        nrows = kb.let(K.Select(left.lt(full), left, full, K.INDEX), "nrows")
        px = kb.let((b * p.OH + row0) * p.OW, "px")
        kb.apply_epilogue(instr, out, out, px * p.O, p.O, px, nrows * p.OW, p.O)
    kb.close()
    if p.chunks > 1:
        kb.close()
