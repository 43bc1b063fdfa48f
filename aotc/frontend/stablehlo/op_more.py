"""StableHLO ops without regions beyond the common ones of `op_table`, lowered as XLA's
converter does: `broadcast` (its sizes lead), `rng` (the shape operand becomes the result
shape), `rng_bit_generator` (a (state, bits) tuple), `fft`, `cholesky`, `triangular_solve`,
the three `batch_norm_*` (several results: a tuple read with get-tuple-element),
`get_dimension_size`, `replica_id`/`partition_id`, and `custom_call` (its target, backend
config, API version, side effect and called computations; typed-FFI attributes through
custom_call_attrs).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...hlo.ir import Raw
from ...hlo.opcodes import Op
from ...hlo.printer import quote_string
from ...hlo.shape import ArrayShape
from .attributes import Enum, Symbol, Typed
from .builder import Builder
from .custom_call_attrs import ffi_backend_config, ffi_layouts
from .op_table import integer, ints, one
from .syntax import Op as MlirOp

RNG_ALGORITHMS = {"DEFAULT": "rng_default", "THREE_FRY": "rng_three_fry", "PHILOX": "rng_philox"}
API_VERSIONS = {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def names(b: Builder, op: MlirOp) -> tuple[str, ...]:
    return tuple(n for n, _ in b.operands(op))


def enum(b: Builder, op: MlirOp, key: str, choices, default: str | None = None) -> str:
    """The value of a `#stablehlo<kind VALUE>` attribute, one of `choices`."""
    v = op.attrs.get(key, default)
    text = v.value if isinstance(v, Enum) else v
    if text not in choices:
        raise b.mb.error(f"{op.name} needs '{key}' to be one of {', '.join(choices)}", op.pos)
    return text


def flag(b: Builder, op: MlirOp, key: str, default: bool = False) -> bool:
    v = op.attrs.get(key, default)
    v = v.value if isinstance(v, Typed) else v
    if not isinstance(v, bool):
        raise b.mb.error(f"'{key}' of {op.name} must be true or false", op.pos)
    return v


def number(b: Builder, op: MlirOp, key: str) -> float:
    v = one(b, op, key)
    v = v.value if isinstance(v, Typed) else v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise b.mb.error(f"'{key}' of {op.name} must be a number", op.pos)
    return float(v)


def _broadcast(b: Builder, op: MlirOp) -> None:
    ((x, xs),) = b.operands(op)
    sizes = ints(b, op, "broadcast_sizes")
    rank = xs.rank if isinstance(xs, ArrayShape) else 0
    dims = tuple(range(len(sizes), len(sizes) + rank))  # the operand's dims follow the new leading ones
    b.emit_op(op, Op.BROADCAST, (x,), (("dimensions", dims),))


def _rng(b: Builder, op: MlirOp) -> None:
    vals = names(b, op)
    if len(vals) != 3:
        raise b.mb.error("stablehlo.rng takes a, b and the result shape", op.pos)
    dist = enum(b, op, "rng_distribution", ("UNIFORM", "NORMAL"))
    b.emit_op(op, Op.RNG, vals[:2], (("distribution", f"rng_{dist.lower()}"),))


def _rng_bit_generator(b: Builder, op: MlirOp) -> None:
    alg = enum(b, op, "rng_algorithm", tuple(RNG_ALGORITHMS), "DEFAULT")
    b.emit_op(op, Op.RNG_BIT_GENERATOR, names(b, op), (("algorithm", RNG_ALGORITHMS[alg]),))


def _fft(b: Builder, op: MlirOp) -> None:
    kind = enum(b, op, "fft_type", ("FFT", "IFFT", "RFFT", "IRFFT"))
    b.emit_op(op, Op.FFT, names(b, op), (("fft_type", kind), ("fft_length", ints(b, op, "fft_length"))))


def _cholesky(b: Builder, op: MlirOp) -> None:
    b.emit_op(op, Op.CHOLESKY, names(b, op), (("lower", flag(b, op, "lower")),))


def _triangular_solve(b: Builder, op: MlirOp) -> None:
    transpose = enum(b, op, "transpose_a", ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"))
    attrs = (("left_side", flag(b, op, "left_side")), ("lower", flag(b, op, "lower")),
             ("unit_diagonal", flag(b, op, "unit_diagonal")), ("transpose_a", transpose))
    b.emit_op(op, Op.TRIANGULAR_SOLVE, names(b, op), attrs)


def _batch_norm(opcode: Op) -> Callable:
    def lower(b: Builder, op: MlirOp) -> None:
        eps = str(np.float32(number(b, op, "epsilon")))
        b.emit_op(op, opcode, names(b, op), (("epsilon", Raw(eps)), ("feature_index", integer(b, op, "feature_index"))))
    return lower


def _get_dimension_size(b: Builder, op: MlirOp) -> None:
    b.emit_op(op, Op.GET_DIMENSION_SIZE, names(b, op), (("dimensions", (integer(b, op, "dimension"),)),))


def _custom_call(b: Builder, op: MlirOp) -> None:
    target = one(b, op, "call_target_name")
    target = target.value if isinstance(target, Typed) else target
    if not isinstance(target, str):
        raise b.mb.error("the call_target_name of stablehlo.custom_call must be a string", op.pos)
    attrs: list = [("custom_call_target", target)]
    called = op.attrs.get("called_computations", ())
    if not isinstance(called, tuple) or any(not isinstance(c, Symbol) for c in called):
        raise b.mb.error("called_computations of stablehlo.custom_call must be a list of @functions", op.pos)
    comps = []
    for c in called:
        if c.name not in b.mb.funcs:
            raise b.mb.error(f"stablehlo.custom_call calls the undefined function @{c.name}", op.pos)
        comps.append(b.mb.funcs[c.name])
    if comps:
        attrs.append(("called_computations", tuple(comps)))
    if flag(b, op, "has_side_effect"):
        attrs.append(("custom_call_has_side_effect", True))
    config = op.attrs.get("backend_config", "")
    config = config.value if isinstance(config, Typed) else config
    ffi_config = ffi_backend_config(b, op)
    if isinstance(config, str):
        if config and ffi_config is not None:
            raise b.mb.error("stablehlo.custom_call has both backend_config and mhlo.backend_config", op.pos)
        if config:
            attrs.append(("backend_config", Raw(quote_string(config))))
    else:
        raise b.mb.error("aotc cannot read a dictionary backend_config of stablehlo.custom_call yet", op.pos)
    constraints, shape = ffi_layouts(b, op, [b.value(u)[1] for u in op.operands])
    if constraints is not None:
        attrs.append(("operand_layout_constraints", constraints))
    version = op.attrs.get("api_version", 1)
    version = version.value if isinstance(version, Typed) else version
    if isinstance(version, Enum):
        version = next((k for k, v in API_VERSIONS.items() if v == version.value), version.value)
    if version not in API_VERSIONS:
        raise b.mb.error(f"unknown api_version {version!r} of stablehlo.custom_call", op.pos)
    if version != 1:  # XLA prints the original version as nothing
        attrs.append(("api_version", API_VERSIONS[version]))
    if ffi_config is not None:
        attrs.append(("backend_config", ffi_config))
    b.emit_op(op, Op.CUSTOM_CALL, names(b, op), tuple(attrs), shape)


def _no_operands(opcode: Op) -> Callable:
    def lower(b: Builder, op: MlirOp) -> None:
        b.emit_op(op, opcode, ())
    return lower


HANDLERS: dict[str, Callable] = {
    "stablehlo.broadcast": _broadcast,
    "stablehlo.rng": _rng,
    "stablehlo.rng_bit_generator": _rng_bit_generator,
    "stablehlo.fft": _fft,
    "stablehlo.cholesky": _cholesky,
    "stablehlo.triangular_solve": _triangular_solve,
    "stablehlo.batch_norm_inference": _batch_norm(Op.BATCH_NORM_INFERENCE),
    "stablehlo.batch_norm_training": _batch_norm(Op.BATCH_NORM_TRAINING),
    "stablehlo.batch_norm_grad": _batch_norm(Op.BATCH_NORM_GRAD),
    "stablehlo.get_dimension_size": _get_dimension_size,
    "stablehlo.custom_call": _custom_call,
    "stablehlo.replica_id": _no_operands(Op.REPLICA_ID),
    "stablehlo.partition_id": _no_operands(Op.PARTITION_ID),
}
