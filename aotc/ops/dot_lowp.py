"""Dots on the reduced-precision GEMMs of the runtime (aotc_lowp.c): bf16 x bf16 with f32
accumulation (a bf16 result rounded once from the f32 sum, as XLA:CPU computes it), and
s8 x s8 -> s32 (wrapping sums, bit-exact). The runtime picks vdpbf16ps / vpdpbusd / sdot /
vpmaddwd or its portable path from the compiler's feature macros; this module only emits the calls.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape
from ..kernel import ir as K
from ..kernel.builder import narrow_result, store_value
from ..runtime_c import gemm_part_scratch_bytes, lp_bgemm_scratch_bytes, lp_igemm_scratch_bytes

F32, S32 = DTYPES["f32"], DTYPES["s32"]
# one call with at least this many multiply-adds is cut into column ranges for the pool
THREADED_MACS = 1 << 20
PARTS = 4


def lowp_kind(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> str | None:
    """"bf16" or "s8" when the dot runs on aotc_lp_bgemm / aotc_lp_igemm, else None."""
    out = instr.array_shape.dtype.name
    if lhs.dtype.name == rhs.dtype.name == "bf16" and out in ("bf16", "f32"):
        return "bf16"
    if lhs.dtype.name == rhs.dtype.name == "s8" and out == "s32":
        return "s8"
    return None


def _up64(n: int) -> int:
    return (n + 63) // 64 * 64


def _parts(p) -> int:
    return PARTS if p.m * p.n * p.k >= THREADED_MACS else 1


def _part_scratch(kind: str, p) -> int:
    """Per-slice scratch of the widened f32 path's aotc_sgemm_threads (bf16 only)."""
    return gemm_part_scratch_bytes(p.m, p.n, p.k, _parts(p), 4, a_rows=True) if kind == "bf16" else 0


def _call_bytes(kind: str, p) -> int:
    if kind == "bf16":
        return _up64(lp_bgemm_scratch_bytes(p.m, p.n, p.k, _parts(p), _part_scratch(kind, p)))
    return _up64(lp_igemm_scratch_bytes(p.m, p.n, p.k))


def _result_bytes(instr: Instruction, p) -> int:
    """An f32 block for the whole result when it is not the GEMM's own type (bf16 out)."""
    return 0 if instr.array_shape.dtype.name in ("f32", "s32") else _up64(instr.array_shape.size * 4)


def lowp_scratch(instr: Instruction, kind: str, p) -> int:
    return _result_bytes(instr, p) + _call_bytes(kind, p)


def emit_lowp(kb, instr: Instruction, kind: str, p, lbuf: K.Buf, rbuf: K.Buf, out: K.Buf) -> None:
    """The product's GEMM calls (one per point of the plan's loops) into the output or an
    f32 block, then the rounding to bf16 and the kernel's epilogue, if any."""
    odt = instr.array_shape.dtype
    gemm_t = F32 if kind == "bf16" else S32
    res_bytes = _result_bytes(instr, p)
    kb.need_scratch(lowp_scratch(instr, kind, p))
    if res_bytes or (kb.epilogue is not None and out.dtype != gemm_t):
        res = K.Buf(kb.fresh("res"), gemm_t, instr.array_shape.size)
        kb.emit(K.Let(K.Var(res.name, None), K.Ptr(kb.scratch, K.Const(0), elem=gemm_t, byte_view=True)))
        res_bytes = res_bytes or _up64(instr.array_shape.size * 4)
        kb.need_scratch(res_bytes + _call_bytes(kind, p))
    else:
        res = out
    fn = "aotc_lp_bgemm" if kind == "bf16" else "aotc_lp_igemm"
    parts = _parts(p)
    head = (kb.pool(), K.Const(parts), K.Const(_part_scratch(kind, p), DTYPES["u32"]))
    work = max(p.m * p.n * p.k // 64, 1)
    scratch = K.Ptr(kb.scratch, K.Const(res_bytes), elem=DTYPES["u8"], byte_view=True) if res_bytes \
        else K.Ptr(kb.scratch)

    def call(ao: K.Expr, bo: K.Expr, co: K.Expr) -> None:
        kb.emit(K.CallStmt(fn, head + (K.Const(p.m), K.Const(p.n), K.Const(p.k), K.Ptr(lbuf, ao), K.Const(p.a_rs),
                                       K.Const(p.a_cs), K.Ptr(rbuf, bo), K.Const(p.b_rs), K.Const(p.b_cs),
                                       K.Ptr(res, co), K.Const(p.ldc), scratch), work))

    if p.count == 1:
        call(K.Const(0), K.Const(0), K.Const(0))
    else:
        bv = kb.loop(kb.fresh("b"), p.count)
        loff, roff, coff, _ = p.loop_offsets(bv)
        call(loff, roff, coff)
        kb.close()
    rows = instr.array_shape.size // p.ldc
    if kb.epilogue is not None:
        kb.apply_epilogue(instr, out, res, K.Const(0), p.ldc, K.Const(0), K.Const(rows), p.ldc)
    elif res is not out:
        i = kb.loop(kb.fresh("i"), instr.array_shape.size, (K.VECTOR,))
        kb.store(out, i, store_value(odt, narrow_result(odt, K.Load(res, i))))
        kb.close()
