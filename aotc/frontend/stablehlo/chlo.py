"""CHLO ops without an HLO opcode (`chlo.asinh`, `chlo.lgamma`, `chlo.next_after`, ...),
read as XLA reads them: each becomes a `map` of the scalar computation XLA's CHLO-to-HLO
conversion writes for the op and element type. Those computations are data (`chlo.hlo`,
written by `tools/gen_chlo.py` from XLA itself), so a model exported as StableHLO computes
what the same model exported as HLO computes. A type XLA does not define the op for is a
located error.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Callable

from ...hlo.ir import Computation, Module
from ...hlo.opcodes import Op
from ...hlo.shape import ArrayShape
from ..hlo_parser import parse_hlo
from .builder import Builder
from .pretty import CHLO_OPS
from .syntax import Op as MlirOp

DATA = Path(__file__).with_name("chlo.hlo")
_SECTION = re.compile(r"^// (chlo\.[a-z_0-9]+) ([a-z0-9]+)\n", re.M)


@functools.lru_cache(maxsize=None)
def decompositions() -> dict[tuple[str, str], tuple[int, str]]:
    """(op, element type) -> (line of its module in chlo.hlo, the module's text)."""
    text = DATA.read_text()
    found = list(_SECTION.finditer(text))
    out: dict[tuple[str, str], tuple[int, str]] = {}
    for k, m in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(text)
        out[(m.group(1), m.group(2))] = (text.count("\n", 0, m.end()), text[m.end():end])
    return out


@functools.lru_cache(maxsize=None)
def _decomposition(op: str, ty: str) -> Module | None:
    found = decompositions().get((op, ty))
    if found is None:
        return None
    line, text = found
    return parse_hlo("\n" * line + text, str(DATA))


def _lower(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    out = op.result_types[0] if len(op.result_types) == 1 else None
    if not isinstance(out, ArrayShape):
        raise b.mb.error(f"{op.name} has one array result", op.pos)
    for _, s in vals:
        if not isinstance(s, ArrayShape) or s.dims != out.dims:
            raise b.mb.error(f"aotc reads {op.name} only with operands of its result's shape "
                             f"{out.text(False)} (no implicit broadcasting)", op.pos)
    ty = out.dtype.name
    lib = _decomposition(op.name, ty)
    if lib is None:
        kinds = sorted({t for o, t in decompositions() if o == op.name})
        raise b.mb.error(f"{op.name} is not defined on {ty} (XLA defines it on {', '.join(kinds)})", op.pos)
    b.emit_op(op, Op.MAP, tuple(n for n, _ in vals),
              (("dimensions", tuple(range(len(out.dims)))), ("to_apply", _computation(b, op, lib))))


def _computation(b: Builder, op: MlirOp, lib: Module) -> str:
    """The module's copy of `lib`'s entry computation (one per op and type), its
    instructions renamed into the module and located at the first op that needed it."""
    key = f"{op.name}.{op.result_types[0].dtype.name}"
    known = b.mb.library.get(key)
    if known is not None:
        return known
    loc = b.mb.lx.loc(op.pos)
    src = lib.entry_computation
    names = {i.name: b.mb.fresh(f"{key.replace('.', '_')}.{i.name}") for i in src.instructions}
    body = tuple(i.with_(name=names[i.name], operands=tuple(names[o] for o in i.operands), loc=loc)
                 for i in src.instructions)
    name = b.mb.fresh(key.replace(".", "_"))
    b.mb.computations.append(Computation(name, body, names[src.root], False, loc=loc))
    b.mb.library[key] = name
    return name


HANDLERS: dict[str, Callable] = {name: _lower for name in CHLO_OPS}
