"""Transitional: C spellings used by op families not yet moved onto the kernel IR.

Each family moved onto the IR stops importing this module; it is deleted with the last.
"""
from __future__ import annotations

from ..emit_c.kernel_c import c_literal  # noqa: F401
from ..hlo.dtypes import DType
from ..kernel.builder import Index, compute_type  # noqa: F401


def compute_ctype(dt: DType) -> str:
    return compute_type(dt).c_type


def load_expr(dt: DType, ref: str) -> str:
    if dt.name == "bf16":
        return f"aotc_bf16_to_f32({ref})"
    if dt.name == "f16":
        return f"aotc_f16_to_f32({ref})"
    return ref


def store_expr(dt: DType, value) -> str:
    if dt.name == "bf16":
        return f"aotc_f32_to_bf16({value})"
    if dt.name == "f16":
        return f"aotc_f32_to_f16({value})"
    return str(value)
