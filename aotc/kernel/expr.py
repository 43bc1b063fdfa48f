"""Kernel IR expressions: typed scalar trees (constants, variables, loads from named
buffers, operators whose semantics C implements exactly, calls to the runtime's helpers,
casts, selects, pointers) and the buffers they read, with the loop marks statements use.
Plain frozen data; `ir.py` adds statements and traversal and is what passes import.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ..hlo.dtypes import DTYPES, DType

INDEX = DTYPES["s64"]  # the type of loop variables and element indices
BOOL = DTYPES["pred"]

# binary operators whose C meaning is the IR meaning for the operand types they get:
# integer index arithmetic, IEEE float + - * /, bitwise and comparisons
BINARY_OPS = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>",
                        "<", "<=", ">", ">=", "==", "!=", "&&", "||"})
UNARY_OPS = frozenset({"-", "!", "~"})
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||", "!"})

# loop marks
PARALLEL = "parallel"  # threads may split this loop's range (it runs [lo, hi) of the trip count)
VECTOR = "vector"  # iterations are independent: the body may run in SIMD lanes
REDUCTION = "reduction"  # iterations fold into an accumulator
UNROLL = "unroll"


@dataclass(frozen=True, slots=True)
class Buf:
    """A named array a kernel reads or writes: an arena slot, argument, constant, a local
    array or a typed view into scratch."""

    name: str
    dtype: DType
    size: int = 0  # elements, when known (locals, scratch views)
    dims: tuple[int, ...] = ()  # the array's dimensions, when it holds one
    panels: int = 0  # a constant matrix stored in panels of this many columns (ops/dot.py), 0: row-major
    winograd: int = 0  # a constant 3x3 weight stored as its F(m x m) transform, this m (ops/conv_winograd.py)



class Expr:
    """Base of typed scalar expressions (and pointers, `ty is None`)."""

    __slots__ = ()
    ty: DType | None

    # index arithmetic reads naturally: i * 3 + j
    def __add__(self, o) -> "Expr":
        return binary("+", self, lift(o))

    def __radd__(self, o) -> "Expr":
        return binary("+", lift(o), self)

    def __sub__(self, o) -> "Expr":
        return binary("-", self, lift(o))

    def __rsub__(self, o) -> "Expr":
        return binary("-", lift(o), self)

    def __mul__(self, o) -> "Expr":
        return binary("*", self, lift(o))

    def __rmul__(self, o) -> "Expr":
        return binary("*", lift(o), self)

    def __floordiv__(self, o) -> "Expr":  # C division: indices are never negative here
        return binary("/", self, lift(o))

    def __mod__(self, o) -> "Expr":
        return binary("%", self, lift(o))

    def lt(self, o) -> "Expr":
        return Binary("<", self, lift(o), BOOL)

    def le(self, o) -> "Expr":
        return Binary("<=", self, lift(o), BOOL)

    def gt(self, o) -> "Expr":
        return Binary(">", self, lift(o), BOOL)

    def ge(self, o) -> "Expr":
        return Binary(">=", self, lift(o), BOOL)

    def eq(self, o) -> "Expr":
        return Binary("==", self, lift(o), BOOL)

    def ne(self, o) -> "Expr":
        return Binary("!=", self, lift(o), BOOL)


@dataclass(frozen=True, slots=True)
class Const(Expr):
    value: Union[int, float, complex, bool]
    ty: DType = INDEX


@dataclass(frozen=True, slots=True)
class Var(Expr):
    name: str
    ty: DType | None = INDEX  # None: a pointer (see Ptr)


@dataclass(frozen=True, slots=True)
class Load(Expr):
    """`buf[index]` as stored (bf16/f16/f8 arrive as their bits)."""

    buf: Buf
    index: Expr

    @property
    def ty(self) -> DType:  # type: ignore[override]
        return self.buf.dtype


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    op: str
    a: Expr
    ty: DType


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    op: str
    a: Expr
    b: Expr
    ty: DType


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """A pure runtime helper (`aotc_exp_f32`, `aotc_add_s32`, a reducer function)."""

    fn: str
    args: tuple[Expr, ...]
    ty: DType | None


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    """A value conversion with C's meaning (used only where it equals the IR's: widening,
    integer truncation, bool to integer); XLA's converts call helpers."""

    a: Expr
    ty: DType


@dataclass(frozen=True, slots=True)
class Select(Expr):
    cond: Expr
    a: Expr
    b: Expr
    ty: DType


@dataclass(frozen=True, slots=True)
class Field(Expr):
    """A component of a complex value: `re` or `im`."""

    a: Expr
    name: str
    ty: DType


@dataclass(frozen=True, slots=True)
class Ptr(Expr):
    """A pointer: `&buf[offset]`, or `&var` for an accumulator (`var` set), or
    `offset` bytes into `buf` viewed as `elem` (byte_view)."""

    buf: Buf | None = None
    offset: Expr = Const(0)
    var: Var | None = None
    elem: DType | None = None
    byte_view: bool = False
    ty: None = None


@dataclass(frozen=True, slots=True)
class Pool(Expr):
    """The thread pool a micro-kernel may split its work over (absent: serial), as three
    arguments: its parallel_for, that function's user pointer, and its thread count (0
    when unknown: an application's pool)."""

    ty: None = None


def lift(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        return Const(int(x), INDEX)
    if isinstance(x, int):
        return Const(x, INDEX)
    raise TypeError(f"not an index expression: {x!r}")


def binary(op: str, a: Expr, b: Expr) -> Expr:
    """`a op b` in the type of `a`, folding constant index arithmetic and identities."""
    if isinstance(a, Const) and isinstance(b, Const) and a.ty.kind in ("sint", "uint") and a.ty == b.ty:
        v = _fold(op, a.value, b.value)
        if v is not None:
            return Const(v, a.ty)
    if op in ("+", "-") and isinstance(b, Const) and b.value == 0 and a.ty == INDEX:
        return a
    if op == "+" and isinstance(a, Const) and a.value == 0 and b.ty == INDEX:
        return b
    if op in ("*", "/") and isinstance(b, Const) and b.value == 1 and a.ty == INDEX:
        return a
    if op == "*" and isinstance(a, Const) and a.value == 1 and b.ty == INDEX:
        return b
    if op == "*" and a.ty == INDEX and ((isinstance(b, Const) and b.value == 0) or (isinstance(a, Const) and a.value == 0)):
        return Const(0)
    return Binary(op, a, b, a.ty)


def _fold(op: str, x: int, y: int) -> int | None:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/" and y > 0 and x >= 0:
        return x // y
    if op == "%" and y > 0 and x >= 0:
        return x % y
    return None
