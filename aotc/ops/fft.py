"""The `fft` op (fft_type FFT, IFFT, RFFT, IRFFT over 1-3 trailing dimensions): its
attributes, shape rule and kernel. The kernel is a call of the runtime's FFT
(`runtime_c/aotc_fft.c`) over ranges of the batch; the ranges one thread runs share the
scratch of its first one (its tables and work buffers), so threads may split them; every
transform is computed alone, so the bits do not depend on the split. A batch too small to
split (one 2-D transform) splits each axis's lines over the pool instead, in whole blocks of
lines, each line transformed as the serial call transforms it. Lengths the shape rule cannot match are refused, never read out of range.
"""
from __future__ import annotations

from math import log2, prod

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape
from ..kernel import ir as K
from ..kernel.parallel import RANGE_START
from ..runtime_c import FFT_KINDS, FFT_LANES, fft_scratch_bytes
from .elementwise import _arr
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_COMPLEX = {"c64": "f32", "c128": "f64"}  # complex type -> its real type
_REAL = {v: k for k, v in _COMPLEX.items()}
_MIN_PART_WORK = 1 << 16  # butterflies (n log2 n per transform) a batch range is worth on its own
_MAX_PARTS = 8


def _attrs(instr: Instruction) -> tuple[str, tuple[int, ...]]:
    kind = instr.attr("fft_type")
    kind = getattr(kind, "name", kind)
    if kind is None:
        raise ShapeError("fft needs an fft_type (FFT, IFFT, RFFT or IRFFT)")
    kind = str(kind).upper()
    if kind not in FFT_KINDS:
        raise ShapeError(f"fft_type={kind} is not one of FFT, IFFT, RFFT, IRFFT")
    lengths = instr.attr("fft_length")
    if lengths is None or not 1 <= len(lengths) <= 3:
        raise ShapeError(f"fft needs fft_length of 1 to 3 dimensions, got {lengths}")
    if any(n < 0 for n in lengths):
        raise ShapeError(f"fft_length={{{','.join(map(str, lengths))}}} has a negative length")
    return kind, tuple(lengths)


def _fft_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 1:
        raise ShapeError(f"fft takes one operand, got {len(shapes)}")
    x = _arr(shapes[0], "fft operand")
    kind, lengths = _attrs(instr)
    r = len(lengths)
    if x.rank < r:
        raise ShapeError(f"fft operand {x.text(False)} has fewer dimensions than fft_length's {r}")
    lead, tail = x.dims[:-r], x.dims[-r:]
    name = x.dtype.name
    want = lengths
    if kind in ("FFT", "IFFT"):
        if name not in _COMPLEX:
            raise ShapeError(f"{kind} needs a c64 or c128 operand, got {name}")
        out_type = name
    elif kind == "RFFT":
        if name not in _REAL:
            raise ShapeError(f"RFFT needs an f32 or f64 operand, got {name}")
        out_type = _REAL[name]
    else:
        if name not in _COMPLEX:
            raise ShapeError(f"IRFFT needs a c64 or c128 operand, got {name}")
        out_type = _COMPLEX[name]
        want = lengths[:-1] + (lengths[-1] // 2 + 1,)
        if lengths[-1] == 0 and tail[:-1] == lengths[:-1] and tail[-1] in (0, 1):
            want = tail  # a zero-length result reads nothing
    if tail != want:
        raise ShapeError(f"{kind} with fft_length={{{','.join(map(str, lengths))}}} needs trailing dimensions "
                         f"[{','.join(map(str, want))}], got {x.text(False)}")
    out_tail = lengths
    if kind == "RFFT":
        out_tail = lengths[:-1] + ((lengths[-1] // 2 + 1) if lengths[-1] else 0,)
    return ArrayShape(DTYPES[out_type], lead + out_tail)


def _plan(instr: Instruction, x: ArrayShape) -> tuple[str, int, tuple[int, int, int], int, int]:
    """(kind, batch, the three lengths, batch ranges, line ranges). Where the batch is too
    small to split (one 2-D transform) but the work is not, each axis's lines are split
    instead (aotc_fft_c64_threads: ranges of whole blocks of FFT_LANES lines)."""
    kind, lengths = _attrs(instr)
    batch = prod(x.dims[:-len(lengths)])
    full = (1,) * (3 - len(lengths)) + lengths
    size = prod(full)
    work = batch * size * max(1.0, log2(max(size, 2)))
    worth = int(work // _MIN_PART_WORK)
    parts = max(1, min(batch, _MAX_PARTS, worth))
    lines = min(batch * size // n for n in full if n > 1) if size > 1 else batch
    line_parts = max(1, min(_MAX_PARTS, worth, lines // FFT_LANES)) if parts == 1 else 1
    return kind, batch, full, parts, line_parts


def _part_bytes(kind: str, batch: int, full: tuple[int, int, int], parts: int, line_parts: int = 1) -> int:
    return fft_scratch_bytes(kind, -(-batch // parts), full, line_parts)


def _fft_scratch(instr: Instruction, shapes: list[Shape]) -> int:
    x = shapes[0]
    if not isinstance(x, ArrayShape):
        return 0
    kind, batch, full, parts, line_parts = _plan(instr, x)
    return parts * _part_bytes(kind, batch, full, parts, line_parts)


def _fft_kernel(kb, instr: Instruction, outs) -> None:
    x = kb.producers[instr.operands[0]].array_shape
    (out,) = outs
    if x.size == 0 or instr.array_shape.size == 0:
        return
    kind, batch, full, parts, line_parts = _plan(instr, x)
    in_line = x.size // batch  # elements of one transform's operand and result
    out_line = instr.array_shape.size // batch
    fn = "aotc_fft_c128" if "f64" in (x.dtype.name, _COMPLEX.get(x.dtype.name)) else "aotc_fft_c64"
    src = kb.buffers[instr.operands[0]]
    chunk = _part_bytes(kind, batch, full, parts, line_parts)
    kb.need_scratch(parts * chunk)
    work = int(in_line * max(1.0, log2(max(prod(full), 2)))) * batch // parts
    lens = tuple(K.Const(n) for n in full)
    if line_parts > 1:  # one call, its lines split over the pool
        kb.emit(K.CallStmt(fn + "_threads", (kb.pool(), K.Const(line_parts), K.Const(FFT_KINDS[kind]),
                                             K.Const(batch)) + lens + (K.Ptr(src), K.Ptr(out), K.Ptr(kb.scratch)),
                           work))
        return
    if parts == 1:
        kb.emit(K.CallStmt(fn, (K.Const(FFT_KINDS[kind]), K.Const(batch)) + lens
                           + (K.Ptr(src), K.Ptr(out), K.Ptr(kb.scratch)), work))
        return
    ch = kb.loop(kb.fresh("ch"), parts, (K.PARALLEL,))
    lo = kb.let(ch * batch // parts, "first")
    count = kb.let((ch + 1) * batch // parts - lo, "count")
    # the parts one call of the threaded loop runs (one after the other, on one thread) share
    # the scratch of its first part: its tables (twiddles, Bluestein's chirp), computed by that
    # part, and its work buffers, which stay in cache from one part to the next
    scratch = K.Ptr(kb.scratch, RANGE_START * chunk, elem=DTYPES["u8"], byte_view=True)
    kb.emit(K.CallStmt(fn + "_shared", (K.Const(FFT_KINDS[kind]), count) + lens
                       + (K.Ptr(src, lo * in_line), K.Ptr(out, lo * out_line), scratch, ch.eq(RANGE_START)),
                       work))
    kb.close()


RULES.append(OpRule("fft", shape=_fft_shape, kernel=_fft_kernel, scratch_bytes=_fft_scratch,
                    buffered_operands=True))
