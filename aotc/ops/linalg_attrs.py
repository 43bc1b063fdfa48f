"""What the LAPACK custom calls of XLA:CPU say about themselves: the element type of a
target name (`lapack_sgetrf_ffi`: f32), the typed-FFI attributes of `backend_config={uplo =
76 : ui8, ...}` (ASCII codes of LAPACK's option letters), and the layouts XLA pins on their
operands and results. Reading only; the rules that use them are in linalg.py. Anything not
understood here is a `ShapeError`, so the verifier reports it at the instruction.
"""
from __future__ import annotations

import re

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction, Raw
from ..hlo.shape import ArrayShape, Shape, ShapeError, TupleShape

# LAPACK's type letter -> (element type, real type)
LETTERS: dict[str, tuple[DType, DType]] = {
    "s": (DTYPES["f32"], DTYPES["f32"]), "d": (DTYPES["f64"], DTYPES["f64"]),
    "c": (DTYPES["c64"], DTYPES["f32"]), "z": (DTYPES["c128"], DTYPES["f64"]),
}
LETTER_OF = {dt.name: k for k, (dt, _) in LETTERS.items()}

_ENTRY = re.compile(r"\s*([A-Za-z_][\w.]*)\s*=\s*(-?\d+)\s*:\s*([su]i\d+|i\d+)\s*")
_SHAPE = re.compile(r"([a-z]+\d*)\[([\d,\s]*)\](?:\{([\d,\s]*)\})?")


def target_letter(instr: Instruction, name: str) -> str:
    """The type letter of a `lapack_?<name>_ffi` target."""
    t = instr.attr("custom_call_target") or ""
    m = re.fullmatch(rf"lapack_([sdcz]){name}_ffi", t)
    if m is None:
        raise ShapeError(f"custom-call target {t!r} is not a lapack_?{name}_ffi target")
    return m.group(1)


def backend_config(instr: Instruction) -> dict[str, int]:
    """The integer attributes of a typed-FFI `backend_config={key = value : type, ...}`."""
    raw = instr.attr("backend_config")
    text = raw.text if isinstance(raw, Raw) else ("" if raw is None else str(raw))
    text = text.strip()
    if text in ("", '""'):
        return {}
    if not (text.startswith("{") and text.endswith("}")):
        raise ShapeError(f"cannot read backend_config {text!r} of custom-call "
                         f"{instr.attr('custom_call_target')} (expected {{key = value : type, ...}})")
    out: dict[str, int] = {}
    body = text[1:-1].strip()
    for part in body.split(",") if body else []:
        m = _ENTRY.fullmatch(part)
        if m is None:
            raise ShapeError(f"cannot read backend_config entry {part.strip()!r} of custom-call "
                             f"{instr.attr('custom_call_target')}")
        if m.group(1) in out:
            raise ShapeError(f"backend_config of custom-call {instr.attr('custom_call_target')} "
                             f"sets {m.group(1)} twice")
        out[m.group(1)] = int(m.group(2))
    return out


def options(instr: Instruction, allowed: dict[str, dict[str, int]],
            defaults: dict[str, str] | None = None) -> dict[str, str]:
    """The option letters of the custom call: each key of `allowed` (key -> {letter: code}) read
    from backend_config, falling back to `defaults`; an unknown key or value, or a missing one
    without default, is refused."""
    cfg = backend_config(instr)
    target = instr.attr("custom_call_target")
    for key in sorted(cfg):
        if key not in allowed:
            raise ShapeError(f"custom-call {target} has backend_config attribute {key!r}, which aotc "
                             f"does not know (it knows {', '.join(sorted(allowed))})")
    out: dict[str, str] = {}
    for key, codes in allowed.items():
        if key not in cfg:
            if defaults is None or key not in defaults:
                raise ShapeError(f"custom-call {target} needs backend_config attribute {key!r}")
            out[key] = defaults[key]
            continue
        letter = next((k for k, v in codes.items() if v == cfg[key]), None)
        if letter is None:
            shown = chr(cfg[key]) if 32 < cfg[key] < 127 else str(cfg[key])
            raise ShapeError(f"custom-call {target}: {key} = {cfg[key]} ({shown!r}) is not supported "
                             f"(aotc supports {', '.join(f'{v} ({k!r})' for k, v in codes.items())})")
        out[key] = letter
    return out


def letters(*names: str) -> dict[str, int]:
    """{letter: ASCII code} for option letters."""
    return {n: ord(n) for n in names}


def fortran_layout(rank: int, matrix: bool = True) -> tuple[int, ...]:
    """The minor-to-major layout LAPACK reads: column-major matrices, batch dimensions outermost;
    row-major for batches of vectors or scalars (pivots, tau, eigenvalues, info)."""
    if rank < 2 or not matrix:
        return tuple(range(rank - 1, -1, -1))
    return (rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1))


def _parse_shapes(text: str) -> list[tuple[str, tuple[int, ...], tuple[int, ...] | None]]:
    return [(m.group(1), tuple(int(d) for d in m.group(2).split(",") if d.strip()),
             None if m.group(3) is None else tuple(int(d) for d in m.group(3).split(",") if d.strip()))
            for m in _SHAPE.finditer(text)]


def check_layouts(instr: Instruction, shapes: list[Shape], operands: tuple[bool, ...],
                  results: tuple[bool, ...]) -> None:
    """The custom call must pin every operand, and declare every result, in LAPACK's layout
    (`operands`, `results`: which are matrices); otherwise its buffers would not hold the
    values the logical arrays are."""
    target = instr.attr("custom_call_target")
    raw = instr.attr("operand_layout_constraints")
    if raw is None:
        raise ShapeError(f"custom-call {target} has no operand_layout_constraints; aotc compiles it only "
                         "with the column-major operand layouts XLA pins on LAPACK calls")
    cons = _parse_shapes(raw.text if isinstance(raw, Raw) else str(raw))
    if len(cons) != len(shapes):
        raise ShapeError(f"custom-call {target}: operand_layout_constraints names {len(cons)} shapes "
                         f"for {len(shapes)} operands")
    for k, ((_, dims, layout), s, mat) in enumerate(zip(cons, shapes, operands)):
        want = fortran_layout(len(dims), mat)
        if not isinstance(s, ArrayShape) or dims != s.dims or (layout is not None and layout != want) \
                or (layout is None and mat and len(dims) >= 2):
            raise ShapeError(f"custom-call {target}: operand {k} is constrained to layout {layout} of dims "
                             f"{dims}; aotc supports only {want} (column-major matrices, batch outermost)")
    outs = instr.shape.elements if isinstance(instr.shape, TupleShape) else (instr.shape,)
    if len(outs) != len(results):
        raise ShapeError(f"custom-call {target} must return {len(results)} arrays, declared {instr.shape}")
    for k, (o, mat) in enumerate(zip(outs, results)):
        if not isinstance(o, ArrayShape):
            raise ShapeError(f"custom-call {target}: result {k} is not an array")
        want = fortran_layout(o.rank, mat)
        if o.rank >= 2 and o.minor_to_major != want:
            kind = "column-major, as LAPACK writes it" if mat else "row-major"
            raise ShapeError(f"custom-call {target}: result {k} {o.text(True)} must have layout "
                             f"{{{','.join(map(str, want))}}} ({kind})")
