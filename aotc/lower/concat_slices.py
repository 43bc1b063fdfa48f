"""Concatenation without copies: a bare `concatenate` kernel is dropped and the kernel
producing each piece writes straight into its part of the concatenation's buffer (its
output becomes a view of that buffer at a byte offset). Decides only; assemble.py applies
the decisions to the slots and kernels.py writes and reads the strided parts. Builds no
kernels.

A piece is one contiguous range when every dimension before the concatenated one has size
1; otherwise (DenseNet's concatenation of channels) it is strided: rows of its trailing
dimensions `ld` elements apart. A strided piece must be written by a kernel that can store
rows `ld` apart (a loop kernel, a convolution run as GEMM with no epilogue, over its
features) and read only by loop kernels, which load it row by row. A rewrite is refused
(the copy kept) unless every piece is an arena buffer of its own, written by one kernel,
used once by the concatenation and by no other dropped one, and holds no result or
variable update.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable

from ..hlo.ir import Computation, Instruction
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape


@dataclass(frozen=True, slots=True)
class Piece:
    concat: str  # the buffer it is part of (the outermost dropped concatenation)
    offset: int  # byte offset of its first element
    rows: tuple[int, int] | None = None  # strided: (dimension d, elements between steps of dims[:d])


def _pieces(ins: Instruction, shapes: list[ArrayShape]) -> tuple[int, list[int]] | None:
    """(concatenated dimension, element offset of each operand in a row of the result's
    dims[d:]), or None for a size mismatch."""
    (dim,) = ins.attr("dimensions")
    offsets, off = [], 0
    for s in shapes:
        offsets.append(off)
        off += prod(s.dims[dim:])
    return (dim, offsets) if off == prod(ins.array_shape.dims[dim:]) else None


def choose_concat_slices(comp: Computation, order: tuple[str, ...], roles: dict[str, str],
                         slot: Callable[[str], dict | None], pinned: set[str],
                         strided_writer: Callable[[str, int], bool], loop_reader: Callable[[str, str], bool],
                         readers: dict[str, list[str]], viewed: set[str]) -> tuple[dict[str, Piece], set[str]]:
    """(piece -> where its kernel writes it, the concatenations dropped: those whose
    operands are all pieces of theirs). Outer concatenations are decided first, so a piece that is itself a
    dropped concatenation passes its place on to its own pieces. `strided_writer(k, d)`:
    kernel k can write its output in rows of its dims[d:] apart; `loop_reader(k, v)`: kernel
    k reads value v only at elements (a loop kernel); `readers`: value -> kernels reading it;
    `viewed`: values some view (a reshape) shares."""
    kernels = set(order)
    claimed: dict[str, Piece] = {}
    dropped: set[str] = set()
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
        split = _pieces(ins, [comp.get(o).array_shape for o in ops])
        if split is None:
            continue
        d, elem_offsets = split
        dims = ins.array_shape.dims
        esize = ins.array_shape.nbytes // max(ins.array_shape.size, 1)
        outer = claimed.get(cname, Piece(cname, 0))
        if prod(dims[:d]) == 1:
            rows = outer.rows  # contiguous in this concatenation: strided only if it is
            if rows is not None and prod(dims[rows[0]:]) != prod(dims[d:]):
                continue
        else:
            ld = prod(dims[d:])
            if outer.rows is not None:
                if outer.rows[0] != d:
                    continue  # rows of another dimension: not composed
                ld = outer.rows[1]
            rows = (d, ld)
        if rows is not None and not all(_strided_ok(cname, o, rows[0], strided_writer, loop_reader, readers, viewed)
                                        for o in ops):
            continue
        for o, eoff in zip(ops, elem_offsets):  # at its offset in each row of dims[d:]
            claimed[o] = Piece(outer.concat, outer.offset + eoff * esize, rows)
        dropped.add(cname)
    return claimed, dropped


def _strided_ok(cname: str, name: str, d: int, strided_writer, loop_reader, readers, viewed) -> bool:
    """Whether piece `name` of `cname` may live in rows of its dims[d:] apart."""
    if name in viewed or not strided_writer(name, d):
        return False
    return all(k == cname or loop_reader(k, name) for k in readers.get(name, ()))


def _own_buffer(comp: Computation, name: str, roles: dict[str, str], slot: Callable[[str], dict | None],
                pinned: set[str], kernels: set[str]) -> bool:
    """Whether `name` is an array written by a kernel of this schedule into an arena
    buffer of its own that nothing else pins."""
    if roles.get(name) != "kernel" or name not in kernels or name in pinned:
        return False
    ins = comp.get(name)
    s = slot(name)
    return isinstance(ins.shape, ArrayShape) and s is not None and s["place"] == "arena" and s["shape"].nbytes > 0
