"""StableHLO ops aotc refuses on purpose, each with why: deprecated ops XLA's converter
no longer takes, ops whose shapes are only known at run time, and quantized types. The
parser (pretty form) and the builder (generic form) both report `refusal(name)` at the op
instead of the generic "cannot read X yet".
"""
from __future__ import annotations

_DEPRECATED = "it is deprecated in StableHLO and has no HLO counterpart (re-export it with a current JAX)"
_DYNAMIC = "it needs dynamic shapes, which aotc does not support (export with static shapes)"
_QUANTIZED = "it needs quantized types, which aotc does not support"

REFUSED: dict[str, str] = {
    **{f"stablehlo.{n}": _DEPRECATED for n in (
        "einsum", "unary_einsum", "torch_index_select", "trace")},
    **{f"stablehlo.{n}": _DYNAMIC for n in (
        "dynamic_broadcast_in_dim", "dynamic_conv", "dynamic_gather", "dynamic_iota", "dynamic_pad",
        "dynamic_reshape", "real_dynamic_slice", "compute_reshape_shape", "cstr_reshapable",
        "set_dimension_size")},
    **{f"stablehlo.{n}": _QUANTIZED for n in ("uniform_quantize", "uniform_dequantize")},
}


def refusal(name: str) -> str | None:
    """The located message for an op aotc refuses on purpose, or None."""
    why = REFUSED.get(name)
    return None if why is None else f"aotc cannot read {name}: {why}"
