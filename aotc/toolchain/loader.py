"""Loading a built model library into Python through cffi (ABI mode) and calling it
with numpy arrays. This module knows the fixed C API every generated library
exports under its prefix, and nothing of how the library was produced.

A `Model` owns one instance created with `P_ALLOC_RESULTS_AND_TEMPS` (the
instance allocates the arena; result buffers are replaced by fresh arrays on
each call). Every call copies its inputs into 64-byte aligned buffers, so the
caller's arrays are never aliased, and returns new result arrays.

Variables (args with `P_arg_is_variable`) are not passed on each call: each has
one persistent buffer, zero at load, that the model reads and updates in place.
`model.variables["w"]` is a numpy view of it; assign with
`model.variables["w"] = value` (copied in, checked like an input) or write
through the view; read it after a call to see the update. Passing a variable by
name in a call (`model(x, w=value)`) sets it first.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import AotcError
from ..hlo import dtypes as hlo_dtypes

_CDEF = """
typedef struct {P}_instance {P}_instance;
typedef enum {{ {P}_ALLOC_ALL = 0, {P}_ALLOC_RESULTS_AND_TEMPS = 1, {P}_ALLOC_NONE = 2 }} {P}_alloc_mode;
{P}_instance* {P}_create({P}_alloc_mode mode);
void {P}_destroy({P}_instance* m);
int {P}_run({P}_instance* m);
const char* {P}_error_msg(const {P}_instance* m);
int {P}_set_num_threads({P}_instance* m, int n);
void* {P}_arg_data({P}_instance* m, int i);
int {P}_set_arg_data({P}_instance* m, int i, void* data);
void* {P}_result_data({P}_instance* m, int i);
int {P}_set_result_data({P}_instance* m, int i, void* data);
int {P}_set_arena({P}_instance* m, void* arena, size_t bytes);
int {P}_lookup_arg_index(const char* name);
int {P}_lookup_result_index(const char* name);
const char* {P}_arg_name(int i);
const char* {P}_arg_type(int i);
int {P}_arg_rank(int i);
const int64_t* {P}_arg_dims(int i);
size_t {P}_arg_bytes(int i);
int {P}_arg_is_variable(int i);
const char* {P}_result_name(int i);
const char* {P}_result_type(int i);
int {P}_result_rank(int i);
const int64_t* {P}_result_dims(int i);
size_t {P}_result_bytes(int i);
int {P}_run_with(void* const* args, void* const* results, void* arena, size_t arena_bytes);
int {P}_load_weights({P}_instance* m, const char* path);
"""

_ALLOC_RESULTS_AND_TEMPS = 1
_ERR_INDEX = 5
_ALIGN = 64
_MAX_PORTS = 1 << 20
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelInputError(AotcError, ValueError):
    """An input of the wrong dtype, shape, name or count."""


class ModelRunError(AotcError, RuntimeError):
    """The C library returned an error code; `code` holds it."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class TensorSpec:
    name: str
    type: str  # HLO element type: "f32", "bf16", "pred", ...
    dims: tuple[int, ...]
    dtype: np.dtype  # numpy dtype of one element (bf16: ml_dtypes.bfloat16)
    nbytes: int
    is_variable: bool = False

    @property
    def shape_text(self) -> str:
        return f"{self.type}[{','.join(map(str, self.dims))}]"


def spec_from(obj: Any) -> TensorSpec:
    """A TensorSpec from anything describing a tensor with `name`, `dims` (or
    `shape`) and `dtype` (numpy dtype, HLO DType or HLO type name) or `type`."""
    if isinstance(obj, TensorSpec):
        return obj
    dims = tuple(int(d) for d in getattr(obj, "dims", getattr(obj, "shape", ())))
    dt = getattr(obj, "dtype", None)
    if dt is None:
        dt = getattr(obj, "type")
    if isinstance(dt, hlo_dtypes.DType):
        type_name = dt.name
    elif isinstance(dt, str) and dt in hlo_dtypes.DTYPES:
        type_name = dt
    else:
        type_name = hlo_dtypes.from_numpy(np.dtype(dt)).name
    npdt = hlo_dtypes.dtype(type_name).numpy
    nbytes = int(getattr(obj, "nbytes", 0) or int(np.prod(dims, dtype=np.int64)) * npdt.itemsize)
    return TensorSpec(str(getattr(obj, "name", "")), type_name, dims, npdt, nbytes,
                      bool(getattr(obj, "is_variable", False)))


def coerce_input(spec: TensorSpec, value: Any, what: str) -> np.ndarray:
    """`value` as an array of `spec`'s dtype and shape, or ModelInputError naming
    `what`. numpy arrays must already have the dtype (16- and 8-bit floats such as
    bf16 may also come as unsigned-integer bit patterns of the same width, and any
    ml_dtypes type as the void elements numpy reads back from an .npz); lists and
    Python scalars are converted."""
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype != spec.dtype:
            bits_ok = (hlo_dtypes.dtype(spec.type).kind == "float" and spec.dtype.itemsize <= 2
                       and arr.dtype.kind == "u" and arr.dtype.itemsize == spec.dtype.itemsize)
            # numpy stores ml_dtypes arrays (bf16, f8, f4, s2/u2/s4/u4) in .npy/.npz as raw
            # void elements ('|V1', '|V2'): their type is the signature's
            bits_ok = bits_ok or (arr.dtype.kind == "V" and arr.dtype.fields is None and spec.dtype.kind == "V"
                                  and arr.dtype.itemsize == spec.dtype.itemsize)
            if not bits_ok:
                raise ModelInputError(f"{what}: expected {spec.shape_text} ({_dtype_name(spec.dtype)}), "
                                      f"got an array of dtype {_dtype_name(arr.dtype)}")
            arr = arr.view(spec.dtype)
    else:
        try:
            arr = np.asarray(value, dtype=spec.dtype)
        except (TypeError, ValueError) as e:
            raise ModelInputError(f"{what}: cannot convert to {spec.shape_text}: {e}") from None
    if arr.shape != spec.dims:
        raise ModelInputError(f"{what}: expected shape {spec.dims} ({spec.shape_text}), "
                              f"got shape {arr.shape}")
    return arr


def aligned_empty(spec: TensorSpec, align: int = _ALIGN) -> np.ndarray:
    """A zeroed C-contiguous array for `spec` whose data starts on an `align` boundary."""
    nbytes = max(spec.nbytes, int(np.prod(spec.dims, dtype=np.int64)) * spec.dtype.itemsize)
    raw = np.zeros(nbytes + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes].view(spec.dtype).reshape(spec.dims)


def _dtype_name(dt: np.dtype) -> str:
    return np.dtype(dt).name


def load_library(so_path: str | os.PathLike, h_path_or_prefix: str | os.PathLike) -> "Model":
    """Open a model library. The second argument is the generated header (its
    `P_NUM_ARGS`/`P_NUM_RESULTS` give the counts) or just the C prefix `P`."""
    import cffi

    prefix, counts = _prefix_and_counts(so_path, h_path_or_prefix)
    ffi = cffi.FFI()
    ffi.cdef(_CDEF.format(P=prefix))
    try:
        lib = ffi.dlopen(os.path.abspath(os.fspath(so_path)))
    except OSError as e:
        raise AotcError(f"cannot load {so_path}: {e}") from None
    try:
        getattr(lib, f"{prefix}_create")
    except AttributeError:
        raise AotcError(f"{so_path} has no model with prefix '{prefix}' "
                        f"(no symbol {prefix}_create)") from None
    return Model(ffi, lib, prefix, counts, str(so_path))


def _prefix_and_counts(so_path, h_path_or_prefix) -> tuple[str, tuple[int, int] | None]:
    text = os.fspath(h_path_or_prefix)
    header = None
    if _IDENT.match(text) and not os.path.isfile(text):
        prefix = text
        for cand in (Path(so_path).with_suffix(".h"), Path(so_path).with_name(prefix + ".h")):
            if cand.is_file():
                header = cand
                break
    else:
        header, prefix = Path(text), None
    counts = None
    if header is not None:
        try:
            src = header.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise AotcError(f"cannot read header: {e.strerror or e}", file=str(header)) from None
        m = re.search(r"^typedef struct (\w+)_instance \1_instance;", src, re.M)
        if m is None:
            if prefix is None:
                raise AotcError("not a model header (no `typedef struct P_instance`)",
                                file=str(header))
        elif prefix is None or m.group(1) == prefix:
            prefix = m.group(1)
            na = re.search(r"^#define (\w+)_NUM_ARGS (\d+)", src, re.M)
            nr = re.search(r"^#define (\w+)_NUM_RESULTS (\d+)", src, re.M)
            if na and nr:
                counts = (int(na.group(2)), int(nr.group(2)))
    return prefix, counts


class _Variables(Mapping):
    """name → persistent numpy view; assignment copies the value in."""

    def __init__(self, model: "Model"):
        self._model = model

    def __getitem__(self, name: str) -> np.ndarray:
        return self._model._variable_view(name)

    def __setitem__(self, name: str, value: Any) -> None:
        self._model._set_variable(name, value)

    def __iter__(self) -> Iterator[str]:
        return iter(self._model._var_index)

    def __len__(self) -> int:
        return len(self._model._var_index)


class Model:
    """A loaded model: `model(*arrays, **named) -> list of result arrays`."""

    def __init__(self, ffi, lib, prefix: str, counts: tuple[int, int] | None, path: str):
        self._ffi, self._lib, self.name, self.path = ffi, lib, prefix, path
        self._fn = lambda suffix: getattr(lib, f"{prefix}_{suffix}")
        self._lock = threading.Lock()
        self._inst = self._fn("create")(_ALLOC_RESULTS_AND_TEMPS)
        if self._inst == ffi.NULL:
            raise AotcError(f"{prefix}_create failed: out of memory")
        if counts is None:
            counts = (self._probe_count("set_arg_data"), self._probe_count("set_result_data"))
        self.arg_specs = tuple(self._spec("arg", i) for i in range(counts[0]))
        self.result_specs = tuple(self._spec("result", i) for i in range(counts[1]))
        self._arg_index = {s.name: i for i, s in enumerate(self.arg_specs)}
        self._feed_order = [i for i, s in enumerate(self.arg_specs) if not s.is_variable]
        self._var_index = {s.name: i for i, s in enumerate(self.arg_specs) if s.is_variable}
        self._var_bufs = {i: aligned_empty(self.arg_specs[i]) for i in self._var_index.values()}
        self.variables: Mapping[str, np.ndarray] = _Variables(self)

    # ------------------------------------------------------------- description
    @property
    def arg_names(self) -> list[str]:
        return [s.name for s in self.arg_specs]

    @property
    def result_names(self) -> list[str]:
        return [s.name for s in self.result_specs]

    @property
    def feed_names(self) -> list[str]:
        """Names of the non-variable args: the positional parameters of a call."""
        return [self.arg_specs[i].name for i in self._feed_order]

    def __repr__(self) -> str:
        args = ", ".join(f"{s.name}: {s.shape_text}" + (" variable" if s.is_variable else "")
                         for s in self.arg_specs)
        res = ", ".join(f"{s.name}: {s.shape_text}" for s in self.result_specs)
        return f"<aotc Model {self.name} ({args}) -> ({res})>"

    # ------------------------------------------------------------------ calling
    def __call__(self, *arrays: Any, **named: Any) -> list[np.ndarray]:
        inst = self._live()
        bufs = self._bind(arrays, named)
        results = [aligned_empty(s) for s in self.result_specs]
        cast = self._ffi.cast
        with self._lock:
            for i, b in enumerate(bufs):
                self._check(self._fn("set_arg_data")(inst, i, cast("void*", b.ctypes.data)),
                            f"setting argument {i}")
            for i, r in enumerate(results):
                self._check(self._fn("set_result_data")(inst, i, cast("void*", r.ctypes.data)),
                            f"setting result {i}")
            rc = self._fn("run")(inst)
            if rc != 0:
                raise ModelRunError(f"{self.name}_run failed (error {rc}): {self._error()}", rc)
        return results

    def run_dict(self, feeds: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Call with inputs by name; results by name."""
        return dict(zip(self.result_names, self(**dict(feeds))))

    def set_num_threads(self, n: int) -> None:
        with self._lock:
            self._check(self._fn("set_num_threads")(self._live(), int(n)), f"set_num_threads({n})")

    def close(self) -> None:
        """Destroy the instance; the model cannot be called afterwards."""
        with self._lock:
            if self._inst is not None:
                self._fn("destroy")(self._inst)
                self._inst = None

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # ---------------------------------------------------------------- internals
    def _live(self):
        if self._inst is None:
            raise AotcError(f"model {self.name} is closed")
        return self._inst

    def _bind(self, arrays: tuple, named: dict) -> list[np.ndarray]:
        feeds = self._feed_order
        if len(arrays) > len(feeds):
            raise ModelInputError(f"{self.name} takes {len(feeds)} positional inputs "
                                  f"({', '.join(self.feed_names)}), got {len(arrays)}")
        given: dict[int, Any] = dict(zip(feeds, arrays))
        for name, value in named.items():
            i = self._arg_index.get(name)
            if i is None:
                raise ModelInputError(f"{self.name} has no argument '{name}' "
                                      f"(arguments: {', '.join(self.arg_names)})")
            if i in given:
                raise ModelInputError(f"argument '{name}' given twice (by position and by name)")
            given[i] = value
        missing = [self.arg_specs[i].name for i in feeds if i not in given]
        if missing:
            raise ModelInputError(f"missing input{'s' if len(missing) > 1 else ''} "
                                  f"{', '.join(missing)} for {self.name}")
        bufs = []
        for i, spec in enumerate(self.arg_specs):
            if spec.is_variable:
                if i in given:
                    self._set_variable(spec.name, given[i])
                bufs.append(self._var_bufs[i])
            else:
                arr = coerce_input(spec, given[i], f"argument {i} '{spec.name}'")
                buf = aligned_empty(spec)
                np.copyto(buf, arr, casting="no")
                bufs.append(buf)
        return bufs

    def _variable_view(self, name: str) -> np.ndarray:
        if name not in self._var_index:
            raise KeyError(f"{self.name} has no variable '{name}' "
                           f"(variables: {', '.join(self._var_index) or 'none'})")
        return self._var_bufs[self._var_index[name]]

    def _set_variable(self, name: str, value: Any) -> None:
        buf = self._variable_view(name)
        i = self._var_index[name]
        arr = coerce_input(self.arg_specs[i], value, f"variable '{name}'")
        np.copyto(buf, arr, casting="no")

    def _spec(self, kind: str, i: int) -> TensorSpec:
        ffi = self._ffi
        cname = self._fn(f"{kind}_name")(i)
        name = ffi.string(cname).decode() if cname != ffi.NULL else ""
        ctype = self._fn(f"{kind}_type")(i)
        if ctype == ffi.NULL:
            raise AotcError(f"{self.name}: {kind} {i} has no element type")
        type_name = ffi.string(ctype).decode()
        if type_name not in hlo_dtypes.DTYPES or type_name == "token":
            raise AotcError(f"{self.name}: {kind} {i} has unsupported element type '{type_name}'")
        rank = self._fn(f"{kind}_rank")(i)
        dims_p = self._fn(f"{kind}_dims")(i)
        dims = tuple(int(dims_p[d]) for d in range(rank)) if rank > 0 else ()
        nbytes = int(self._fn(f"{kind}_bytes")(i))
        variable = kind == "arg" and bool(self._fn("arg_is_variable")(i))
        return TensorSpec(name or f"{kind}{i}", type_name, dims,
                          hlo_dtypes.dtype(type_name).numpy, nbytes, variable)

    def _probe_count(self, setter: str) -> int:
        """Without a header: the first index the setter rejects with P_ERR_INDEX."""
        scratch = aligned_empty(TensorSpec("", "u8", (64,), np.dtype(np.uint8), 64))
        ptr = self._ffi.cast("void*", scratch.ctypes.data)
        for i in range(_MAX_PORTS):
            if self._fn(setter)(self._inst, i, ptr) == _ERR_INDEX:
                return i
        raise AotcError(f"{self.name}: cannot tell how many ports the model has")

    def load_weights(self, path: str | os.PathLike) -> None:
        """Read a weights file (`--weights file`: PREFIX.weights) into this model."""
        try:
            fn = self._fn("load_weights")
        except AttributeError:
            raise AotcError(f"{self.name}: the library reads no weights file (compile it with --weights file)") from None
        self._check(fn(self._inst, os.fsencode(path)), f"loading {os.fspath(path)}")

    def _error(self) -> str:
        msg = self._fn("error_msg")(self._inst)
        return self._ffi.string(msg).decode(errors="replace") if msg != self._ffi.NULL else ""

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise ModelRunError(f"{self.name}: {what} failed (error {rc}): {self._error()}", rc)
