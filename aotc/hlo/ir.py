"""The HLO IR: Module, Computation, Instruction and their typed attributes.

Plain frozen data. Instruction names are identity; operands and called
computations are referred to by name. Source locations ride along for error
messages but never take part in equality, so `parse(print(m)) == m` holds.
Nothing here knows op semantics: shape rules live in `aotc.ops`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

import numpy as np

from .shape import ArrayShape, Shape
from .opcodes import Op


@dataclass(frozen=True, slots=True)
class Loc:
    """1-based position in a source file."""

    file: str
    line: int
    col: int


# ---------------------------------------------------------------- attributes


@dataclass(frozen=True, slots=True)
class Raw:
    """An attribute kept verbatim (metadata, backend_config, sharding, ...)."""

    text: str


@dataclass(frozen=True, slots=True)
class SliceDim:
    start: int
    limit: int
    stride: int = 1


@dataclass(frozen=True, slots=True)
class PadDim:
    lo: int
    hi: int
    interior: int = 0


@dataclass(frozen=True, slots=True)
class WindowDim:
    size: int
    stride: int = 1
    pad_lo: int = 0
    pad_hi: int = 0
    lhs_dilate: int = 1
    rhs_dilate: int = 1
    reversal: bool = False


@dataclass(frozen=True, slots=True)
class Window:
    dims: tuple[WindowDim, ...]


@dataclass(frozen=True, slots=True)
class DimLabels:
    """Convolution `dim_labels=b01f_01io->b01f`, kept as its three strings."""

    lhs: str
    rhs: str
    out: str


@dataclass(frozen=True, slots=True, eq=False)
class Literal:
    """A constant's value. `values` is a numpy array with the shape's dims, a
    tuple of Literals for tuple constants, or None when the dump elided it
    (`constant({...})`)."""

    shape: Shape
    values: Any

    @property
    def elided(self) -> bool:
        return self.values is None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal) or not self.shape.same_logical(other.shape):
            return False
        a, b = self.values, other.values
        if a is None or b is None:
            return a is None and b is None
        if isinstance(a, tuple):
            return isinstance(b, tuple) and a == b
        if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
            return False
        return bool(np.array_equal(_byte_view(a), _byte_view(b)))  # the same bits, no copies

    def __hash__(self) -> int:  # a sample of the bits: CSE compares few big constants in full
        v = self.values
        if v is None or isinstance(v, tuple) or not v.size:
            return hash(str(self.shape))
        bits = _byte_view(v)
        return hash((str(self.shape), bytes(bits[:64]), bytes(bits[-64:])))


def _byte_view(a) -> Any:
    """A numpy array's bytes as a flat uint8 array (a view when it is contiguous)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


@dataclass(frozen=True, slots=True)
class Alias:
    """One `input_output_alias` entry: output {index} may reuse param (number, {index})."""

    output_index: tuple[int, ...]
    param_number: int
    param_index: tuple[int, ...]
    kind: str = "may-alias"


# ---------------------------------------------------------------- IR


@dataclass(frozen=True, slots=True)
class Instruction:
    name: str
    opcode: Op
    shape: Shape
    operands: tuple[str, ...] = ()
    attrs: tuple[tuple[str, Any], ...] = ()  # in source order
    literal: Literal | None = None  # constants only
    parameter_number: int | None = None  # parameters only
    loc: Loc | None = field(default=None, compare=False)

    def __post_init__(self) -> None:  # every instruction carries an Op, however it was made
        if type(self.opcode) is not Op:
            object.__setattr__(self, "opcode", Op(self.opcode))

    def attr(self, key: str, default: Any = None) -> Any:
        for k, v in self.attrs:
            if k == key:
                return v
        return default

    def has_attr(self, key: str) -> bool:
        return any(k == key for k, _ in self.attrs)

    @property
    def array_shape(self) -> ArrayShape:
        assert isinstance(self.shape, ArrayShape), f"{self.name} has a tuple shape"
        return self.shape

    def called_computations(self) -> tuple[str, ...]:
        """Names of every computation this instruction refers to, in attribute order."""
        out: list[str] = []
        for k, v in self.attrs:
            if k in COMPUTATION_ATTRS:
                out.append(v)
            elif k in COMPUTATION_LIST_ATTRS:
                out.extend(v)
        return tuple(out)

    def with_(self, **changes: Any) -> "Instruction":
        return replace(self, **changes)


# attribute keys whose value names one computation / a list of computations
COMPUTATION_ATTRS = frozenset(
    {"to_apply", "calls", "condition", "body", "select", "scatter", "true_computation", "false_computation"}
)
COMPUTATION_LIST_ATTRS = frozenset({"branch_computations", "called_computations"})


@dataclass(frozen=True, slots=True)
class Computation:
    name: str
    instructions: tuple[Instruction, ...]  # source (or schedule) order
    root: str
    is_entry: bool = False
    # printed signature `(p: f32[2]) -> f32[2]` when the source had one
    has_signature: bool = False
    loc: Loc | None = field(default=None, compare=False)
    _by_name: dict = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {i.name: i for i in self.instructions})

    def get(self, name: str) -> Instruction:
        return self._by_name[name]

    def has(self, name: str) -> bool:
        return name in self._by_name

    @property
    def root_instruction(self) -> Instruction:
        return self.get(self.root)

    @property
    def parameters(self) -> tuple[Instruction, ...]:
        """Parameter instructions ordered by parameter number."""
        ps = [i for i in self.instructions if i.opcode == Op.PARAMETER]
        return tuple(sorted(ps, key=lambda i: i.parameter_number or 0))

    def users(self) -> dict[str, list[str]]:
        """name -> names of instructions using it, in instruction order."""
        out: dict[str, list[str]] = {i.name: [] for i in self.instructions}
        for i in self.instructions:
            for o in dict.fromkeys(i.operands):  # each user once, in linear time
                if o in out:
                    out[o].append(i.name)
        return out


@dataclass(frozen=True, slots=True)
class StackFrames:
    """The stack-frame tables of optimized dumps, kept to print them back."""

    file_names: tuple[tuple[int, str], ...] = ()
    function_names: tuple[tuple[int, str], ...] = ()
    file_locations: tuple[tuple[int, str], ...] = ()  # id, raw `{...}` body
    stack_frames: tuple[tuple[int, str], ...] = ()
    present: tuple[str, ...] = ()  # which section headings appeared


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    computations: tuple[Computation, ...]  # source order
    entry: str
    # entry_computation_layout: parameter shapes and result shape (with layouts)
    entry_params: tuple[Shape, ...] | None = None
    entry_result: Shape | None = None
    aliases: tuple[Alias, ...] = ()
    header_attrs: tuple[tuple[str, Raw], ...] = ()  # other header attributes, verbatim
    stack_frames: StackFrames | None = None
    source: str = field(default="<string>", compare=False)
    _by_name: dict = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {c.name: c for c in self.computations})

    def computation(self, name: str) -> Computation:
        return self._by_name[name]

    def has_computation(self, name: str) -> bool:
        return name in self._by_name

    @property
    def entry_computation(self) -> Computation:
        return self.computation(self.entry)

    def instructions(self) -> Iterator[tuple[Computation, Instruction]]:
        for c in self.computations:
            for i in c.instructions:
                yield c, i

    def with_computations(self, comps: tuple[Computation, ...], entry: str | None = None) -> "Module":
        return replace(self, computations=comps, entry=entry or self.entry)


def name_maker(m: Module, sep: str = ".") -> Callable[[str], str]:
    """A function giving fresh instruction names (`base`, `base.1`, ... with `sep` '.') unused in `m`."""
    taken = {i.name for _, i in m.instructions()}

    def unique(base: str) -> str:
        name, n = base, 1
        while name in taken:
            name, n = f"{base}{sep}{n}", n + 1
        taken.add(name)
        return name

    return unique
