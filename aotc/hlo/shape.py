"""HLO shapes: arrays (element type, dims, optional layout) and tuples.

Layouts are minor-to-major dimension orders as HLO prints them. Logical values
never depend on layout; only the entry computation layout (how feeds and
fetches sit in memory) and `bitcast` give it meaning. Printing lives here too,
because shapes appear verbatim in many places of the text format.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Union

from .dtypes import DType, DTYPES


class ShapeError(Exception):
    """Raised by shape rules; the verifier turns it into a located AotcError."""


@dataclass(frozen=True, slots=True)
class ArrayShape:
    dtype: DType
    dims: tuple[int, ...]
    layout: tuple[int, ...] | None = None  # minor-to-major; None = not printed
    dynamic: tuple[bool, ...] = ()  # per dim: printed as `<=N` (bounded dynamic)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def size(self) -> int:
        return prod(self.dims)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.nbytes

    @property
    def is_tuple(self) -> bool:
        return False

    @property
    def is_token(self) -> bool:
        return self.dtype.kind == "token"

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        """The layout, defaulting to row-major (major-to-minor = 0..rank-1)."""
        if self.layout is None:
            return tuple(range(self.rank - 1, -1, -1))
        return self.layout

    @property
    def is_row_major(self) -> bool:
        return self.minor_to_major == tuple(range(self.rank - 1, -1, -1))

    def with_layout(self, layout: tuple[int, ...] | None) -> "ArrayShape":
        return ArrayShape(self.dtype, self.dims, layout, self.dynamic)

    def with_dims(self, dims: tuple[int, ...], dt: DType | None = None) -> "ArrayShape":
        return ArrayShape(dt or self.dtype, tuple(dims), None)

    def same_logical(self, other: "Shape") -> bool:
        """Same element type and dims, ignoring layout."""
        return isinstance(other, ArrayShape) and self.dtype == other.dtype and self.dims == other.dims

    def text(self, with_layout: bool = True) -> str:
        if self.is_token:
            return "token[]"
        dims = ",".join(
            f"<={d}" if (self.dynamic and self.dynamic[i]) else str(d) for i, d in enumerate(self.dims)
        )
        s = f"{self.dtype.name}[{dims}]"
        if with_layout and self.layout is not None:
            s += "{" + ",".join(str(d) for d in self.layout) + "}"
        return s

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True, slots=True)
class TupleShape:
    elements: tuple["Shape", ...]

    @property
    def is_tuple(self) -> bool:
        return True

    @property
    def is_token(self) -> bool:
        return False

    @property
    def nbytes(self) -> int:
        return sum(e.nbytes for e in self.elements)

    def same_logical(self, other: "Shape") -> bool:
        return (
            isinstance(other, TupleShape)
            and len(self.elements) == len(other.elements)
            and all(a.same_logical(b) for a, b in zip(self.elements, other.elements))
        )

    def leaves(self, prefix: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], ArrayShape]]:
        """(shape index, array shape) for every non-tuple leaf, depth first."""
        out: list[tuple[tuple[int, ...], ArrayShape]] = []
        for i, e in enumerate(self.elements):
            if isinstance(e, TupleShape):
                out.extend(e.leaves(prefix + (i,)))
            else:
                out.append((prefix + (i,), e))
        return out

    def text(self, with_layout: bool = True) -> str:
        return "(" + ", ".join(e.text(with_layout) for e in self.elements) + ")"

    def __str__(self) -> str:
        return self.text()


Shape = Union[ArrayShape, TupleShape]


def array(dtype_name: str, dims, layout=None) -> ArrayShape:
    """Convenience constructor: array("f32", [2, 3])."""
    return ArrayShape(DTYPES[dtype_name], tuple(int(d) for d in dims), None if layout is None else tuple(layout))


def scalar(dtype_name: str) -> ArrayShape:
    return ArrayShape(DTYPES[dtype_name], ())


def leaves(shape: Shape) -> list[tuple[tuple[int, ...], ArrayShape]]:
    """Leaves of any shape; an array shape is its own single leaf at index ()."""
    if isinstance(shape, TupleShape):
        return shape.leaves()
    return [((), shape)]


def subshape(shape: Shape, index: tuple[int, ...]) -> Shape:
    for i in index:
        assert isinstance(shape, TupleShape)
        shape = shape.elements[i]
    return shape


def row_major_strides(dims: tuple[int, ...]) -> tuple[int, ...]:
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    return tuple(strides)
