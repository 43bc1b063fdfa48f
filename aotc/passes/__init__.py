"""Graph passes over the HLO IR, run as one ordered list to a (bounded) fixpoint.

Each pass is `(module) -> (module, changed)` on the entry computation. The
list order follows XLA:CPU's simplification loop: its algebraic rewrites see
an instruction before constant folding does, since which rewrite fires can
depend on whether an operand is still a constant expression. Passes may rename
nothing a caller holds: while they run, the entry root is a tuple of the live
values (`with_live_root`), so forwarding a live value shows up there.
"""
from __future__ import annotations

from typing import Callable

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.shape import TupleShape
from .algsimp import xla_algebraic_rewrites
from .cse import eliminate_common_subexpressions
from .fold import fold_constants
from .rewrite import Names, with_entry

Pass = Callable[[Module], tuple[Module, bool]]

# (stage name for --dump-after, pass), in the order one round runs them
PASSES: tuple[tuple[str, Pass], ...] = (
    ("algsimp", xla_algebraic_rewrites),   # XLA's bit-changing rewrites (A / C => A * (1/C), ...)
    ("fold", fold_constants),              # constant expressions, computed as XLA's evaluator does
    ("cse", eliminate_common_subexpressions),  # identical instructions and constants merged
)
PASS_NAMES = tuple(n for n, _ in PASSES)
MAX_ROUNDS = 8

ValueRef = tuple[str, tuple[int, ...]]


def run_passes(m: Module, dump: Callable[[str, object], None] | None = None,
               passes: tuple[tuple[str, Pass], ...] = PASSES, max_rounds: int = MAX_ROUNDS) -> Module:
    """Run `passes` in order, again and again until a round changes nothing (at most `max_rounds`)."""
    for _ in range(max_rounds):
        any_change = False
        for name, fn in passes:
            m, changed = fn(m)
            any_change |= changed
            if dump is not None:
                dump(name, m)
        if not any_change:
            break
    return m


def run_graph_passes(m: Module, live: list[ValueRef], dump=None, passes: tuple[tuple[str, Pass], ...] = PASSES,
                     max_rounds: int = MAX_ROUNDS) -> tuple[Module, list[ValueRef]]:
    """A pass list (by default this package's) over a simplified module; returns it with its
    live values renamed."""
    if not live:
        return m, live
    m, tuple_name = with_live_root(m, live)
    m = run_passes(m, dump, passes, max_rounds)
    return without_live_root(m, tuple_name, live)


def with_live_root(m: Module, live: list[ValueRef]) -> tuple[Module, str]:
    entry = m.entry_computation
    name = Names(i.name for _, i in m.instructions()).fresh("live.values")
    ops = tuple(n for n, _ in live)
    shape = TupleShape(tuple(entry.get(n).shape for n in ops))
    root = Instruction(name, "tuple", shape, ops)
    comp = Computation(entry.name, entry.instructions + (root,), name, True, entry.has_signature, entry.loc)
    return with_entry(m, comp), name


def without_live_root(m: Module, tuple_name: str, live: list[ValueRef]) -> tuple[Module, list[ValueRef]]:
    entry = m.entry_computation
    ops = entry.get(tuple_name).operands
    new_live = [(n, idx) for n, (_, idx) in zip(ops, live)]
    body = tuple(i for i in entry.instructions if i.name != tuple_name)
    comp = Computation(entry.name, body, new_live[0][0], True, entry.has_signature, entry.loc)
    return with_entry(m, comp), new_live
