"""Concatenation without copies: a bare `concatenate` kernel whose pieces are contiguous
byte ranges of its buffer (every dimension before the concatenated one has size 1) is
dropped, and the kernel producing each piece writes straight into its range (its output
becomes a view of the concatenation at a byte offset). Decides only; assemble.py applies
the decisions to the slots. Builds no kernels.

A rewrite is refused (the copy kept) unless every piece is an arena buffer of its own,
written by one kernel, used once by the concatenation and by no other dropped one, and
holds no result or variable update.
"""
from __future__ import annotations

from typing import Callable

from ..hlo.ir import Computation, Instruction
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape


def contiguous_pieces(ins: Instruction, shapes: list[ArrayShape]) -> list[int] | None:
    """Byte offset of each operand in the result of `concatenate` `ins`, when each is one
    contiguous range of the row-major result; else None."""
    (dim,) = ins.attr("dimensions")
    out = ins.array_shape
    lead = 1
    for n in out.dims[:dim]:
        lead *= n
    if lead != 1:
        return None
    offsets, off = [], 0
    for s in shapes:
        offsets.append(off)
        off += s.nbytes
    return offsets if off == out.nbytes else None


def choose_concat_slices(comp: Computation, order: tuple[str, ...], roles: dict[str, str],
                         slot: Callable[[str], dict | None], pinned: set[str]) -> dict[str, tuple[str, int]]:
    """piece -> (concatenation, byte offset): the kernel producing the piece writes at that
    offset of the concatenation's buffer, and the concatenation's kernel is dropped (its
    name is a value of the result). Outer concatenations are decided first, so a piece
    that is itself a dropped concatenation passes its range on to its own pieces."""
    kernels = set(order)
    claimed: dict[str, tuple[str, int]] = {}
    for cname in reversed(order):
        ins = comp.get(cname)
        out = slot(cname)
        if ins.opcode != Op.CONCATENATE or out is None or out["place"] != "arena" or cname in pinned:
            continue
        ops = list(ins.operands)
        if len(set(ops)) != len(ops):
            continue  # a value used twice would have to be in two places
        if not all(_own_buffer(comp, o, roles, slot, pinned, kernels) and o not in claimed for o in ops):
            continue
        offsets = contiguous_pieces(ins, [comp.get(o).array_shape for o in ops])
        if offsets is None:
            continue
        for o, off in zip(ops, offsets):
            claimed[o] = (cname, off)
    return claimed


def _own_buffer(comp: Computation, name: str, roles: dict[str, str], slot: Callable[[str], dict | None],
                pinned: set[str], kernels: set[str]) -> bool:
    """Whether `name` is an array written by a kernel of this schedule into an arena
    buffer of its own that nothing else pins."""
    if roles.get(name) != "kernel" or name not in kernels or name in pinned:
        return False
    ins = comp.get(name)
    s = slot(name)
    return isinstance(ins.shape, ArrayShape) and s is not None and s["place"] == "arena" and s["shape"].nbytes > 0
