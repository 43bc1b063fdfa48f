"""Layout removal: after this pass every value is a logical row-major array.

Only `bitcast` depends on layouts (it reinterprets the physical buffer, often a
reshape and a layout change at once); it becomes transpose-to-physical,
reshape, transpose-to-logical, with no-op steps dropped. Layouts on all other
instructions are annotations of XLA's buffer assignment and carry no meaning.
"""
from __future__ import annotations

from ..errors import located
from ..hlo.ir import Computation, Instruction, Module
from ..hlo.shape import ArrayShape
from ..hlo.ir import name_maker
from ..hlo.opcodes import Op


def _major_to_minor(s: ArrayShape) -> tuple[int, ...]:
    return tuple(reversed(s.minor_to_major))


def _rewrite_bitcast(ins: Instruction, src: ArrayShape, unique) -> list[Instruction]:
    dst = ins.array_shape
    if src.dtype != dst.dtype:
        if src.dtype.bits != dst.dtype.bits or src.dims != dst.dims:
            raise located(f"bitcast from {src.text(False)} to {dst.text(False)} changes the element width; "
                          "not supported yet", ins.loc)
        # same dims and width: a reinterpretation of each element
        return [Instruction(ins.name, "bitcast-convert", dst.with_layout(None), ins.operands, loc=ins.loc)]
    out: list[Instruction] = []
    cur = ins.operands[0]
    m2m_s = _major_to_minor(src)
    if m2m_s != tuple(range(src.rank)):
        phys = tuple(src.dims[d] for d in m2m_s)
        name = unique(ins.name + ".to_physical")
        out.append(Instruction(name, "transpose", ArrayShape(src.dtype, phys), (cur,),
                               (("dimensions", m2m_s),), loc=ins.loc))
        cur = name
    m2m_d = _major_to_minor(dst)
    phys_d = tuple(dst.dims[d] for d in m2m_d)
    if m2m_d == tuple(range(dst.rank)):
        out.append(Instruction(ins.name, "reshape", dst.with_layout(None), (cur,), loc=ins.loc))
        return out
    name = unique(ins.name + ".physical")
    out.append(Instruction(name, "reshape", ArrayShape(dst.dtype, phys_d), (cur,), loc=ins.loc))
    inv = tuple(m2m_d.index(i) for i in range(dst.rank))
    out.append(Instruction(ins.name, "transpose", dst.with_layout(None), (name,), (("dimensions", inv),),
                           loc=ins.loc))
    return out


def remove_layouts(m: Module) -> Module:
    unique = name_maker(m)

    comps = []
    for c in m.computations:
        out: list[Instruction] = []
        for ins in c.instructions:
            if ins.opcode == Op.BITCAST and isinstance(ins.shape, ArrayShape):
                src = c.get(ins.operands[0]).shape
                if isinstance(src, ArrayShape):
                    out.extend(_rewrite_bitcast(ins, src, unique))
                    continue
            out.append(ins)
        comps.append(Computation(c.name, tuple(out), c.root, c.is_entry, c.has_signature, c.loc))
    return m.with_computations(tuple(comps))
