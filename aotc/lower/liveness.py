"""Liveness over the schedule of a fused entry computation, and the in-place decisions
taken from it: which buffers each kernel reads, when each buffer is read for the last
time, which elementwise kernels write over a buffer they read for the last time, and the
live interval (in kernel steps) of every arena buffer, which memory_plan.py turns into
offsets. Works on slot keys (`name`, `name#k` for tuple leaf k); builds no kernels.
"""
from __future__ import annotations

from typing import Callable

from ..hlo.ir import Computation, Instruction
from ..hlo.shape import TupleShape
from .memory_plan import Interval


def kernel_reads(comp: Computation, ins: Instruction, roles: dict[str, str]) -> list[str]:
    """Slot keys of the materialized values a kernel reads (through its tuple operands), in
    first-use order."""
    out: list[str] = []

    def add(o: str) -> None:
        role = roles[o]
        if role == "tuple":
            for e in comp.get(o).operands:
                add(e)
        elif role == "kernel" and isinstance(comp.get(o).shape, TupleShape):
            for k in range(len(comp.get(o).shape.elements)):
                if f"{o}#{k}" not in out:
                    out.append(f"{o}#{k}")
        elif role != "scalar" and o not in out:
            out.append(o)

    for o in ins.operands:
        add(o)
    return out


def choose_in_place(comp: Computation, order: tuple[str, ...], roles: dict[str, str],
                    elementwise: Callable[[Instruction], bool], slot: Callable[[str], dict | None],
                    base: dict[str, str], pinned: set[str], pieces: frozenset[str] = frozenset()) -> dict[str, str]:
    """kernel -> the read slot it writes over: an elementwise kernel's arena output takes an
    arena buffer of the same storage type and size that it reads for the last time, that
    is no view and holds no result or variable update, and of which it reads no other range
    (`pieces`: the views at an offset, concat_slices.py). `base` (view -> the slot whose
    memory it is) gains each decision, so later kernels see the output as a view."""
    last_read: dict[str, int] = {}
    for step, kname in enumerate(order):
        for n in kernel_reads(comp, comp.get(kname), roles):
            last_read[base.get(n, n)] = step
    chosen: dict[str, str] = {}
    for step, kname in enumerate(order):
        ins = comp.get(kname)
        out = slot(kname)
        if out is None or out["place"] != "arena" or not elementwise(ins):
            continue
        reads = kernel_reads(comp, ins, roles)
        for n in reads:
            src = slot(n)
            b = base.get(n, n)
            others = [m for m in reads if m in pieces and base.get(m, m) == b]  # ranges of it at other offsets
            if (src["place"] == "arena" and b == n and not others and last_read.get(b) == step and b not in pinned
                    and src["shape"].dtype.c_type == out["shape"].dtype.c_type
                    and src["shape"].nbytes == out["shape"].nbytes):
                chosen[kname] = n
                base[kname] = n
                break
    return chosen


def live_intervals(uses: dict[str, list[int]], sizes: dict[str, int]) -> list[Interval]:
    """The interval of every buffer in `sizes` (key -> bytes): from the first to the last
    step that uses it (a buffer nothing uses lives at step 0)."""
    out = []
    for key, size in sizes.items():
        steps = uses.get(key, [0])
        out.append(Interval(key, size, min(steps), max(steps)))
    return out
