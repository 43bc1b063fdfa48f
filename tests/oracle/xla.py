"""XLA:CPU as the test oracle: run or time any HLO text module through jax/jaxlib.

Expected values in aotc's tests come from here and never from aotc. This module
owns the path HLO text -> HloModule -> StableHLO -> XLA:CPU executable, the npz
array conventions shared with the corpus (bf16 stored as uint16 bits), and a
timing loop that runs in a single-threaded child process. It must not import
aotc.

Threading: XLA:CPU sizes its intra-op thread pools once, when the CPU client is
created, from the environment variable PJRT_NPROC. Timing therefore always runs
in a fresh child process with PJRT_NPROC set before jax is imported.

CLI:
    python -m tests.oracle.xla run   MODEL.hlo --inputs in.npz [--config cfg.yaml] [--output out.npz]
    python -m tests.oracle.xla bench MODEL.hlo [--inputs in.npz] [--config cfg.yaml]
                                     [--iters N] [--threads 1] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# ------------------------------------------------------------------ dtypes

_TYPE_NAMES = ("pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
               "f16", "bf16", "f32", "f64", "c64", "c128")


def np_dtype(type_name: str) -> np.dtype:
    """HLO element type name -> numpy dtype (bf16 -> ml_dtypes.bfloat16)."""
    import ml_dtypes
    table = {
        "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
        "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
        "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
        "c64": np.complex64, "c128": np.complex128,
    }
    return np.dtype(table[type_name])


def hlo_type_name(dtype) -> str:
    """numpy dtype -> HLO element type name."""
    dtype = np.dtype(dtype)
    for name in _TYPE_NAMES:
        if np_dtype(name) == dtype:
            return name
    raise ValueError(f"no HLO element type for numpy dtype {dtype}")


def to_npz_array(a) -> np.ndarray:
    """The array as stored in an .npz (bf16 as its uint16 bit pattern, the one-byte
    ml_dtypes types as their uint8 codes)."""
    a = np.asarray(a)
    if a.dtype.itemsize == 1 and a.dtype.kind not in "biu":  # f8, f4, s2/u2/s4/u4 (ml_dtypes)
        return a.view(np.uint8)
    return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def from_npz_array(a, type_name: str | None) -> np.ndarray:
    """Inverse of to_npz_array when the HLO element type is known."""
    a = np.asarray(a)
    if type_name is None:
        return a
    want = np_dtype(type_name)
    if a.dtype == want:
        return a
    if type_name == "bf16" and a.dtype == np.uint16:
        return a.view(want)
    raise ValueError(f"array of dtype {a.dtype} cannot hold HLO type {type_name}")


# ------------------------------------------------------------------ optimized HLO

_METADATA = re.compile(r', metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
# the stack-frame tables after an optimized module's header (FileNames holds the exporting
# machine's paths)
_FRAMES = re.compile(r"\n(?:FileNames|FunctionNames|FileLocations|StackFrames)\n(?:[^\n]+\n)*")


def strip_debug_info(text: str) -> str:
    """HLO text without op metadata and stack-frame tables: what a committed export keeps."""
    return _FRAMES.sub("", _METADATA.sub("", text))


_SHAPE_RE = re.compile(r"^([a-z0-9]+)\[([^\]]*)\](?:\{([^}]*)\})?")
_INSTR_RE = re.compile(r"^(\s*)(ROOT\s+)?(%?[\w.\-]+)\s*=\s*(\S+)\s+([\w\-]+)\((.*)$")


def _parse_array_shape(text: str):
    """'f32[4,8]{0,1}' -> ('f32', [4, 8], [0, 1]) with a default layout if absent."""
    m = _SHAPE_RE.match(text)
    if not m:
        return None
    dims = [int(d.lstrip("<=")) for d in m.group(2).split(",") if d.strip()]
    layout = m.group(3)
    if layout is None or layout.strip() == "":
        mtm = list(range(len(dims) - 1, -1, -1))
    else:
        mtm = [int(x) for x in layout.split(":")[0].split(",") if x.strip()]
    return m.group(1), dims, mtm


def _fmt_shape(ty: str, dims) -> str:
    return f"{ty}[{','.join(str(d) for d in dims)}]"


def _bits(type_name: str) -> int:
    return 8 if type_name == "pred" else np_dtype(type_name).itemsize * 8


def _bitcast_as_logical(indent: str, root: str, name: str, src: str, src_shape, dst_shape):
    """Lines computing `bitcast` of buffer `src` as transpose/reshape/transpose.

    A bitcast reinterprets the physical buffer; logically that is: walk the
    source in its physical (major-to-minor) order, reshape to the destination's
    physical dims, then transpose to the destination's logical dim order."""
    s_ty, s_dims, s_mtm = src_shape
    d_ty, d_dims, d_mtm = dst_shape
    if s_ty != d_ty:
        if _bits(s_ty) != _bits(d_ty):
            raise ValueError(f"bitcast {name} changes the element width; "
                             "not supported by the oracle")
        base = name.lstrip("%")
        lines = _bitcast_as_logical(indent, "", f"%{base}.same", src, src_shape,
                                    (s_ty, d_dims, d_mtm))
        lines.append(f"{indent}{root}{name} = {_fmt_shape(d_ty, d_dims)} "
                     f"bitcast-convert(%{base}.same)")
        return lines
    s_perm = list(reversed(s_mtm))
    d_perm = list(reversed(d_mtm))
    base = name.lstrip("%")
    s_phys = [s_dims[p] for p in s_perm]
    d_phys = [d_dims[p] for p in d_perm]
    lines = []
    cur = src
    if s_perm != sorted(s_perm):
        lines.append(f"{indent}%{base}.phys = {_fmt_shape(s_ty, s_phys)} transpose({cur}), "
                     f"dimensions={{{','.join(map(str, s_perm))}}}")
        cur = f"%{base}.phys"
    inv = [d_perm.index(j) for j in range(len(d_perm))]
    if inv == sorted(inv):
        lines.append(f"{indent}{root}{name} = {_fmt_shape(d_ty, d_dims)} reshape({cur})")
    else:
        lines.append(f"{indent}%{base}.rs = {_fmt_shape(d_ty, d_phys)} reshape({cur})")
        lines.append(f"{indent}{root}{name} = {_fmt_shape(d_ty, d_dims)} transpose(%{base}.rs), "
                     f"dimensions={{{','.join(map(str, inv))}}}")
    return lines


def _drop_attr(line: str, attr: str) -> str:
    """Remove `, attr={...}` (balanced braces) from an instruction line."""
    i = line.find(", " + attr + "={")
    if i < 0:
        return line
    j, depth = line.index("{", i), 0
    while j < len(line):
        depth += {"{": 1, "}": -1}.get(line[j], 0)
        j += 1
        if depth == 0:
            break
    return line[:i] + line[j:]


def logical_text(text: str) -> str:
    """Rewrite an optimized (fused, scheduled) module into its logical meaning so
    XLA can compile it again: fusion -> call, bitcast -> transpose/reshape.
    Pre-optimization text passes through unchanged."""
    if not re.search(r"\b(fusion|bitcast)\(", text):
        return text
    shapes: dict[str, tuple] = {}
    out = []
    for line in text.split("\n"):
        m = _INSTR_RE.match(line)
        if not m:
            out.append(line)
            continue
        indent, root, name, shape, opcode, rest = m.groups()
        root = root or ""
        parsed = _parse_array_shape(shape)
        if parsed is not None:
            shapes[name.lstrip("%")] = parsed
        if opcode == "fusion":
            line = re.sub(r",\s*kind=k\w+", "", line)
            line = _drop_attr(line, "output_to_operand_aliasing")
            line = line.replace("calls=", "to_apply=").replace(" fusion(", " call(", 1)
        elif opcode == "bitcast" and parsed is not None:
            operand = rest.split(")")[0].strip().split(" ")[-1]
            src = shapes.get(operand.lstrip("%"))
            if src is not None:
                out.extend(_bitcast_as_logical(indent, root, name, operand, src, parsed))
                continue
        out.append(line)
    return "\n".join(out)


# ------------------------------------------------------------------ executable

def _jax():
    import jax
    from jax._src import xla_bridge
    from jax._src.lib import _jax as jaxlib_ext
    from jax._src.lib import hlo
    return jax, hlo, jaxlib_ext, xla_bridge


def read_text(path_or_text: str) -> str:
    if "\n" not in path_or_text and os.path.exists(path_or_text):
        with open(path_or_text) as f:
            return f.read()
    return path_or_text


def _leaf_shapes(shape) -> list:
    """The array leaves of a tuple shape, depth first."""
    out = []
    for s in shape.tuple_shapes():
        out.extend(_leaf_shapes(s) if s.is_tuple() else [s])
    return out


class XlaExecutable:
    """One HLO text module compiled for XLA:CPU (a single device)."""

    def __init__(self, hlo_text: str):
        self.jax, hlo, ext, xla_bridge = _jax()
        text = logical_text(hlo_text)
        module = hlo.hlo_module_from_text(text)
        proto = module.as_serialized_hlo_module_proto()
        program = hlo.XlaComputation(proto).program_shape()
        params = list(program.parameter_shapes())
        # one tuple-shaped parameter: XLA takes its leaves as the arguments (tupled arguments)
        self.tupled = len(params) == 1 and params[0].is_tuple()
        if self.tupled:
            params = _leaf_shapes(params[0])
        elif any(s.is_tuple() for s in params):
            raise ValueError("a tuple-shaped parameter is supported by the oracle only as the only parameter")
        self.param_types = [(tuple(s.dimensions()), np.dtype(s.numpy_dtype())) for s in params]
        res = program.result_shape()
        leaves = res.tuple_shapes() if res.is_tuple() else [res]
        if any(s.is_tuple() for s in leaves):
            raise ValueError("nested tuple results are not supported by the oracle")
        self.result_types = [(tuple(s.dimensions()), np.dtype(s.numpy_dtype())) for s in leaves]
        backend = xla_bridge.get_backend("cpu")
        self.device = backend.devices()[0]
        stablehlo = ext.mlir.hlo_to_stablehlo(proto)
        options = ext.CompileOptions()
        options.parameter_is_tupled_arguments = self.tupled
        self.exe = backend.compile_and_load(stablehlo, ext.DeviceList((self.device,)), options)

    def coerce(self, inputs) -> list[np.ndarray]:
        """Check inputs against the parameter shapes; bf16 may come as uint16 bits."""
        if len(inputs) != len(self.param_types):
            raise ValueError(f"module takes {len(self.param_types)} parameters, "
                             f"got {len(inputs)}")
        out = []
        for i, (a, (shape, dt)) in enumerate(zip(inputs, self.param_types)):
            a = np.asarray(a)
            if a.dtype != dt:
                if dt.name == "bfloat16" and a.dtype == np.uint16:
                    a = a.view(dt)
                else:
                    raise ValueError(f"parameter {i}: dtype {a.dtype} != {dt}")
            if tuple(a.shape) != shape:
                raise ValueError(f"parameter {i}: shape {a.shape} != {shape}")
            out.append(np.asarray(a, order="C"))
        return out

    def device_buffers(self, inputs):
        # Without x64, device_put would narrow 64-bit arrays to 32 bits.
        with self.jax.enable_x64(True):
            return [self.jax.device_put(a, self.device) for a in self.coerce(inputs)]

    def execute(self, buffers):
        outs = self.exe.execute(buffers)
        for o in outs:
            o.block_until_ready()
        return outs

    def run(self, inputs) -> list[np.ndarray]:
        """Execute once; one numpy array per result (root tuple flattened)."""
        return [np.asarray(o) for o in self.execute(self.device_buffers(inputs))]

    def time(self, inputs, iters: int = 100, warmup: int = 5, min_time_s: float = 0.0):
        """Time `iters` single executions (more if min_time_s is not reached yet)."""
        bufs = self.device_buffers(inputs)
        for _ in range(warmup):
            self.execute(bufs)
        samples = []
        start = time.perf_counter()
        while len(samples) < iters or (time.perf_counter() - start < min_time_s
                                       and len(samples) < 100 * iters):
            t0 = time.perf_counter()
            self.execute(bufs)
            samples.append((time.perf_counter() - t0) * 1e6)
        return {"median_us": statistics.median(samples), "min_us": min(samples),
                "iters": len(samples), "threads": int(os.environ.get("PJRT_NPROC", "0") or 0)}


_CACHE: dict[str, XlaExecutable] = {}


def compile_hlo(hlo_text: str) -> XlaExecutable:
    """Compile (memoized on the text) for running in this process."""
    exe = _CACHE.get(hlo_text)
    if exe is None:
        exe = _CACHE[hlo_text] = XlaExecutable(hlo_text)
    return exe


def run_hlo(hlo_text: str, inputs) -> list[np.ndarray]:
    """Run HLO text (a module, or a path to one) on XLA:CPU in this process."""
    return compile_hlo(read_text(hlo_text)).run(list(inputs))


def time_hlo(hlo_text: str, inputs, iters: int = 100, threads: int = 1,
             min_time_s: float = 0.5, timeout: float = 900) -> dict:
    """Time HLO text on XLA:CPU in a fresh child process with PJRT_NPROC=threads.

    Returns {"median_us", "min_us", "iters", "threads"}."""
    text = read_text(hlo_text)
    with tempfile.TemporaryDirectory(prefix="xla_oracle_") as tmp:
        model = os.path.join(tmp, "model.hlo")
        with open(model, "w") as f:
            f.write(text)
        npz = os.path.join(tmp, "inputs.npz")
        np.savez(npz, **{f"arg{i}": to_npz_array(a) for i, a in enumerate(inputs)})
        env = dict(os.environ)
        env["PJRT_NPROC"] = str(int(threads))
        if int(threads) == 1:
            flags = env.get("XLA_FLAGS", "")
            if "xla_cpu_multi_thread_eigen" not in flags:
                env["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
        cmd = [sys.executable, os.path.abspath(__file__), "bench", model, "--inputs", npz,
               "--iters", str(iters), "--min-time-s", str(min_time_s), "--json"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"XLA timing child failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ npz inputs

def load_inputs(npz_path: str, exe: XlaExecutable, cfg_path: str | None = None):
    """Parameter arrays in parameter order, from an npz keyed by feed names
    (with a config) or arg0, arg1, ... / file order (without)."""
    z = np.load(npz_path)
    if cfg_path:
        import yaml
        with open(cfg_path) as f:
            cfg = yaml.safe_load(f)
        feeds = sorted(cfg.get("feeds", []), key=lambda fd: int(fd["id"]))
        keys = [fd["name"] for fd in feeds]
    else:
        keys = list(z.keys())
        if all(f"arg{i}" in keys for i in range(len(keys))):
            keys = [f"arg{i}" for i in range(len(keys))]
    out = []
    for k, (_, dt) in zip(keys, exe.param_types):
        out.append(from_npz_array(z[k], hlo_type_name(dt)))
    return out


def random_inputs(exe: XlaExecutable, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in exe.param_types:
        if dt.kind == "b":
            out.append(rng.integers(0, 2, size=shape).astype(dt))
        elif dt.kind in "iu":
            out.append(rng.integers(0, 8, size=shape).astype(dt))
        elif dt.kind == "c":
            out.append((rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dt))
        else:
            out.append(rng.uniform(-1, 1, size=shape).astype(dt))
    return out


# ------------------------------------------------------------------ CLI

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.oracle.xla",
                                 description="Run or time an HLO text module on XLA:CPU.")
    ap.add_argument("cmd", choices=["run", "bench"])
    ap.add_argument("hlo", help="HLO text file")
    ap.add_argument("--inputs", help=".npz of inputs (feed names with --config, else arg0..)")
    ap.add_argument("--config", help="cfg.yaml naming feeds and fetches")
    ap.add_argument("--output", help="run: write results to this .npz")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--min-time-s", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=0,
                    help="bench: XLA:CPU threads (runs a child process with PJRT_NPROC)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)

    if a.cmd == "bench" and a.threads and os.environ.get("PJRT_NPROC") != str(a.threads):
        exe = XlaExecutable(read_text(a.hlo))  # only for the parameter types
        inputs = load_inputs(a.inputs, exe, a.config) if a.inputs else random_inputs(exe)
        res = time_hlo(a.hlo, inputs, iters=a.iters, threads=a.threads,
                       min_time_s=a.min_time_s)
    else:
        exe = XlaExecutable(read_text(a.hlo))
        inputs = load_inputs(a.inputs, exe, a.config) if a.inputs else random_inputs(exe)
        if a.cmd == "run":
            outs = exe.run(inputs)
            names = [f"out{i}" for i in range(len(outs))]
            if a.config:
                import yaml
                with open(a.config) as f:
                    cfg = yaml.safe_load(f)
                by_id = {int(fe["id"]): fe["name"] for fe in cfg.get("fetches", [])}
                names = [by_id.get(i, n) for i, n in enumerate(names)]
            if a.output:
                np.savez(a.output, **{n: to_npz_array(o) for n, o in zip(names, outs)})
            else:
                for n, o in zip(names, outs):
                    print(f"{n}: {hlo_type_name(o.dtype)}{list(o.shape)}\n{o}")
            return 0
        res = exe.time(inputs, iters=a.iters, min_time_s=a.min_time_s)
    if a.json:
        print(json.dumps(res))
    else:
        print(f"median {res['median_us']:.1f} us, min {res['min_us']:.1f} us "
              f"over {res['iters']} iters (threads={res['threads'] or 'default'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
