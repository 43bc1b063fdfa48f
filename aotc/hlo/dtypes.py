"""Element types of HLO: spelling, width, kind, numpy dtype and C storage type.

This module owns the table of element types and nothing else; how values of a
type are computed on lives in the op families and the C math header.
"""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True, slots=True)
class DType:
    name: str  # HLO spelling: "f32", "bf16", "pred", "token"
    bits: int  # storage width in bits (pred is stored as one byte)
    kind: str  # "pred" | "sint" | "uint" | "float" | "complex" | "token"
    c_type: str  # C storage type in generated code ("" for token)

    @property
    def nbytes(self) -> int:
        return max(1, self.bits // 8)

    @property
    def width(self) -> int:
        """Bits of one value: 2 or 4 for the sub-byte types (stored one a byte), else `bits`."""
        return _WIDTH.get(self.name, self.bits)

    @property
    def is_narrow_float(self) -> bool:
        """An f8 or f4 type: stored one a byte, computed in f32 and rounded after each op."""
        return self.kind == "float" and self.bits == 8

    @property
    def is_subbyte_int(self) -> bool:
        """s2, u2, s4, u4: stored one a byte (the value in the low bits), computed in s8/u8."""
        return self.kind in ("sint", "uint") and self.width < 8

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("sint", "uint")

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype that holds one element (raises for token)."""
        if self.name not in _NUMPY:
            raise ValueError(f"element type {self.name} has no array representation")
        return np.dtype(_NUMPY[self.name])

    def __str__(self) -> str:
        return self.name


_TABLE = [
    DType("pred", 8, "pred", "uint8_t"),
    DType("s2", 8, "sint", "int8_t"),
    DType("s4", 8, "sint", "int8_t"),
    DType("s8", 8, "sint", "int8_t"),
    DType("s16", 16, "sint", "int16_t"),
    DType("s32", 32, "sint", "int32_t"),
    DType("s64", 64, "sint", "int64_t"),
    DType("u2", 8, "uint", "uint8_t"),
    DType("u4", 8, "uint", "uint8_t"),
    DType("u8", 8, "uint", "uint8_t"),
    DType("u16", 16, "uint", "uint16_t"),
    DType("u32", 32, "uint", "uint32_t"),
    DType("u64", 64, "uint", "uint64_t"),
    DType("f16", 16, "float", "uint16_t"),
    DType("bf16", 16, "float", "uint16_t"),
    DType("f32", 32, "float", "float"),
    DType("f64", 64, "float", "double"),
    DType("c64", 64, "complex", "aotc_c64"),
    DType("c128", 128, "complex", "aotc_c128"),
    DType("f8e4m3fn", 8, "float", "uint8_t"),
    DType("f8e5m2", 8, "float", "uint8_t"),
    DType("f8e4m3fnuz", 8, "float", "uint8_t"),
    DType("f8e5m2fnuz", 8, "float", "uint8_t"),
    DType("f8e4m3b11fnuz", 8, "float", "uint8_t"),
    DType("f8e4m3", 8, "float", "uint8_t"),
    DType("f8e3m4", 8, "float", "uint8_t"),
    DType("f8e8m0fnu", 8, "float", "uint8_t"),
    DType("f4e2m1fn", 8, "float", "uint8_t"),
    DType("token", 0, "token", "uint8_t"),  # no data: a token slot is 0 bytes
]

DTYPES: dict[str, DType] = {t.name: t for t in _TABLE}

_WIDTH = {"s2": 2, "u2": 2, "s4": 4, "u4": 4, "f4e2m1fn": 4}

_NUMPY = {
    "pred": np.bool_,
    "s2": ml_dtypes.int2,
    "s4": ml_dtypes.int4,
    "s8": np.int8,
    "s16": np.int16,
    "s32": np.int32,
    "s64": np.int64,
    "u2": ml_dtypes.uint2,
    "u4": ml_dtypes.uint4,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
    "c64": np.complex64,
    "c128": np.complex128,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "f8e4m3": ml_dtypes.float8_e4m3,
    "f8e3m4": ml_dtypes.float8_e3m4,
    "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
    "f4e2m1fn": ml_dtypes.float4_e2m1fn,
}


def dtype(name: str) -> DType:
    """Look up an element type by its HLO spelling (KeyError if unknown)."""
    return DTYPES[name]


def from_numpy(dt: np.dtype) -> DType:
    """The element type whose numpy representation is `dt`."""
    dt = np.dtype(dt)
    for name, npt in _NUMPY.items():
        if np.dtype(npt) == dt and name not in ("s4", "u4"):
            return DTYPES[name]
    raise KeyError(f"no HLO element type for numpy dtype {dt}")
