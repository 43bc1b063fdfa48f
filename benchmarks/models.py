"""Whole models on one thread: aotc (weights fed, weights bound) against XLA:CPU on the same HLO.

The models are those of benchmarks/export_models.py (Keras applications and a BERT-style
encoder at random, variance-scaled weights), exported into build/models/ on first use. For
each model, in one run:
  * XLA:CPU compiles the fed module (every weight a parameter) in a child process with
    PJRT_NPROC=1 and Eigen's thread pool off, times it, runs it once for the reference
    output and reports its `temp_size_in_bytes` (jax's `.memory_analysis()`);
  * aotc compiles the fed and the bound module (`--target native`), times each with the
    runner (`aotc bench`'s loop: P_run in C, one thread) on the same inputs, and compares
    its outputs with XLA's: max |aotc - XLA| / max |XLA|.
GFLOP/s uses XLA's flop count of the model; % peak is against this core's f32 FMA peak,
measured by benchmarks/peak_fma.c at the widest vector width it supports. Arena is aotc's
scratch memory beside XLA's temp buffer; object is the size of aotc's `.o` beside the
weights' bytes. Nothing asserts a time: the machine may be shared, so the load average is
printed with the table and only ratios from the same run mean anything.

    python benchmarks/models.py [--only resnet50] [--iters 10] [--recompile] [--threads 2]

--threads N adds two columns: aotc fed on N threads (the pool of `P_set_num_threads`), and its
speedup over the one-thread fed column of the same run.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.bench import fmt_ratio, fmt_time  # noqa: E402
from benchmarks.export_models import CACHE, MODELS  # noqa: E402

MODES = ("fed", "bound")


def model_dir(name: str) -> str:
    return os.path.join(CACHE, name)


def ensure_exported(name: str) -> None:
    if not os.path.exists(os.path.join(model_dir(name), "meta.json")):
        env = dict(os.environ, KERAS_BACKEND="jax")
        subprocess.run([sys.executable, os.path.join(HERE, "export_models.py"), "--only", name], check=True, env=env)


def feeds(name: str, mode: str) -> dict[str, np.ndarray]:
    """The inputs of the `mode` module by feed name (bound: x only)."""
    import yaml
    with open(os.path.join(model_dir(name), mode, "cfg.yaml")) as f:
        cfg = yaml.safe_load(f)
    z = np.load(os.path.join(model_dir(name), "inputs.npz"))
    return {fd["name"]: z[fd["name"]] for fd in sorted(cfg["feeds"], key=lambda fd: int(fd["id"]))}


# ------------------------------------------------------------------ FMA peak

def fma_peak() -> dict:
    """{"zmm_gflops", "ymm_gflops", "peak"}: this core's f32 FMA peak (benchmarks/peak_fma.c)."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    with tempfile.TemporaryDirectory(prefix="aotc_peak_") as tmp:
        exe = os.path.join(tmp, "peak_fma")
        subprocess.run([cc, "-O2", "-march=native", os.path.join(HERE, "peak_fma.c"), "-o", exe], check=True)
        res = json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)
    res["peak"] = max(res["zmm_gflops"], res["ymm_gflops"])
    return res


# ------------------------------------------------------------------ XLA

def xla_child(name: str, iters: int, out_npz: str) -> dict:
    """Runs in the child process: compile, time, run once, report memory."""
    from tests.oracle.xla import XlaExecutable

    with open(os.path.join(model_dir(name), "fed", "model.hlo")) as f:
        exe = XlaExecutable(f.read())
    ins = list(feeds(name, "fed").values())
    (y,) = exe.run(ins)
    np.save(out_npz, y)
    res = exe.time(ins, iters=iters, warmup=2, min_time_s=1.0)
    stats = exe.exe.get_compiled_memory_stats()
    res["temp_bytes"] = int(stats.temp_size_in_bytes)
    return res


def time_xla(name: str, iters: int, tmp: str) -> tuple[dict, np.ndarray]:
    env = dict(os.environ, PJRT_NPROC="1")
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()
    out = os.path.join(tmp, f"{name}_xla.npy")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--xla-child", name, "--iters", str(iters),
                        "--out", out], capture_output=True, text=True, env=env, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[-1500:])
    return json.loads(p.stdout.strip().splitlines()[-1]), np.load(out)


# ------------------------------------------------------------------ aotc

def _source_hash() -> str:
    """A hash of aotc's own sources: a compiled model is reused only by the same compiler."""
    h = hashlib.sha256()
    pkg = os.path.join(ROOT, "aotc")
    for d, dirs, files in sorted(os.walk(pkg)):
        dirs.sort()
        for fn in sorted(files):
            if fn.endswith((".py", ".c", ".h")):
                with open(os.path.join(d, fn), "rb") as f:
                    h.update(fn.encode() + hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def compile_aotc(name: str, mode: str, recompile: bool, conv_algorithm: str = "direct") -> dict:
    """Compile the `mode` module for this machine into build/models/<name>/<mode>/lib.* (lib_ALG.*
    for another --conv-algorithm); {"c", "prefix", "arena_bytes", "object_bytes", "compile_s"},
    reused while nothing changed."""
    import aotc
    from aotc.options import CompileOptions

    d = os.path.join(model_dir(name), mode)
    lib = "lib" if conv_algorithm == "direct" else f"lib_{conv_algorithm}"
    info_path = os.path.join(d, "compiled.json" if conv_algorithm == "direct" else f"compiled_{conv_algorithm}.json")
    key = hashlib.sha256()
    for fn in ("model.hlo", "cfg.yaml", "weights.npz"):
        if os.path.exists(os.path.join(d, fn)):
            with open(os.path.join(d, fn), "rb") as f:
                key.update(hashlib.sha256(f.read()).digest())
    key.update(_source_hash().encode() + conv_algorithm.encode())
    if not recompile and os.path.exists(info_path):
        with open(info_path) as f:
            info = json.load(f)
        if info.get("key") == key.hexdigest() and os.path.exists(info["c"]):
            return info
    t0 = time.perf_counter()
    res = aotc.compile(os.path.join(d, "model.hlo"), config=os.path.join(d, "cfg.yaml"), out=os.path.join(d, lib),
                       options=CompileOptions(target="native", conv_algorithm=conv_algorithm))
    info = {"key": key.hexdigest(), "c": res.c_path, "prefix": res.name,
            "arena_bytes": int(res.program.arena_bytes), "object_bytes": os.path.getsize(res.obj_path),
            "compile_s": time.perf_counter() - t0}
    with open(info_path, "w") as f:
        json.dump(info, f, indent=1)
    return info


def runner_of(info: dict):
    """The runner program of a compiled model (built once, beside it)."""
    from aotc.options import CompileOptions
    from aotc.toolchain.runner import build_runner
    from aotc.toolchain.targets import resolve_target

    return build_runner(info["c"], info["prefix"], resolve_target("native"), CompileOptions(target="native"),
                        os.path.dirname(info["c"]))


def time_aotc(name: str, mode: str, info: dict, iters: int, threads: int = 1) -> tuple[dict, np.ndarray]:
    from aotc.toolchain.runner import bench_runner, run_runner
    from aotc.toolchain.targets import resolve_target

    target = resolve_target("native")
    runner = runner_of(info)
    ins = feeds(name, mode)
    (y,) = run_runner(runner, target, ins, threads=threads)
    res = bench_runner(runner, target, iters=iters, threads=threads, warmup=2, inputs=ins)
    return res, y


# ------------------------------------------------------------------ table

def rel_err(y: np.ndarray | None, ref: np.ndarray | None) -> str:
    if y is None or ref is None:
        return "n/a"
    scale = float(np.max(np.abs(ref))) or 1.0
    return f"{float(np.max(np.abs(y.astype(np.float64) - ref))) / scale:.1e}"


def gflops(flops: float, r: dict | None, peak: float) -> str:
    if r is None or not flops:
        return "n/a"
    g = flops / r["median_us"] / 1e3
    return f"{g:.1f} ({100 * g / peak:.0f}%)"


def mb(n: float | None) -> str:
    return "n/a" if n is None else f"{n / 1e6:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="whole models: aotc (fed, bound) vs XLA:CPU, one thread")
    ap.add_argument("--only", action="append", choices=sorted(MODELS))
    ap.add_argument("--iters", type=int, default=10, help="timed calls per column (at least 1 s is timed)")
    ap.add_argument("--recompile", action="store_true", help="compile with aotc even if nothing changed")
    ap.add_argument("--json", action="store_true", help="also print all results as JSON")
    ap.add_argument("--conv-algorithm", default="direct", choices=("direct", "winograd2", "winograd4"),
                    help="aotc's --conv-algorithm for both modes (docs/winograd.md)")
    ap.add_argument("--threads", type=int, default=1,
                    help="N > 1 adds a column: aotc fed on N threads, and its speedup over one thread")
    ap.add_argument("--xla-child", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.xla_child:
        print(json.dumps(xla_child(a.xla_child, a.iters, a.out)))
        return 0
    names = a.only or list(MODELS)
    for name in names:  # everything slow and untimed first: export, then aotc's compilations
        ensure_exported(name)
    compiled, notes = {}, []
    for name in names:
        for mode in MODES:
            try:
                compiled[name, mode] = compile_aotc(name, mode, a.recompile, a.conv_algorithm)
                runner_of(compiled[name, mode])
            except Exception as e:  # a failed column is reported, not fatal
                notes.append(f"{name}/{mode}: aotc compile failed: {str(e).strip()[:300]}")
    peak = fma_peak()
    rows, results = [], {}
    with tempfile.TemporaryDirectory(prefix="aotc_models_") as tmp:
        for name in names:
            with open(os.path.join(model_dir(name), "meta.json")) as f:
                meta = json.load(f)
            res: dict = {"meta": {k: v for k, v in meta.items() if k != "feeds"}}
            try:
                res["xla"], ref = time_xla(name, a.iters, tmp)
            except Exception as e:
                res["xla"], ref = None, None
                notes.append(f"{name}/xla: n/a: {str(e).strip()[-300:]}")
            outs = {}
            for mode in MODES:
                res[mode], outs[mode] = None, None
                if (name, mode) not in compiled:
                    continue
                try:
                    res[mode], outs[mode] = time_aotc(name, mode, compiled[name, mode], a.iters)
                except Exception as e:
                    notes.append(f"{name}/{mode}: n/a: {str(e).strip()[-300:]}")
                res[mode + "_err"] = rel_err(outs[mode], ref)
                res[mode + "_compiled"] = compiled[name, mode]
            if a.threads > 1 and (name, "fed") in compiled:
                try:
                    res["fed_nt"], y_nt = time_aotc(name, "fed", compiled[name, "fed"], a.iters, a.threads)
                    res["fed_nt_err"] = rel_err(y_nt, ref)
                except Exception as e:
                    res["fed_nt"] = None
                    notes.append(f"{name}/fed {a.threads}T: n/a: {str(e).strip()[-300:]}")
            results[name] = res
            ms = {k: None if res[k] is None else {q: res[k][q] / 1e3 for q in ("median_us", "min_us")}
                  for k in ("xla", *MODES)}
            fed_c, bound_c = compiled.get((name, "fed"), {}), compiled.get((name, "bound"), {})
            rows.append([name, f"{meta['flops'] / 1e9:.2f}", fmt_time(ms["xla"]), fmt_time(ms["fed"]),
                         fmt_ratio(res["fed"], res["xla"]), fmt_time(ms["bound"]), fmt_ratio(res["bound"], res["xla"]),
                         gflops(meta["flops"], res["xla"], peak["peak"]), gflops(meta["flops"], res["fed"], peak["peak"]),
                         gflops(meta["flops"], res["bound"], peak["peak"]),
                         f"{mb(fed_c.get('arena_bytes'))} / {mb(bound_c.get('arena_bytes'))} / "
                         f"{mb(res['xla'] and res['xla']['temp_bytes'])}",
                         f"{mb(fed_c.get('object_bytes'))} / {mb(bound_c.get('object_bytes'))} / "
                         f"{mb(meta['weight_bytes'])}",
                         f"{res.get('fed_err', 'n/a')} / {res.get('bound_err', 'n/a')}"])
            if a.threads > 1:
                nt = res.get("fed_nt")
                rows[-1] += [fmt_time(nt and {q: nt[q] / 1e3 for q in ("median_us", "min_us")}),
                             fmt_ratio(res["fed"], nt) if nt and res["fed"] else "n/a"]
    head = ["model", "GFLOP", "XLA ms", "aotc fed ms", "fed/XLA", "aotc bound ms", "bound/XLA",
            "XLA GFLOP/s (%peak)", "fed GFLOP/s", "bound GFLOP/s", "arena MB fed/bound/XLA temp",
            "object MB fed/bound/weights", "max rel err fed/bound"]
    if a.threads > 1:
        head += [f"fed {a.threads}T ms", f"{a.threads}T speedup"]
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    load = os.getloadavg()
    print(f"one thread; median (min) ms per call; ratios aotc/XLA as median (min), < 1: aotc faster; "
          f"FMA peak {peak['peak']:.1f} GFLOP/s (zmm {peak['zmm_gflops']:.1f}, ymm {peak['ymm_gflops']:.1f}); "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    for r in [head, ["-" * w for w in widths]] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    for n in notes:
        print(n)
    if a.json:
        print(json.dumps({"peak": peak, "load": load, "results": results}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
