"""Which constants are stored in the panel layout of the GEMM that reads them.

A bound weight that only GEMMs read as their B (dots, and convolutions run as im2col
GEMMs) is stored in the layout the micro-kernels read (ops/dot.py `rhs_in_panels`,
`pack_panels`; ops/convolution.py `conv_rhs_in_panels`; runtime_c aotc_gemm_panels.c), so
no call packs it again: the packing is done once, here, at compile time. Every reader
must take the panels, else the constant stays row-major.
"""
from __future__ import annotations

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.opcodes import Op
from ..ops.convolution import conv_rhs_in_panels
from ..ops.dot import gemm_plan, rhs_in_panels
from .fused import fused_computation, kernel_op


def panel_constants(m: Module, comp: Computation, roles: dict[str, str], heroes: dict[str, str],
                    fetched: set[str], conv_algorithm: str) -> dict[str, int]:
    """Constant name -> the N of the [K, N] matrix its readers see, for the constants of
    `comp` stored in panels: read by kernels only, each a dot or convolution taking it as
    its rhs alone; never a result (`fetched`)."""
    readers: dict[str, list[Instruction]] = {}
    for ins in comp.instructions:
        for o in dict.fromkeys(ins.operands):
            readers.setdefault(o, []).append(ins)
    out: dict[str, int] = {}
    for ins in comp.instructions:
        if roles[ins.name] != "const" or ins.name in fetched:
            continue
        ns = {_panel_n(m, comp, u, ins.name, roles, heroes, conv_algorithm) for u in readers.get(ins.name, ())}
        if len(ns) == 1 and None not in ns:
            out[ins.name] = ns.pop()
    return out


def _panel_n(m: Module, comp: Computation, user: Instruction, const: str, roles: dict[str, str],
             heroes: dict[str, str], conv_algorithm: str) -> int | None:
    """N when kernel `user` reads `const` only as the panel rhs of its dot or convolution,
    else None."""
    if roles.get(user.name) != "kernel":
        return None
    kop = kernel_op(m, user, heroes)
    if kop.opcode not in (Op.DOT, Op.CONVOLUTION) or kop.operands[1] != const or kop.operands[0] == const:
        return None
    fc = fused_computation(m, user)
    if fc is not None and any(const in i.operands for i in fc.instructions if i is not kop):
        return None
    scope = fc or comp
    lhs, rhs = scope.get(kop.operands[0]).array_shape, scope.get(const).array_shape
    if kop.opcode == Op.CONVOLUTION:
        return conv_rhs_in_panels(kop, lhs, rhs, conv_algorithm)
    return gemm_plan(kop, lhs, rhs).n if rhs_in_panels(kop, lhs, rhs) else None
