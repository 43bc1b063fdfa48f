"""The runner program: `runner_main.c` linked with a model's object, for any
target, executed natively or under the target's emulator. `aotc run --target X`
and `aotc bench` go through here; exchanging data is raw bytes in files, so
nothing of the model is loaded into Python.

`runner info` prints the signature as JSON, `runner run DIR [THREADS]` maps
`DIR/arg<i>.bin` to `DIR/result<i>.bin`, `runner bench ITERS THREADS WARMUP
[DIR]` times P_run in C and prints one JSON object (see runner_main.c); `-W FILE`
first loads a `--weights file` model's weights file.
Cross-target runners are linked statically (zig switches to musl for that) so
qemu needs no sysroot; if static linking fails they are linked dynamically and
qemu is given `-L <sysroot>`.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import AotcError, ToolchainError
from ..options import CompileOptions
from . import cache, cc, commands
from .build import base_cflags, compile_model_object
from .loader import ModelRunError, TensorSpec, coerce_input, spec_from
from .targets import Target, host_triple, resolve_target

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EXIT_MODEL_ERROR = 2
_EXIT_DEADLINE = 3  # the model stopped itself at its deadline
_GRACE = 5.0  # seconds past a time limit before the runner's process group is killed


def runner_source() -> Path:
    """Path of the runner's C source (a template over -DAOTC_RUNNER_PREFIX)."""
    return Path(__file__).with_name("runner_main.c")


def build_runner(model_c_path: str | os.PathLike, prefix: str, target: Target | str | None,
                 options: CompileOptions, workdir: str | os.PathLike,
                 header_path: str | os.PathLike | None = None) -> Path:
    """Compile the model and the runner for `target` and link them into
    `workdir/runner-<prefix>-<hash>`; an existing runner with the same inputs is
    reused only while it has the digest recorded when it was built (else it is built
    again). The model's header (default: beside the .c) is included when present,
    so the runner's calls are checked against it."""
    if not _IDENT.match(prefix or ""):
        raise AotcError(f"model prefix '{prefix}' is not a C identifier")
    if not isinstance(target, Target):
        target = resolve_target(target or options.target, options.target_cpu,
                                options.target_features)
    model_c = Path(model_c_path)
    if not model_c.is_file():
        raise AotcError(f"no such file: {model_c}")
    header = Path(header_path) if header_path is not None else model_c.with_suffix(".h")
    if not (header.is_file() and f"typedef struct {prefix}_instance" in
            header.read_text(encoding="utf-8", errors="replace")):
        if header_path is not None:
            raise AotcError(f"{header} is not the header of model '{prefix}'")
        header = None
    if options.sanitize and not target.runs_on_host:
        raise AotcError(f"--sanitize runs the model natively; {target.triple} programs do not run here")
    tc = cc.find_toolchain(target, options.cc)
    static = not target.runs_on_host
    if static:
        tc = cc.static_variant(tc)
    flags = base_cflags(options)
    key = hashlib.sha256()
    for part in (model_c.read_bytes(), runner_source().read_bytes(),
                 header.read_bytes() if header else b"", repr((tc.argv, tc.flags, tc.link_flags,
                                                               flags, prefix, static, options.profile,
                                                               options.weights == "file")).encode()):
        key.update(hashlib.sha256(part).digest())
    workdir = cache.private_dir(workdir)
    exe = workdir / f"runner-{prefix}-{key.hexdigest()[:16]}{target.exe_suffix}"
    if cache.verified(exe):  # never run a program the cache did not record
        return exe
    with tempfile.TemporaryDirectory(prefix="aotc-runner-", dir=workdir) as tmp:
        model_o = compile_model_object(tc, model_c, Path(tmp) / "model.o", flags)
        runner_flags = [*flags, f"-DAOTC_RUNNER_PREFIX={prefix}"]
        if header is not None:
            runner_flags += [f"-I{header.parent.resolve()}", f'-DAOTC_RUNNER_HEADER="{header.name}"']
        if options.profile:  # the model has the P_profile_* API: bench prints its table
            if header is None:
                raise AotcError("a profiled runner needs the model's header beside its .c")
            runner_flags.append("-DAOTC_RUNNER_PROFILE")
        if options.weights == "file":  # the model has P_load_weights: `runner -W FILE` loads it
            runner_flags.append("-DAOTC_RUNNER_WEIGHTS")
        runner_o = commands.compile_object(tc, runner_source(), Path(tmp) / "runner.o", runner_flags)
        out = Path(tmp) / f"runner{target.exe_suffix}"
        try:
            commands.link_executable(tc, [model_o, runner_o], out, flags, static=static)
        except AotcError as static_error:
            if not (static and target.sysroot):
                raise
            try:  # no static libc for this toolchain: qemu -L <sysroot> finds the shared one
                commands.link_executable(tc, [model_o, runner_o], out, flags, static=False)
            except AotcError:
                raise static_error from None
        cache.write_private(exe, out.read_bytes(), executable=True)
        cache.record(exe)
    return exe


def runner_command(runner_path: str | os.PathLike, target: Target,
                   weights: str | os.PathLike | None = None) -> list[str]:
    """The argv prefix that executes the runner here: itself, or under the emulator; with
    `weights`, the runner first loads that weights file into the model."""
    cmd = _runner_exe(runner_path, target)
    return [*cmd, "-W", str(Path(weights).resolve())] if weights is not None else cmd


def _runner_exe(runner_path: str | os.PathLike, target: Target) -> list[str]:
    path = str(Path(runner_path).resolve())
    if target.runs_on_host:
        return [path]
    if target.emulator:
        if shutil.which(target.emulator[0]) is None:
            package = "wine wine64" if target.os == "windows" else "qemu-user"
            raise ToolchainError(f"running {target.triple} programs here needs {target.emulator[0]}, "
                            f"which is not installed; install it with `apt-get install {package}` "
                            f"(Debian/Ubuntu) or your system's {package.split()[0]} package")
        return [*target.emulator, path]
    raise ToolchainError(f"cannot run {target.triple} programs on this {host_triple()} machine "
                    f"(no emulator for {target.os}); copy the library to a {target.triple} "
                    f"device instead")


def runner_signature(runner_path: str | os.PathLike, target: Target,
                     timeout: float | None = 300) -> tuple[tuple[TensorSpec, ...],
                                                           tuple[TensorSpec, ...]]:
    """(arg specs, result specs) as the runner reports them (`runner info`)."""
    out = _execute([*runner_command(runner_path, target), "info"], "runner info", timeout)
    info = json.loads(out.strip().splitlines()[-1])

    def specs(ports):
        return tuple(spec_from(_PortInfo(p)) for p in ports)
    return specs(info["args"]), specs(info["results"])


def run_runner(runner_path: str | os.PathLike, target: Target,
               inputs: Sequence[Any] | Mapping[str, Any], arg_specs: Sequence[Any] | None = None,
               result_specs: Sequence[Any] | None = None, *, threads: int = 1,
               timeout: float | None = None, weights: str | os.PathLike | None = None) -> list[np.ndarray]:
    """Run the model once through the runner: results in result order.

    `inputs` is a list with one array per arg, or one per non-variable arg (the
    variables then start at zero), or a mapping by arg name. Specs may be
    `TensorSpec`s, the compiler's ports, or None to ask the runner; `weights`: the weights
    file of a `--weights file` model. A run longer
    than `timeout` seconds is stopped by the model's own deadline (P_set_deadline,
    checked between kernels and on every while-loop trip), else killed with its
    process group a little later."""
    if timeout is not None and not timeout > 0:
        raise AotcError(f"the time limit must be a positive number of seconds, not {timeout}")
    args, results = _specs(runner_path, target, arg_specs, result_specs)
    with tempfile.TemporaryDirectory(prefix="aotc-run-") as d:
        _write_inputs(Path(d), args, inputs)
        cmd = [*runner_command(runner_path, target, weights), "run", d, str(int(threads))]
        if timeout is not None:
            cmd.append(str(max(1, int(timeout * 1e9))))
        _execute(cmd, "running the model", None if timeout is None else timeout + _GRACE, limit=timeout)
        outs = []
        for i, spec in enumerate(results):
            data = (Path(d) / f"result{i}.bin").read_bytes()
            if len(data) != spec.nbytes:
                raise AotcError(f"result {i} '{spec.name}': runner wrote {len(data)} bytes, "
                                f"expected {spec.nbytes}")
            arr = np.frombuffer(data, dtype=np.uint8).copy()
            outs.append(arr.view(spec.dtype).reshape(spec.dims))
    return outs


def bench_runner(runner_path: str | os.PathLike, target: Target, iters: int = 100,
                 threads: int = 1, warmup: int = 10,
                 inputs: Sequence[Any] | Mapping[str, Any] | None = None,
                 arg_specs: Sequence[Any] | None = None, result_specs: Sequence[Any] | None = None,
                 timeout: float | None = None, weights: str | os.PathLike | None = None) -> dict:
    """Time P_run in C: {"median_us", "min_us", "mean_us", "max_us", "iters",
    "threads", "warmup", "target", "emulated"}, and "profile" (one row per kernel:
    kernel, hlo, calls, ns, flops, bytes) when the runner was built with
    `options.profile`. Inputs are random in C unless given; `weights` as for `run_runner`."""
    if iters < 1 or threads < 1 or warmup < 0:
        raise AotcError("bench needs iters >= 1, threads >= 1 and warmup >= 0")
    cmd = [*runner_command(runner_path, target, weights), "bench", str(int(iters)), str(int(threads)),
           str(int(warmup))]
    with tempfile.TemporaryDirectory(prefix="aotc-bench-") as d:
        if inputs is not None:
            args, _ = _specs(runner_path, target, arg_specs, result_specs)
            _write_inputs(Path(d), args, inputs)
            cmd.append(d)
        out = _execute(cmd, "benchmarking the model", timeout)
    lines = [ln for ln in out.splitlines() if ln.strip().startswith("{")]
    if not lines:
        raise AotcError(f"the runner printed no timing: {out.strip()[:500]}")
    res = json.loads(lines[-1])
    res["target"] = target.triple
    res["emulated"] = not target.runs_on_host
    return res


class _PortInfo:
    """A port as `runner info` describes it, shaped for `spec_from`."""

    def __init__(self, d: dict):
        self.name, self.type, self.dims = d["name"], d["type"], tuple(d["dims"])
        self.dtype, self.nbytes = d["type"], int(d["bytes"])
        self.is_variable = bool(d.get("variable", False))


def _specs(runner_path, target, arg_specs, result_specs):
    if arg_specs is None or result_specs is None:
        a, r = runner_signature(runner_path, target)
        arg_specs = a if arg_specs is None else arg_specs
        result_specs = r if result_specs is None else result_specs
    return [spec_from(s) for s in arg_specs], [spec_from(s) for s in result_specs]


def _write_inputs(d: Path, args: list[TensorSpec], inputs) -> None:
    if isinstance(inputs, Mapping):
        unknown = sorted(set(inputs) - {s.name for s in args})
        if unknown:
            raise AotcError(f"no argument named {', '.join(unknown)} "
                            f"(arguments: {', '.join(s.name for s in args)})")
        missing = [s.name for s in args if s.name not in inputs and not s.is_variable]
        values = [inputs.get(s.name) for s in args]
    else:
        inputs = list(inputs)
        feeds = [i for i, s in enumerate(args) if not s.is_variable]
        if len(inputs) == len(args):
            values = inputs
        elif len(inputs) == len(feeds):
            values = [None] * len(args)
            for i, v in zip(feeds, inputs):
                values[i] = v
        else:
            raise AotcError(f"{len(inputs)} inputs given; the model takes {len(args)} arguments"
                            + (f" ({len(feeds)} without its variables)" if len(feeds) != len(args)
                               else ""))
        missing = []
    if missing:
        raise AotcError(f"missing input{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    for i, (spec, value) in enumerate(zip(args, values)):
        if value is None:  # a variable not given: zeros
            data = bytes(spec.nbytes)
        else:
            arr = coerce_input(spec, value, f"argument {i} '{spec.name}'")
            data = np.ascontiguousarray(arr).tobytes()
        if len(data) != spec.nbytes:
            raise AotcError(f"argument {i} '{spec.name}': {len(data)} bytes, the model expects "
                            f"{spec.nbytes}")
        (d / f"arg{i}.bin").write_bytes(data)


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while a runner was running."""


def _raise_terminated(signum, frame):
    raise _Terminated(signum)


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the runner and anything it started (its own process group), and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _execute(cmd: list[str], what: str, timeout: float | None, limit: float | None = None) -> str:
    """Run `cmd` in its own process group: on a timeout, an interrupt or SIGTERM the whole
    group is killed, so no runner outlives aotc (on Linux the runner also dies with us)."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True)
    except FileNotFoundError:
        raise AotcError(f"{what}: cannot execute {cmd[0]}") from None
    in_main = threading.current_thread() is threading.main_thread()
    saved = {s: signal.signal(s, _raise_terminated) for s in (signal.SIGTERM, signal.SIGHUP)} if in_main else {}
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise AotcError(f"{what}: timed out after {timeout:g} s\n  $ {shlex.join(cmd)}") from None
    except _Terminated as e:
        _kill_group(proc)
        raise SystemExit(128 + e.args[0]) from None
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    proc = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if proc.returncode == _EXIT_DEADLINE and limit is not None:
        raise AotcError(f"{what}: stopped after its time limit of {limit:g} s")
    err = commands.trim_output(proc.stderr)
    if proc.returncode == _EXIT_MODEL_ERROR:
        msg = err.removeprefix("runner: ")
        raise ModelRunError(msg or f"{what}: the model reported an error", proc.returncode)
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        raise AotcError(f"{what}: the runner was killed by {name}\n  $ {shlex.join(cmd)}"
                        + (f"\n{err}" if err else ""))
    if proc.returncode != 0:
        raise AotcError(f"{what} failed (exit {proc.returncode})\n  $ {shlex.join(cmd)}"
                        + (f"\n{err}" if err else ""))
    return proc.stdout
