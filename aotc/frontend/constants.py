"""Values for elided constants (`constant({...})`), which dumps print without data.

`resolve_constants` refuses them by default with one error that says how to
proceed, or fills them with zeros, with deterministic pseudo-random values
(for benchmarking: the same module always gets the same values), or with
arrays bound by instruction name from an .npz file. It only replaces literals.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import zipfile

import numpy as np

from ..errors import AotcError, located
from ..hlo.dtypes import DType, from_numpy
from ..hlo.ir import Instruction, Literal, Module
from ..hlo.shape import ArrayShape, Shape, TupleShape
from ..hlo.opcodes import Op
from .files import not_regular

MODES = ("error", "zeros", "random")
_FILL_CHUNK = 1 << 20


def elided_constants(module: Module) -> list[Instruction]:
    """Every constant instruction whose literal was elided, in source order."""
    return [i for _, i in module.instructions()
            if i.opcode == Op.CONSTANT and i.literal is not None and i.literal.elided]


def resolve_constants(module: Module, mode: str = "error", bind: str | None = None,
                      source_text: str | None = None) -> Module:
    """`module` with every elided constant filled: from the .npz `bind` (keyed by
    instruction name) first, the rest per `mode` ("error" refuses them)."""
    if mode not in MODES:
        raise AotcError(f"unknown elided-constants mode '{mode}' (expected one of: {', '.join(MODES)})")
    elided = elided_constants(module)
    values: dict[str, Literal] = {}
    if bind is not None:
        arrays = read_npz(bind, lambda message: AotcError(message, file=bind))
        by_name = {i.name: i for i in elided}
        for key in sorted(arrays):
            name = key.lstrip("%")
            if name not in by_name:
                near = difflib.get_close_matches(name, list(by_name), n=1)
                hint = f" (did you mean {near[0]}?)" if near else ""
                raise AotcError(f"array '{key}' names no elided constant{hint}", file=bind)
            instr = by_name[name]
            values[name] = _bound_literal(instr, arrays[key], key, bind)
    rest = [i for i in elided if i.name not in values]
    if rest and mode == "error":
        raise located(_refusal(rest), rest[0].loc, source_text)
    for instr in rest:
        shape = instr.shape
        values[instr.name] = Literal(shape, _fill(shape, mode, instr.name))
    if not values:
        return module
    comps = tuple(
        dataclasses.replace(c, instructions=tuple(
            i.with_(literal=values[i.name]) if i.name in values and i.opcode == Op.CONSTANT else i
            for i in c.instructions))
        for c in module.computations)
    return module.with_computations(comps)


def _refusal(rest: list[Instruction]) -> str:
    shown = ", ".join(f"{i.name} {i.shape.text(False)}" for i in rest[:3])
    more = f" and {len(rest) - 3} more" if len(rest) > 3 else ""
    n = len(rest)
    return (f"{n} elided constant{'s' if n != 1 else ''} (constant({{...}}) has no values): {shown}{more}; "
            "pass --elided-constants=zeros or --elided-constants=random to fill them (for benchmarking), "
            "or --bind-constants FILE.npz with arrays named after the instructions")


def _bound_literal(instr: Instruction, array: np.ndarray, key: str, file: str) -> Literal:
    shape = instr.shape
    if not isinstance(shape, ArrayShape):
        raise AotcError(f"array '{key}': constant {instr.name} has tuple shape {shape.text(False)}; "
                        "only array constants can be bound", file=file)
    value = as_dtype(array, shape.dtype)
    if value is None or value.shape != shape.dims:
        raise AotcError(f"array '{key}' is {describe(array)}, constant {instr.name} is {shape.text(False)}",
                        file=file)
    return Literal(shape, np.ascontiguousarray(value))


def _fill(shape: Shape, mode: str, name: str):
    if isinstance(shape, TupleShape):
        return tuple(Literal(e, _fill(e, mode, f"{name}/{k}")) for k, e in enumerate(shape.elements))
    dt = shape.dtype.numpy
    if mode == "zeros":
        return np.zeros(shape.dims, dt)
    seed = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    kind = shape.dtype.kind
    if kind == "float":  # in chunks (the same stream): no float64 copy of a big constant
        wide = np.float64 if shape.dtype.name == "f64" else np.float32
        out = np.empty(int(np.prod(shape.dims, dtype=np.int64)), dt)
        for k in range(0, out.size, _FILL_CHUNK):
            out[k:k + _FILL_CHUNK] = rng.uniform(-1.0, 1.0, min(_FILL_CHUNK, out.size - k)).astype(wide).astype(dt)
        return out.reshape(shape.dims)
    if kind == "complex":
        return (rng.uniform(-1.0, 1.0, shape.dims) + 1j * rng.uniform(-1.0, 1.0, shape.dims)).astype(dt)
    if kind == "pred":
        return rng.integers(0, 2, shape.dims).astype(np.bool_)
    return rng.integers(0, 4, shape.dims).astype(dt)  # small, non-negative: safe as indices and sizes


# ---------------------------------------------------------------- npz files


def read_npz(path: str, fail) -> dict[str, np.ndarray]:
    """All arrays of an .npz file; `fail(message)` builds the AotcError to raise."""
    kind = not_regular(path)
    if kind is not None:
        raise fail(f"cannot read: {kind}")
    try:
        data = np.load(path, allow_pickle=False)
    except OSError as e:
        raise fail(f"cannot read: {e.strerror or e}") from None
    except (ValueError, zipfile.BadZipFile, EOFError) as e:
        raise fail(f"not a valid .npz file: {e}") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise fail("not an .npz file (expected arrays saved with numpy.savez)")
    try:
        with data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise fail(f"not a valid .npz file: {e}") from None


def as_dtype(a: np.ndarray, dt: DType) -> np.ndarray | None:
    """`a` as an array of element type `dt`, or None if its dtype does not match. bf16 and the
    other ml_dtypes floats also accept unsigned-integer bits or raw void data of their width."""
    want = dt.numpy
    if a.dtype == want:
        return a
    if dt.kind == "float" and dt.name not in ("f16", "f32", "f64") and a.dtype.itemsize == want.itemsize \
            and (a.dtype.kind == "V" or a.dtype == np.dtype(f"u{want.itemsize}")):
        return a.view(want)
    return None


def describe(a: np.ndarray) -> str:
    """`f32[2,3]` for a numpy array (numpy's dtype name when HLO has none)."""
    try:
        name = from_numpy(a.dtype).name
    except KeyError:
        name = str(a.dtype)
    return f"{name}[{','.join(map(str, a.shape))}]"
