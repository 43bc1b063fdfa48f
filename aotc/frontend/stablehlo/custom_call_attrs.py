"""The typed-FFI attributes of `stablehlo.custom_call` as XLA's converter carries them into
HLO: `mhlo.backend_config = {k = v : ui8, ...}` becomes `backend_config={k = v : ui8, ...}`,
`operand_layouts` becomes `operand_layout_constraints={...}`, and `result_layouts` the
layouts of the result shape. Reading and rewriting only; what the attributes mean is the
business of the op family that defines the target (ops/linalg.py for LAPACK calls).
"""
from __future__ import annotations

import re

from ...hlo.ir import Raw
from ...hlo.shape import ArrayShape, Shape, TupleShape
from .attributes import Dense, Typed
from .builder import Builder
from .syntax import Op as MlirOp


def _scalar_type(shape) -> str | None:
    dt = getattr(shape, "dtype", None)
    if dt is None or getattr(shape, "dims", ()) != ():
        return None
    if dt.kind == "uint":
        return f"ui{dt.bits}"
    if dt.kind == "sint":
        return f"i{dt.bits}"
    return None


def ffi_backend_config(b: Builder, op: MlirOp) -> Raw | None:
    """`mhlo.backend_config` (a dictionary of typed integers) as HLO's backend_config text."""
    cfg = op.attrs.get("mhlo.backend_config")
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise b.mb.error("mhlo.backend_config of stablehlo.custom_call must be a dictionary", op.pos)
    parts = []
    for key in sorted(cfg):
        v = cfg[key]  # the reader keeps no type for scalars: `76 : ui8` is 76
        ty = _scalar_type(v.shape) if isinstance(v, Typed) else ("ui8" if isinstance(v, int) and 0 <= v < 256
                                                                  else "i64")
        value = v.value if isinstance(v, Typed) else v
        if ty is None or not isinstance(value, int) or isinstance(value, bool):
            raise b.mb.error(f"aotc reads only integer entries of mhlo.backend_config (such as "
                             f"`{key} = 76 : ui8`), not {key} = {v!r}", op.pos)
        parts.append(f"{key} = {value} : {ty}")
    return Raw("{" + ", ".join(parts) + "}")


def _layouts(b: Builder, op: MlirOp, key: str, count: int) -> list[tuple[int, ...]] | None:
    v = op.attrs.get(key)
    if v is None:
        return None
    if not isinstance(v, tuple) or len(v) != count:
        raise b.mb.error(f"{key} of stablehlo.custom_call must be a list of {count} dense layouts", op.pos)
    out = []
    for item in v:
        body = item.value if isinstance(item, Typed) else item
        if not isinstance(body, Dense) or body.kind not in ("list", "scalar"):
            raise b.mb.error(f"{key} of stablehlo.custom_call must hold dense<[...]> layouts", op.pos)
        out.append(tuple(int(x) for x in re.findall(r"-?\d+", body.text)))
    return out


def _with_layout(b: Builder, op: MlirOp, s: Shape, layout: tuple[int, ...], key: str) -> ArrayShape:
    if not isinstance(s, ArrayShape) or sorted(layout) != list(range(s.rank)):
        raise b.mb.error(f"{key} of stablehlo.custom_call: {list(layout)} is not a layout of {s}", op.pos)
    return s.with_layout(layout)


def ffi_layouts(b: Builder, op: MlirOp, operand_shapes: list[Shape]) -> tuple[Raw | None, Shape | None]:
    """(operand_layout_constraints text or None, the result shape with `result_layouts` or None)."""
    ops = _layouts(b, op, "operand_layouts", len(operand_shapes))
    res = _layouts(b, op, "result_layouts", len(op.result_types))
    cons = None
    if ops is not None:
        shapes = [_with_layout(b, op, s, lay, "operand_layouts") for s, lay in zip(operand_shapes, ops)]
        cons = Raw("{" + ", ".join(s.text(True) for s in shapes) + "}")
    shape = None
    if res is not None:
        elems = tuple(_with_layout(b, op, s, lay, "result_layouts") for s, lay in zip(op.result_types, res))
        shape = elems[0] if len(elems) == 1 else TupleShape(elems)
    return cons, shape
