"""The Program: what lowering hands to the C emitter.

Kernels over named buffer slots, the arena layout, constants and the public
signature. Plain data with C-ready names; the emitter reads nothing else and
decides no semantics.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..hlo.dtypes import DType
from ..kernel import ir as K
from ..kernel.host import HostCall


@dataclass(frozen=True, slots=True)
class Slot:
    """A buffer some kernel reads or writes, and where it lives."""

    cname: str  # C name of the pointer in the run function
    hlo: str  # HLO value it holds (instruction name, `#k` for tuple leaf k)
    dtype: DType
    dims: tuple[int, ...]
    nbytes: int
    place: str  # "arena" | "arg" | "result" | "const" | "alias" | "scratch" | "token" (no data)
    offset: int = 0  # arena byte offset, or arg/result index
    live: tuple[int, int] = (0, 0)  # first and last kernel step using it
    alias_of: str | None = None  # for views: the slot whose memory this is
    const: str | None = None  # for constants: the C array name


@dataclass(frozen=True, slots=True)
class Kernel:
    cname: str  # static function name, e.g. k_add_5
    provenance: tuple[str, ...]  # HLO instructions it implements
    params: tuple[tuple[str, bool], ...]  # (slot cname, written?) in call order
    body: tuple[K.Stmt, ...]  # kernel IR
    outer: int = 0  # > 0: the function ends with (int64_t lo, int64_t hi), its outermost loop's range
    parallel: bool = False  # a thread pool may split [0, outer) (the kernel is large enough to pay)
    takes_pool: bool = False  # the function's last parameter is the pool (`const aotc_par* par`)


@dataclass(frozen=True, slots=True)
class ConstArray:
    cname: str
    dtype: DType
    dims: tuple[int, ...]
    data: np.ndarray  # storage representation (bf16 as its uint16 bits)


@dataclass(frozen=True, slots=True)
class Weight:
    """A tensor read from a weights file at run time (`--weights file`): internal argument
    `len(args) + k` of the execute function for the k-th weight."""

    name: str  # its name in the weights file (the .npz key)
    dtype: DType
    dims: tuple[int, ...]
    hlo: str  # the parameter it stands for
    data: np.ndarray  # storage representation, written to PREFIX.weights

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


@dataclass(frozen=True, slots=True)
class Port:
    """One argument or result of the generated function."""

    name: str
    dtype: DType
    dims: tuple[int, ...]
    nbytes: int
    hlo: str
    is_variable: bool = False
    readonly: bool = False


@dataclass(frozen=True, slots=True)
class Program:
    name: str  # C prefix
    source: str  # input file name for the banner
    signature_text: str
    args: tuple[Port, ...]
    results: tuple[Port, ...]
    slots: tuple[Slot, ...]
    kernels: tuple[Kernel, ...]  # in execution order
    constants: tuple[ConstArray, ...]
    functions: tuple[K.Function, ...]  # scalar helper functions (reducers, comparators)
    arena_bytes: int
    peak_bytes: int
    cpp_class: str | None = None
    target: str = "host"
    subprograms: tuple["Program", ...] = ()  # computations run by control flow, callees first
    weights: tuple[Weight, ...] = ()  # --weights file: parameters set from a weights file at run time
    host_calls: tuple[HostCall, ...] = ()  # calls into the application (custom calls, feeds), by wrapper name
    # (result, dims result) index pairs: a result with a bounded dynamic dimension holds its
    # real-size array at its start, and the s32[rank] dims result its real dimensions
    dynamic_results: tuple[tuple[int, int], ...] = ()

    def slot(self, cname: str) -> Slot:
        for s in self.slots:
            if s.cname == cname:
                return s
        raise KeyError(cname)
