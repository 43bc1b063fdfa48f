"""Which format a model file is, by content, and its text for the parsers.

Text (HLO or StableHLO) is decoded as it is; MLIR bytecode (magic `ML\\xefR`), serialized
`jax.export` artifacts (a flatbuffer holding that bytecode) and HLO protos (protobuf wire
format: `HloModuleProto`, `HloProto`, `HloSnapshot`) are converted through jaxlib
(`jax_bridge.py`). A binary file is described by its format and size, never echoed.
"""
from __future__ import annotations

import struct

from ..errors import AotcError
from . import jax_bridge
from .hlo_file import decode_hlo
from .stablehlo import is_mlir

TEXT, MLIR_BYTECODE, JAX_EXPORTED, HLO_PROTO, BINARY = "text", "mlir-bytecode", "jax-exported", "hlo-proto", "binary"
MLIR_MAGIC = b"ML\xefR"

DESCRIPTIONS = {
    TEXT: "HLO or StableHLO text",
    MLIR_BYTECODE: "MLIR bytecode (StableHLO / VHLO)",
    JAX_EXPORTED: "a serialized jax.export artifact",
    HLO_PROTO: "an HLO proto",
    BINARY: "binary data",
}


def detect(data: bytes) -> str:
    """The format of a model file's bytes."""
    if data.startswith(MLIR_MAGIC):
        return MLIR_BYTECODE
    if _is_flatbuffer(data) and MLIR_MAGIC in data:
        return JAX_EXPORTED
    if _proto_module(data) is not None:
        return HLO_PROTO
    head = data[:4096]
    controls = sum(1 for c in head if c < 0x09 or 0x0E <= c < 0x20 or c == 0x7F)
    if controls * 20 > len(head):  # text with a stray control byte is text: its error is located
        return BINARY
    return TEXT


def model_text(data: bytes, path: str, shapes: dict[str, int] | None = None) -> tuple[str, str]:
    """(text, the file name its errors show): the bytes of a model file of any format
    aotc reads, as HLO or StableHLO text; shape-polymorphic modules refined to `shapes`."""
    shapes = dict(shapes or {})
    kind = detect(data)
    if kind == TEXT:
        text = decode_hlo(data, path)
        if shapes:
            if not is_mlir(text):
                raise AotcError(f"--shape {_first(shapes)}: only shape-polymorphic StableHLO and jax.export "
                                "inputs have symbolic dimensions; this is HLO text", file=path)
            _check_known(shapes, jax_bridge.symbolic_names(text), path)
            return jax_bridge.refine_text(text, path, shapes), _converted(path, "refined StableHLO")
        return text, path
    if kind == MLIR_BYTECODE:
        text = jax_bridge.bytecode_to_text(data, path)
        if shapes:
            _check_known(shapes, jax_bridge.symbolic_names(text), path)
            text = jax_bridge.refine_text(text, path, shapes)
        return text, _converted(path, "StableHLO text")
    if kind == JAX_EXPORTED:
        _, names = jax_bridge.exported_symbols(data, path)
        _check_known(shapes, names, path)
        return jax_bridge.exported_to_text(data, path, shapes), _converted(path, "StableHLO text")
    if kind == HLO_PROTO:
        if shapes:
            raise AotcError(f"--shape {_first(shapes)}: an HLO proto has no symbolic dimensions", file=path)
        module, outer = _proto_module(data)
        what = f"an HLO proto ({outer})"
        return jax_bridge.hlo_proto_to_text(module, path, what), _converted(path, "HLO text")
    raise AotcError(f"not a model: {len(data)} bytes of binary data in no format aotc reads (HLO or "
                    "StableHLO text, MLIR bytecode, a serialized jax.export artifact, an HLO proto)", file=path)


def polymorphic_hint(text: str) -> str:
    """What to add to a 'dynamic dimension' error for a jax export: the flag that fixes it."""
    names = jax_bridge.symbolic_names(text)
    if not names:
        return ""
    listed = ", ".join(f"'{n}'" for n in names)
    return (f" (a shape-polymorphic export with symbolic dimension {listed}: pass "
            + " ".join(f"--shape {n}=N" for n in names) + " to compile it for one size)")


def _converted(path: str, what: str) -> str:
    return f"{path} (as {what})"


def _first(shapes: dict[str, int]) -> str:
    k = sorted(shapes)[0]
    return f"{k}={shapes[k]}"


def _check_known(shapes: dict[str, int], names: list[str], path: str) -> None:
    for k in sorted(shapes):
        if k not in names:
            known = ", ".join(f"'{n}'" for n in names) or "none"
            raise AotcError(f"--shape {k}={shapes[k]}: the model has no symbolic dimension '{k}' "
                            f"(its symbolic dimensions: {known})", file=path)


# ---------------------------------------------------------------- binary structure


def _is_flatbuffer(data: bytes) -> bool:
    """A flatbuffer's root: a table offset, the table's vtable offset, a sane vtable."""
    if len(data) < 16:
        return False
    (root,) = struct.unpack_from("<I", data, 0)
    if root % 4 or not 4 <= root <= len(data) - 4:
        return False
    (soff,) = struct.unpack_from("<i", data, root)
    vt = root - soff
    if vt < 0 or vt + 4 > len(data) or vt % 2:
        return False
    vt_size, table_size = struct.unpack_from("<HH", data, vt)
    return 4 <= vt_size <= 512 and vt_size % 2 == 0 and vt + vt_size <= len(data) and 4 <= table_size <= 4096


def _fields(data: bytes) -> list[tuple[int, int, bytes | None]] | None:
    """Top-level protobuf fields (number, wire type, payload of length-delimited ones), or
    None when the bytes are not a well-formed message."""
    out, i, n = [], 0, len(data)

    def varint() -> int | None:
        nonlocal i
        value, shift = 0, 0
        while i < n and shift < 64:
            b = data[i]
            i += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
        return None

    while i < n:
        key = varint()
        if key is None or key >> 3 == 0:
            return None
        number, wire = key >> 3, key & 7
        if wire == 0:
            if varint() is None:
                return None
            out.append((number, wire, None))
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
            if i > n:
                return None
            out.append((number, wire, None))
        elif wire == 2:
            length = varint()
            if length is None or i + length > n:
                return None
            out.append((number, wire, data[i:i + length]))
            i += length
        else:
            return None
    return out


def _proto_module(data: bytes) -> tuple[bytes, str] | None:
    """The `HloModuleProto` inside an HloModuleProto, an HloProto (field 1: the module) or an
    HloSnapshot (field 1: an HloProto), with the kind of the outer message; None otherwise."""
    for kind in ("HloModuleProto", "HloProto", "HloSnapshot"):
        if not data or data[0] != 0x0A:
            return None
        fields = _fields(data)
        if not fields or fields[0][0] != 1 or fields[0][2] is None:
            return None
        first = fields[0][2]
        if first and all(0x20 < c < 0x7F for c in first):  # HloModuleProto.name, then its computations
            return (data, kind) if any(f[0] == 3 for f in fields) else None
        data = first
    return None
