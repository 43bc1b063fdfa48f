"""kernel/stream.py: which stores go around the caches. Only vector-body stores to a large
output the kernel does not read; the kernel then ends with the fence. The results are
checked against XLA (and against plain stores) in tests/ops/test_stream_stores.py."""
from __future__ import annotations

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.stream import FENCE, stream_large_stores
from aotc.kernel.vectorize import SIMD, mark_simd

F32 = DTYPES["f32"]
I = K.Var("i")
N = 1 << 20
X, OUT, ROW = K.Buf("x", F32, N), K.Buf("out", F32, N), K.Buf("row", F32, 64)
BIG = {"out": 4 * N}


def _map(*extra: K.Stmt, value: K.Expr | None = None) -> tuple[K.Stmt, ...]:
    v = value if value is not None else K.Load(X, I) * K.Const(2.0, F32)
    loop = K.Loop(I, K.Const(0), K.Const(N - 3), (K.Store(OUT, I, v), *extra), 1, frozenset({K.VECTOR}))
    body, _ = mark_simd((loop,))
    assert SIMD in body[0].marks
    return body


def _stores(body) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for s in K.walk(body):
        if isinstance(s, K.Store):
            out.setdefault(s.buf.name, []).append(s.stream)
    return out


def test_a_large_output_streams_and_the_kernel_ends_with_the_fence():
    body, changed = stream_large_stores(_map(), BIG, 1 << 20)
    assert changed and _stores(body) == {"out": [True]}
    assert body[-1] == K.CallStmt(FENCE, ())
    c = "\n".join(stmts(body))
    assert "aotc_vf_stream(&out[i]" in c  # the vector body
    assert "out[i] = " in c  # the scalar tail (N - 3 is no multiple of the vector) stores plainly
    assert c.rstrip().endswith("aotc_stream_fence();")


def test_below_the_threshold_or_switched_off_nothing_changes():
    body = _map()
    assert stream_large_stores(body, BIG, 4 * N + 1) == (body, False)
    assert stream_large_stores(body, BIG, 0) == (body, False)
    assert stream_large_stores(body, {}, 1) == (body, False)  # not an output: a local or scratch


def test_an_output_the_kernel_reads_is_not_streamed():
    read_back = _map(value=K.Load(OUT, I) + K.Load(X, I))  # in place, or a fold over its own output
    assert stream_large_stores(read_back, BIG, 1) == (read_back, False)
    handed = _map() + (K.CallStmt("aotc_gemm", (K.Ptr(OUT),)),)  # a micro-kernel reads or writes it too
    assert stream_large_stores(handed, BIG, 1) == (handed, False)


def test_only_stores_in_a_vector_body_stream():
    scalar = (K.Loop(I, K.Const(0), K.Const(N), (K.Store(OUT, I, K.Load(X, I)),), 1),)  # not vectorized
    assert stream_large_stores(scalar, BIG, 1) == (scalar, False)
    # a local row beside the output in the same vector body keeps plain stores
    body, changed = stream_large_stores(_map(K.Store(ROW, I, K.Load(X, I))), BIG, 1)
    assert changed and _stores(body) == {"out": [True], "row": [False]}


def test_the_stream_flag_survives_expression_rewrites():
    body, _ = stream_large_stores(_map(), BIG, 1)
    again = K.map_exprs(body, lambda e: e)
    assert _stores(again) == {"out": [True]}
