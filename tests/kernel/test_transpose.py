"""kernel/transpose.py: which copy nests become tiled transposes (aotc_tr_f32) and with
which arguments; the C it leads to is checked against XLA in tests/ops/test_transpose_tiles.py
and the runtime function in tests/runtime_c/test_transpose.py."""
from __future__ import annotations

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.transpose import tile_transposes

F32, S32 = DTYPES["f32"], DTYPES["s32"]
R, C, H = K.Var("r"), K.Var("c"), K.Var("h")
SRC, DST = K.Buf("src", F32, 1 << 16), K.Buf("dst", F32, 1 << 16)


def _nest(load_index: K.Expr, store_index: K.Expr, rows: int = 64, cols: int = 48, src: K.Buf = SRC,
          value=lambda x: x, extra: tuple = ()) -> K.Loop:
    x = K.Var("x", src.dtype)
    inner = K.Loop(C, K.Const(0), K.Const(cols),
                   extra + (K.Let(x, K.Load(src, load_index)), K.Store(DST, store_index, value(x))), 1,
                   frozenset({K.PARALLEL, K.VECTOR}))
    return K.Loop(R, K.Const(0), K.Const(rows), (inner,), 1, frozenset({K.PARALLEL}))


def _calls(body) -> list[K.CallStmt]:
    return [s for s in K.walk(body) if isinstance(s, K.CallStmt)]


def test_a_column_read_becomes_strips_of_tiles():
    # dst[r*48 + c] = src[c*64 + r]
    body, changed = tile_transposes((_nest(C * 64 + R, R * 48 + C),))
    assert changed
    (call,) = _calls(body)
    strip = body[0]
    assert isinstance(strip, K.Loop) and strip.stop == K.Const(4) and K.PARALLEL in strip.marks
    rows, cols, src, lds, dst, ldd = call.args
    assert (rows, cols, lds, ldd) == (K.Const(16), K.Const(48), K.Const(64), K.Const(768 // 16))
    assert src.buf == SRC and dst.buf == DST
    assert call.work == 16 * 48


def test_index_locals_and_outer_loops_are_kept():
    # a head loop around it: dst[(r*4 + h)*40 + c] = src[h*5120 + c*128 + r], through an index local
    l_ = K.Var("l")
    x = K.Var("x", F32)
    inner = K.Loop(C, K.Const(0), K.Const(40),
                   (K.Let(l_, R * 4 + H), K.Let(x, K.Load(SRC, H * 5120 + C * 128 + R)), K.Store(DST, l_ * 40 + C, x)),
                   1, frozenset({K.PARALLEL}))
    mid = K.Loop(H, K.Const(0), K.Const(4), (inner,), 1, frozenset({K.PARALLEL}))
    top = K.Loop(R, K.Const(0), K.Const(12), (mid,), 1, frozenset({K.PARALLEL}))
    body, changed = tile_transposes((top,))
    assert changed
    assert body[0].var == H  # the row loop (r) is gone, the head loop stays
    (call,) = _calls(body)
    assert call.args[0] == K.Const(12) and call.args[3] == K.Const(128) and call.args[5] == K.Const(160)


def test_what_is_not_a_tiled_transpose():
    same = [
        _nest(C * 4 + R, R * 48 + C),                           # a short stride: no column read
        _nest(C * 64 + R * 2, R * 48 + C),                      # no loop steps the read by one
        _nest(C * 64 + R, R * 48 + C, value=lambda x: K.Unary("-", x, F32)),  # computes
        _nest(C * 64 + R, R * 48 + C, rows=4),                  # less than a tile of rows
        _nest(C * 64 + R, R * 48 + C, src=K.Buf("ints", S32, 1 << 16)),      # not f32
        _nest(C * 64 + R, R * 48 + C, extra=(K.Store(DST, K.Const(0), K.Const(0.0, F32)),)),  # another store
        _nest(C * 64 + R * R, R * 48 + C),                      # not affine
        _nest(C * 64 + R, R * 40 + C),                          # rows of the output overlap
    ]
    for nest in same:
        body, changed = tile_transposes((nest,))
        assert not changed and body == (nest,)


def test_stores_through_an_outer_loop_must_not_overlap():
    # dst[h*100 + r*48 + c]: the head loop steps less than one head's 64 x 48 block
    x = K.Var("x", F32)
    inner = K.Loop(C, K.Const(0), K.Const(48), (K.Let(x, K.Load(SRC, H * 4096 + C * 64 + R)),
                                                K.Store(DST, H * 100 + R * 48 + C, x)), 1, frozenset({K.PARALLEL}))
    mid = K.Loop(R, K.Const(0), K.Const(64), (inner,), 1, frozenset({K.PARALLEL}))
    top = K.Loop(H, K.Const(0), K.Const(4), (mid,), 1, frozenset({K.PARALLEL}))
    body, changed = tile_transposes((top,))
    assert not changed and body == (top,)
    wide = K.Loop(H, K.Const(0), K.Const(4), (K.Loop(R, K.Const(0), K.Const(64), (K.Loop(
        C, K.Const(0), K.Const(48), (K.Let(x, K.Load(SRC, H * 4096 + C * 64 + R)),
                                     K.Store(DST, H * 3072 + R * 48 + C, x)), 1, frozenset({K.PARALLEL})),), 1,
        frozenset({K.PARALLEL})),), 1, frozenset({K.PARALLEL}))
    assert tile_transposes((wide,))[1]  # one block per head: tiled
