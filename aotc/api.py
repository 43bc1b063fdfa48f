"""The Python API: `compile`, `load`, `run`, `bench`.

`compile` writes `<out>.c`, `<out>.h` and the requested binaries, all or
nothing. `load` gives a callable model through cffi (host target). `run` and
`bench` go through the runner program, so they work for any target an
emulator exists for; their builds are cached by content hash.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from . import __version__
from .driver import Frontend, Generated, Progress, frontend, generate
from .emit_c.constants import BLOB_SUFFIX, Blob, write_parts
from .emit_c.weights_file import write_weights
from .errors import AotcError, UsageError
from .options import CompileOptions
from .toolchain import cache
from .toolchain.build import build_outputs, build_outputs_cached
from .toolchain.buildsys import BINARY_KINDS, depfile_text, pkgconfig_text
from .toolchain.loader import load_library
from .toolchain.runner import bench_runner, build_runner, run_runner
from .toolchain.targets import resolve_target


@dataclass(frozen=True)
class CompileResult:
    name: str  # C prefix of the API
    c_path: str
    h_path: str
    obj_path: str | None
    so_path: str | None
    a_path: str | None
    target: str
    generated: Generated
    program_paths: tuple[str, ...] = ()  # PREFIX_test.c, PREFIX_benchmark.c when asked for
    d_path: str | None = None  # Make-style depfile (emit d)
    pc_path: str | None = None  # pkg-config file (emit pc)
    blob_path: str | None = None  # PREFIX.c.bin: the constants the .c includes (incbin encoding)
    weights_path: str | None = None  # PREFIX.weights (--weights file)

    @property
    def program(self):
        return self.generated.lowered.program


def _options(options: CompileOptions | None, kw: dict) -> CompileOptions:
    options = options or CompileOptions()
    return replace(options, **kw) if kw else options


def _write_all(files: dict) -> None:
    """Write every file or none: temporaries first, renamed into place at the end. A value
    is text, the .c's parts (streamed), or a Blob of constant bytes (streamed)."""
    umask = os.umask(0)
    os.umask(umask)
    temps = []
    try:
        for path, text in files.items():
            d = os.path.dirname(os.path.abspath(path))
            os.makedirs(d, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".aotc-", dir=d)
            temps.append((tmp, path))
            if isinstance(text, (Blob, WeightsData)):
                with os.fdopen(fd, "wb") as f:
                    text.write(f)
            else:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    write_parts(f, [text] if isinstance(text, str) else text)
            os.chmod(tmp, 0o666 & ~umask)
        for tmp, path in temps:
            os.replace(tmp, path)
    except OSError as e:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise AotcError(f"cannot write output: {e.strerror or e}", file=getattr(e, "filename", None)) from None


def compile(model: str, config=None, out: str = "libmodel", options: CompileOptions | None = None,
            progress: Progress | None = None, **kw) -> CompileResult:
    """Compile an HLO text file to `<out>.c`/`<out>.h` plus `<out>.o` (and .so/.a, the depfile
    `<out>.d` and the pkg-config file `<out>.pc` per options.emit); `progress(stage, seconds)`
    hears each stage (driver.Progress)."""

    options = _options(options, kw)
    _check_prefix(out)
    target = resolve_target(options.target, options.target_cpu, options.target_features)
    fe = frontend(model, config, options, progress=progress)
    gen = generate(fe, out, options, target.banner(), progress=progress)
    c_path, h_path = out + ".c", out + ".h"
    built = _timed(progress, "C compiler", lambda: _build_then_place(out, fe, gen, target, options))
    return CompileResult(gen.name, c_path, h_path, built.get("o"), built.get("so"), built.get("a"), target.name, gen,
                         tuple(out + suffix for suffix, _ in gen.programs), built.get("d"), built.get("pc"),
                         c_path + BLOB_SUFFIX if gen.blob is not None else None,
                         out + ".weights" if gen.lowered.program.weights else None)


def _timed(progress: Progress | None, stage: str, step):
    """step(), announced to `progress` as it starts and with its time when it is done."""
    if progress is None:
        return step()
    progress(stage, None)
    t0 = time.perf_counter()
    result = step()
    progress(stage, time.perf_counter() - t0)
    return result


def _check_prefix(out: str) -> None:
    """`-o` names a file prefix (`build/libmodel`): not empty, not a directory."""
    if not out or out.endswith(("/", os.sep)) or os.path.basename(out) in ("", ".", "..") or os.path.isdir(out):
        raise UsageError(f"-o must name a file prefix such as build/libmodel, not {out!r}")


def _build_then_place(out: str, fe: Frontend, gen: Generated, target, options: CompileOptions) -> dict[str, str]:
    """Write the .c/.h and build every output in a private directory beside `out`, and move
    them into place only when everything succeeded: a failure leaves the previous outputs
    as they were, and nothing half-written (the depfile included, so a failed compile is
    retried by the next build)."""
    d = os.path.dirname(os.path.abspath(out))
    try:
        os.makedirs(d, exist_ok=True)
        work = tempfile.mkdtemp(prefix=".aotc-", dir=d)
    except OSError as e:
        raise AotcError(f"cannot write output: {e.strerror or e}", file=getattr(e, "filename", None)) from None
    try:
        tmp_out = os.path.join(work, os.path.basename(out))
        programs = {tmp_out + suffix: text for suffix, text in gen.programs}
        written = {**_files(gen, tmp_out), **programs}
        _write_all(written)
        binaries = replace(options, emit=tuple(k for k in options.emit if k in BINARY_KINDS))
        built = build_outputs_cached(tmp_out + ".c", tmp_out, target, binaries)
        built.update(_write_build_files(out, tmp_out, fe, gen, target, options, built))
        placed = {}
        for stale in ([out + ".c" + BLOB_SUFFIX] if gen.blob is None else []) + \
                ([out + ".weights"] if not gen.lowered.program.weights else []):
            if os.path.exists(stale):
                os.unlink(stale)  # an earlier build's blob or weights: the new library does not read them
        for src in [*written, *built.values()]:
            dst = out + src[len(tmp_out):]
            os.replace(src, dst)
            placed[src] = dst
        return {kind: placed[path] for kind, path in built.items()}
    except OSError as e:
        raise AotcError(f"cannot write output: {e.strerror or e}", file=getattr(e, "filename", None)) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write_build_files(out: str, tmp_out: str, fe: Frontend, gen: Generated, target, options: CompileOptions,
                       built: dict[str, str]) -> dict[str, str]:
    """The depfile and pkg-config file `options.emit` asks for, written beside the binaries
    in the private directory; their text names the final paths under `out`."""
    final = {kind: out + path[len(tmp_out):] for kind, path in built.items()}
    texts = {}
    if "pc" in options.emit:
        library = final.get("a") or final.get("o")
        if library is None:
            raise AotcError("emit pc: the pkg-config file names the object or archive to link, so it needs o or a")
        texts["pc"] = pkgconfig_text(gen.name, out, options.source_name or os.path.basename(fe.path), target,
                                     os.path.abspath(library))
    if "d" in options.emit:
        targets = [out + ".c", out + ".h", *[out + f[len(tmp_out):] for f in _files(gen, tmp_out)][2:],
                   *final.values(), *([out + ".pc"] if "pc" in texts else [])]
        texts["d"] = depfile_text(targets, fe.inputs)
    _write_all({f"{tmp_out}.{kind}": text for kind, text in texts.items()})
    return {kind: f"{tmp_out}.{kind}" for kind in texts}


@dataclass(frozen=True)
class WeightsData:
    """The contents of PREFIX.weights, streamed when written."""

    weights: tuple

    def write(self, f) -> None:
        write_weights(f, self.weights)


def _files(gen: Generated, prefix: str) -> dict:
    """What `generate` made, by path: the header, the .c, and the constants' blob if any."""
    files: dict = {prefix + ".h": gen.h_text, prefix + ".c": gen.c_parts}
    if gen.blob is not None:
        files[prefix + ".c" + BLOB_SUFFIX] = gen.blob
    if gen.lowered.program.weights:
        files[prefix + ".weights"] = WeightsData(gen.lowered.program.weights)
    return files


def _source_digest(gen: Generated) -> bytes:
    """A hash of the generated files, computed without joining a big .c into one string."""
    h = hashlib.sha256()
    for part in gen.c_parts:
        if isinstance(part, str):
            h.update(part.encode())
        else:
            h.update(part.encoding.encode() + b"\0" + part.const.cname.encode() + b"\0")
            h.update(np.ascontiguousarray(part.const.data).reshape(-1).view(np.uint8))
    h.update(gen.h_text.encode())
    if gen.blob is not None:
        h.update(gen.blob.sha256.encode())
    for w in gen.lowered.program.weights:  # PREFIX.weights is written beside the .c
        h.update(np.ascontiguousarray(w.data).reshape(-1).view(np.uint8))
    return h.digest()


def _cached_generate(model: str, config, options: CompileOptions, progress: Progress | None = None):
    """Generate C into the cache, in a directory named by the hash of the generated text
    and the build settings; returns (Frontend, Generated, c_path, Target)."""

    target = resolve_target(options.target, options.target_cpu, options.target_features)
    fe = frontend(model, config, options, progress=progress)
    gen = generate(fe, "libmodel", options, target.banner(), progress=progress)
    key = hashlib.sha256()
    key.update(_source_digest(gen))
    for part in (__version__, repr(options), target.banner()):
        key.update(hashlib.sha256(part.encode()).digest())
    entry = cache.private_dir(cache.private_dir(cache.cache_dir()) / key.hexdigest()[:24])
    src = entry / "src"  # the generated files, sealed; runners are built beside it
    if not cache.entry_ok(src):  # missing, truncated or edited: written again
        tmp = Path(tempfile.mkdtemp(prefix=".src-", dir=entry))
        try:
            _write_all(_files(gen, str(tmp / "libmodel")))
            for f in tmp.iterdir():
                os.chmod(f, 0o600)
            cache.seal(tmp)
            shutil.rmtree(src, ignore_errors=True)
            try:
                os.rename(tmp, src)
            except OSError:
                if not cache.entry_ok(src):  # not another run's sealed copy: ours replaces it
                    shutil.rmtree(src, ignore_errors=True)
                    os.rename(tmp, src)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return fe, gen, str(src / "libmodel.c"), target


def load(result: CompileResult | str, options: CompileOptions | None = None):
    """A callable model (numpy in, numpy out) from a CompileResult or a `<out>` prefix path."""

    if isinstance(result, CompileResult):
        prefix, name = result.c_path[:-2], result.name
        so = result.so_path
    else:
        prefix = result[:-2] if result.endswith(".c") else result
        name = _prefix_from_header(prefix + ".h")
        so = None
    if so is None or not os.path.exists(so):
        opts = options or CompileOptions()
        so = build_outputs(prefix + ".c", prefix, resolve_target("host"), replace(opts, emit=("so",)))["so"]
    model = load_library(so, name)
    if os.path.exists(prefix + ".weights"):  # --weights file: the weights written beside the library
        model.load_weights(prefix + ".weights")
    return model


def _prefix_from_header(h_path: str) -> str:
    """The C prefix of a generated header (from its `typedef struct P_instance P_instance;`)."""
    try:
        with open(h_path, encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 4 and parts[:2] == ["typedef", "struct"] and parts[2].endswith("_instance"):
                    return parts[2][: -len("_instance")]
    except OSError as e:
        raise AotcError(f"cannot read header: {e.strerror or e}", file=h_path) from None
    raise AotcError("not a header generated by aotc", file=h_path)


def _feed_arrays(fe: Frontend, inputs: dict) -> list[np.ndarray]:
    out = []
    known = {f.name for f in fe.signature.feeds}
    for k in inputs:
        if k not in known:
            raise AotcError(f"input '{k}' is not a feed (feeds: {', '.join(sorted(known))})")
    for f in fe.signature.feeds:
        if f.name not in inputs:
            raise AotcError(f"missing input for feed '{f.name}' ({f.shape.text(False)})")
        out.append(np.asarray(inputs[f.name]))
    return out


def _runner(model: str, config, target: str | None, options: CompileOptions | None, kw: dict,
            progress: Progress | None = None):
    """The cached runner program of a model: (Frontend, Program, runner path, Target, the
    weights file the runner loads or None). With `options.weights` file the bound weights are
    written to `libmodel.weights` in the cache and the runner loads them before running."""

    options = _options(options, kw)
    if target is not None:
        options = replace(options, target=target)
    fe, gen, c_path, tgt = _cached_generate(model, config, options, progress)
    runner = _timed(progress, "C compiler",
                    lambda: build_runner(c_path, gen.name, tgt, options, os.path.dirname(os.path.dirname(c_path))))
    weights = c_path[:-2] + ".weights" if gen.lowered.program.weights else None
    return fe, gen.lowered.program, runner, tgt, weights


def run(model: str, config=None, inputs: dict | None = None, target: str | None = None,
        options: CompileOptions | None = None, threads: int = 1, progress: Progress | None = None,
        timeout: float | None = None, **kw) -> dict[str, np.ndarray]:
    """Compile (cached) and execute natively or under the target's emulator: {fetch name: array}.
    A run longer than `timeout` seconds is stopped (AotcError); the runner never outlives it.
    `weights="file"` gives the same results as bound weights, read by the runner from a weights
    file in the cache (docs/weights.md); `"fed"` makes the bound parameters inputs."""

    fe, prog, runner, tgt, weights = _runner(model, config, target, options, kw, progress)
    if progress is not None:
        progress("run", None)
    outs = run_runner(runner, tgt, _feed_arrays(fe, inputs or {}), prog.args, prog.results, threads=threads,
                      timeout=timeout, weights=weights)
    return real_size_results(prog, outs)


def real_size_results(prog, outs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """{fetch name: array} as XLA returns them: a result with a dynamic dimension at its real
    size (the dims result that follows every fetch gives it, and is itself left out)."""
    outs = list(outs)
    for i, j in prog.dynamic_results:
        dims = tuple(int(d) for d in outs[j])
        outs[i] = outs[i].reshape(-1)[:int(np.prod(dims))].reshape(dims)
    hidden = {j for _, j in prog.dynamic_results}
    return {r.name: a for k, (r, a) in enumerate(zip(prog.results, outs)) if k not in hidden}


def bench(model: str, config=None, inputs: dict | None = None, target: str | None = None,
          options: CompileOptions | None = None, threads: int = 1, iters: int = 100, warmup: int = 5,
          progress: Progress | None = None, **kw) -> dict:
    """Time the compiled function in C (no Python in the measured region). It times this
    machine, so without a target or options it compiles for it (`native`)."""

    if target is None and options is None:
        target = "native"
    fe, prog, runner, tgt, weights = _runner(model, config, target, options, kw, progress)
    arrays = _feed_arrays(fe, inputs) if inputs is not None else None
    if progress is not None:
        progress("bench", None)
    return bench_runner(runner, tgt, iters=iters, threads=threads, warmup=warmup, inputs=arrays,
                        arg_specs=prog.args, result_specs=prog.results, weights=weights)
