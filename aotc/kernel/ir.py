"""The kernel IR: what a kernel computes, as plain data, before any C is written.
(The expression half lives in expr.py and is re-exported here: passes import this module.)

Expressions are typed scalar trees (constants, variables, loads from named
buffers, operators whose semantics C implements exactly, calls to the runtime's
helpers); statements are loop nests with marks, local values, accumulators,
stores and calls to runtime micro-kernels. Ops build it, `aotc.kernel` passes
rewrite it, and `aotc.emit_c` is the only place that prints it. This module
knows no HLO op and writes no C.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from .expr import (  # noqa: F401  (the IR's expression half, re-exported)
    BINARY_OPS, BOOL, Binary, Buf, COMPARISONS, Call, Cast, Const, Expr, Field, INDEX, Load,
    PARALLEL, Pool, Ptr, REDUCTION, Select, UNARY_OPS, UNROLL, Unary, VECTOR, Var, binary, lift,
)


# ------------------------------------------------------------------ statements

class Stmt:
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Let(Stmt):
    """`const T var = value;` -- a value computed once."""

    var: Var
    value: Expr


@dataclass(frozen=True, slots=True)
class Decl(Stmt):
    """A mutable local (an accumulator); `init` None leaves it to be assigned."""

    var: Var
    init: Expr | None = None


@dataclass(frozen=True, slots=True)
class Assign(Stmt):
    var: Var
    value: Expr


@dataclass(frozen=True, slots=True)
class Store(Stmt):
    """`buf[index] = value`. `stream`: in a vector body, a non-temporal store that goes
    around the caches (kernel/stream.py); the kernel then ends with a store fence."""

    buf: Buf
    index: Expr
    value: Expr
    stream: bool = False


@dataclass(frozen=True, slots=True)
class Prefetch(Stmt):
    """A hint: bring the cache line holding `buf[index]` closer before it is read
    (kernel/prefetch.py). It computes nothing; `index` must be in bounds. `ahead`: a read
    ahead of a long stream, printed as AOTC_PREFETCH_AHEAD, which only the ISAs whose
    hardware prefetch falls behind turn into an instruction (aotc_simd.h)."""

    buf: Buf
    index: Expr
    ahead: bool = False


@dataclass(frozen=True, slots=True)
class ArrayDecl(Stmt):
    """A local array of `buf.size` elements, every one set to `init` when given."""

    buf: Buf
    init: Expr | None = None


@dataclass(frozen=True, slots=True)
class Loop(Stmt):
    """`for (var = start; var < stop; var += step) body`. `trip` is the static trip count
    when known (-1 otherwise)."""

    var: Var
    start: Expr
    stop: Expr
    body: tuple[Stmt, ...]
    step: int = 1
    marks: frozenset[str] = frozenset()

    @property
    def trip(self) -> int:
        if isinstance(self.start, Const) and isinstance(self.stop, Const):
            n = self.stop.value - self.start.value
            return max(0, -(-n // self.step))
        return -1


@dataclass(frozen=True, slots=True)
class Repeat(Stmt):
    """`for (;;) body` -- left by `Break`."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Break(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class Checkpoint(Stmt):
    """The run's budget (a cancel request, a deadline) is checked here, on every 64th trip
    of the `Repeat` whose body holds it directly; a spent budget leaves that `Repeat`, and
    the run then returns an error. A while loop's back-edge carries one, so an endless
    loop can be stopped."""


@dataclass(frozen=True, slots=True)
class If(Stmt):
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True, slots=True)
class CallStmt(Stmt):
    """A runtime micro-kernel call for its effect (GEMM, sort, a reducer with outputs).
    `work`: what it costs, in innermost loop statements (the threading pass weighs it)."""

    fn: str
    args: tuple[Expr, ...]
    work: int = 1


@dataclass(frozen=True, slots=True)
class Exec(Stmt):
    """Run a lowered sub-program (a while body, a branch) on pointer arguments."""

    program: str
    args: tuple[Expr, ...]
    results: tuple[Expr, ...]
    arena: Expr | None


@dataclass(frozen=True, slots=True)
class Comment(Stmt):
    text: str


@dataclass(frozen=True, slots=True)
class Param:
    """A kernel parameter: a buffer pointer, read-only or written; scratch is untyped bytes."""

    buf: Buf
    written: bool
    scratch: bool = False


@dataclass(frozen=True, slots=True)
class Function:
    """A scalar helper (reducer, comparator): typed parameters, a body, returned values.
    One value is returned; several are written through pointer parameters."""

    name: str
    params: tuple[Var, ...]
    body: tuple[Stmt, ...]
    results: tuple[Expr, ...]
    comment: str = ""


# ------------------------------------------------------------------ traversal

def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Load):
        return (e.index,)
    if isinstance(e, Unary):
        return (e.a,)
    if isinstance(e, Binary):
        return (e.a, e.b)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, (Cast, Field)):
        return (e.a,)
    if isinstance(e, Select):
        return (e.cond, e.a, e.b)
    if isinstance(e, Ptr):
        return (e.offset,) + ((e.var,) if e.var is not None else ())
    return ()


def nodes(e: Expr) -> Iterator[Expr]:
    """Every node of `e`, itself included (no particular order)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(children(x))


def substitute_expr(e: Expr, values: dict[str, Expr]) -> Expr:
    """`e` with the variables named in `values` replaced by their expressions (unchanged
    subtrees are kept, so `is`/`==` tell whether anything was replaced)."""
    if isinstance(e, Var) and e.name in values:
        return values[e.name]
    kids = children(e)
    if not kids:
        return e
    new = tuple(substitute_expr(k, values) for k in kids)
    return e if new == kids else rebuild(e, new)


def free_vars(e: Expr, out: set[str] | None = None) -> set[str]:
    out = set() if out is None else out
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            out.add(x.name)
        stack.extend(children(x))
    return out


def loads(e: Expr) -> Iterator[Load]:
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Load):
            yield x
        stack.extend(children(x))


def stmt_exprs(s: Stmt) -> tuple[Expr, ...]:
    """The expressions a statement evaluates itself (not those of nested statements)."""
    if isinstance(s, (Let, Assign)):
        return (s.value,)
    if isinstance(s, Decl):
        return (s.init,) if s.init is not None else ()
    if isinstance(s, ArrayDecl):
        return (s.init,) if s.init is not None else ()
    if isinstance(s, Store):
        return (s.index, s.value)
    if isinstance(s, Prefetch):
        return (s.index,)
    if isinstance(s, Loop):
        return (s.start, s.stop)
    if isinstance(s, If):
        return (s.cond,)
    if isinstance(s, CallStmt):
        return s.args
    if isinstance(s, Exec):
        return s.args + s.results + ((s.arena,) if s.arena is not None else ())
    return ()


def nested(s: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    if isinstance(s, (Loop, Repeat)):
        return (s.body,)
    if isinstance(s, If):
        return (s.then, s.orelse)
    return ()


def with_nested(s: Stmt, bodies: tuple[tuple[Stmt, ...], ...]) -> Stmt:
    """`s` with its nested bodies (as `nested` lists them) replaced."""
    if isinstance(s, Loop):
        return Loop(s.var, s.start, s.stop, bodies[0], s.step, s.marks)
    if isinstance(s, Repeat):
        return Repeat(bodies[0])
    if isinstance(s, If):
        return If(s.cond, bodies[0], bodies[1])
    raise TypeError(f"{type(s).__name__} has no nested bodies")


def walk(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    for s in body:
        yield s
        for b in nested(s):
            yield from walk(b)


def map_exprs(body: tuple[Stmt, ...], fn) -> tuple[Stmt, ...]:
    """`body` with `fn` applied to every expression a statement holds (recursively into
    nested statements); `fn` maps one whole expression tree."""
    out = []
    for s in body:
        if isinstance(s, Let):
            s = Let(s.var, fn(s.value))
        elif isinstance(s, Assign):
            s = Assign(s.var, fn(s.value))
        elif isinstance(s, Decl) and s.init is not None:
            s = Decl(s.var, fn(s.init))
        elif isinstance(s, ArrayDecl) and s.init is not None:
            s = ArrayDecl(s.buf, fn(s.init))
        elif isinstance(s, Store):
            s = Store(s.buf, fn(s.index), fn(s.value), s.stream)
        elif isinstance(s, Prefetch):
            s = Prefetch(s.buf, fn(s.index), s.ahead)
        elif isinstance(s, Loop):
            s = Loop(s.var, fn(s.start), fn(s.stop), map_exprs(s.body, fn), s.step, s.marks)
        elif isinstance(s, Repeat):
            s = Repeat(map_exprs(s.body, fn))
        elif isinstance(s, If):
            s = If(fn(s.cond), map_exprs(s.then, fn), map_exprs(s.orelse, fn))
        elif isinstance(s, CallStmt):
            s = CallStmt(s.fn, tuple(fn(a) for a in s.args), s.work)
        elif isinstance(s, Exec):
            s = Exec(s.program, tuple(fn(a) for a in s.args), tuple(fn(a) for a in s.results),
                     fn(s.arena) if s.arena is not None else None)
        out.append(s)
    return tuple(out)


def rebuild(e: Expr, kids: tuple[Expr, ...]) -> Expr:
    """`e` with its children replaced (in `children` order)."""
    if isinstance(e, Load):
        return Load(e.buf, kids[0])
    if isinstance(e, Unary):
        return Unary(e.op, kids[0], e.ty)
    if isinstance(e, Binary):
        return Binary(e.op, kids[0], kids[1], e.ty)
    if isinstance(e, Call):
        return Call(e.fn, kids, e.ty)
    if isinstance(e, Cast):
        return Cast(kids[0], e.ty)
    if isinstance(e, Field):
        return Field(kids[0], e.name, e.ty)
    if isinstance(e, Select):
        return Select(kids[0], kids[1], kids[2], e.ty)
    if isinstance(e, Ptr):
        return Ptr(e.buf, kids[0], kids[1] if e.var is not None else None, e.elem, e.byte_view)
    return e


@dataclass(frozen=True, slots=True)
class KernelIR:
    """One kernel as data: its parameters and body. `pool` says the body takes the thread
    pool (it calls a micro-kernel that splits work itself)."""

    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    pool: bool = False
    notes: tuple[str, ...] = field(default=())
