"""Which constants are stored in the layout of the kernel that reads them.

A bound weight that only GEMMs read as their B (dots, convolutions run as im2col GEMMs or
by the taps kernel) is stored in the layout the micro-kernels read (ops/dot.py
`rhs_in_panels`, `pack_panels`; ops/convolution.py `conv_rhs_in_panels`; runtime_c
aotc_gemm_panels.c), and one that only Winograd convolutions read is stored as its
transform U (ops/conv_winograd.py `stored_transform`, `winograd_weights`), so no call
packs or transforms it again: that is done once, here, at compile time. Every reader must
take the stored form, else the constant stays as it is.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.opcodes import Op
from ..ops.conv_winograd import WinogradWeights, stored_transform
from ..ops.convolution import conv_rhs_in_panels
from ..ops.dot import gemm_plan, rhs_in_panels
from .fused import fused_computation, kernel_op


def panel_constants(m: Module, comp: Computation, roles: dict[str, str], heroes: dict[str, str],
                    fetched: set[str], conv_algorithm: str) -> dict[str, int]:
    """Constant name -> the N of the [K, N] matrix its readers see, for the constants of
    `comp` stored in panels: read by kernels only, each a dot or convolution taking it as
    its rhs alone; never a result (`fetched`)."""
    def rule(kop: Instruction, lhs, rhs) -> int | None:
        if kop.opcode == Op.CONVOLUTION:
            return conv_rhs_in_panels(kop, lhs, rhs, conv_algorithm)
        return gemm_plan(kop, lhs, rhs).n if rhs_in_panels(kop, lhs, rhs) else None
    return _stored(m, comp, roles, heroes, fetched, (Op.DOT, Op.CONVOLUTION), rule)


def winograd_constants(m: Module, comp: Computation, roles: dict[str, str], heroes: dict[str, str],
                       fetched: set[str], conv_algorithm: str) -> dict[str, WinogradWeights]:
    """Constant name -> the transform it is stored as, for the constants of `comp` read
    only as the weight of Winograd convolutions (all of the same transform) whose kernels
    write f32, so they take the Winograd path (ops/convolution.py `_conv_kernel`)."""
    def rule(kop: Instruction, lhs, rhs) -> WinogradWeights | None:
        return stored_transform(kop, lhs, rhs, conv_algorithm)
    return _stored(m, comp, roles, heroes, fetched, (Op.CONVOLUTION,), rule, f32_result=True)


def _stored(m: Module, comp: Computation, roles: dict[str, str], heroes: dict[str, str], fetched: set[str],
            opcodes: tuple[Op, ...], rule: Callable[..., Hashable | None], f32_result: bool = False) -> dict:
    """Constant name -> the one value `rule(kernel op, lhs shape, rhs shape)` gives for
    every kernel reading the constant, when each reads it only as the rhs of its dot or
    convolution (an op of `opcodes`) and the value is never None; never a result."""
    readers: dict[str, list[Instruction]] = {}
    for ins in comp.instructions:
        for o in dict.fromkeys(ins.operands):
            readers.setdefault(o, []).append(ins)
    out: dict = {}
    for ins in comp.instructions:
        if roles[ins.name] != "const" or ins.name in fetched:
            continue
        values = {_reader_value(m, comp, u, ins.name, roles, heroes, opcodes, rule, f32_result)
                  for u in readers.get(ins.name, ())}
        if len(values) == 1 and None not in values:
            out[ins.name] = values.pop()
    return out


def _reader_value(m: Module, comp: Computation, user: Instruction, const: str, roles: dict[str, str],
                  heroes: dict[str, str], opcodes: tuple[Op, ...], rule, f32_result: bool):
    """`rule`'s value when kernel `user` reads `const` only as the rhs of its dot or
    convolution, else None."""
    if roles.get(user.name) != "kernel":
        return None
    if f32_result and (user.shape.is_tuple or user.array_shape.dtype.name != "f32"):
        return None
    kop = kernel_op(m, user, heroes)
    if kop.opcode not in opcodes or kop.operands[1] != const or kop.operands[0] == const:
        return None
    fc = fused_computation(m, user)
    if fc is not None and any(const in i.operands for i in fc.instructions if i is not kop):
        return None
    scope = fc or comp
    return rule(kop, scope.get(kop.operands[0]).array_shape, scope.get(const).array_shape)
