"""aotc against XLA:CPU and numpy, single-threaded, side by side in one run.

Workloads (HLO exported with JAX and committed beside this script):
    matmul256     f32[256,256] x f32[256,256]
    matmul512     f32[512,512] x f32[512,512]
    matmul1024    f32[1024,1024] x f32[1024,1024]
    mlp64         batch 64 through 3 dense layers 1024 -> 1024 (bias, ReLU: GEMM epilogues)
    transformer   an encoder block, seq 128, d 256, 4 heads, MLP 1024 (GELU), layernorms
    sum16m        the sum of 16M f32
    chain1m       the 10-op elementwise chain of tests/fixtures/cases.py on 1M f32
    scale16m      x * 1.7 + 0.3 on 16M f32: a map bound by memory (64 MB in, 64 MB out)
    softmax       softmax over the rows of f32[256,4096]
    layernorm     layernorm over the rows of f32[512,1024], scale and shift fed
    conv3x3       conv 3x3 SAME, 1x56x56x64 -> 64 (NHWC, HWIO)
    depthwise     depthwise conv 3x3 SAME, 1x112x112x32
    bnconv        conv3x3 + BatchNorm (inference) + ReLU, weights fed
    bnconv_bound  the same model with the weights frozen in (`bound:`); XLA still gets them fed
    fft1024       jnp.fft.fft of c64[256,1024]: 256 transforms of 1024 points
    fft1000       jnp.fft.fft of c64[256,1000]: a length with factors 2 and 5 only, not a power of two
    fft2d256      jnp.fft.fft2 of c64[256,256]
    matmul1024_bf16  bf16[1024,1024] x bf16[1024,1024] -> bf16 (f32 accumulation)
    matmul1024_f16   f16[1024,1024] x f16[1024,1024] -> f16
    matmul1024_s8    s8[1024,1024] x s8[1024,1024] -> s32 (preferred_element_type int32)

Columns: XLA:CPU (tests/oracle/xla.py timing in a child process with
PJRT_NPROC=1), numpy (a child process with OPENBLAS_NUM_THREADS=1; the chain as
plain numpy ops with temporaries), aotc (`aotc bench MODEL --config CFG
--threads 1 --json --target T`, one column per target: by default `native`, this
machine's ISA as XLA's JIT uses it, and `host`, the portable default of `aotc
compile`). Prints median (min) microseconds and the ratios aotc/XLA and
aotc/numpy (below 1 means aotc is faster). Only ratios measured in
the same run mean anything on a shared machine; nothing here asserts a time.

    python benchmarks/bench.py [--only matmul512] [--iters 50] [--targets native,host] [--export]

--threads N adds a column: aotc native on N threads, and its speedup over one thread.
--export re-exports the .hlo/.yaml files with JAX. GFLOP/s is printed for aotc native where the
workload's flops are known.
"""
from __future__ import annotations

import argparse
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

_D, _F = 256, 1024  # transformer width and MLP width
_TRANSFORMER_FEEDS = [("x", (128, _D)), ("wq", (_D, _D)), ("wk", (_D, _D)), ("wv", (_D, _D)), ("wo", (_D, _D)),
                      ("g1", (_D,)), ("b1", (_D,)), ("w1", (_D, _F)), ("c1", (_F,)), ("w2", (_F, _D)),
                      ("c2", (_D,)), ("g2", (_D,)), ("b2", (_D,))]

WORKLOADS = {
    "matmul256": {"feeds": [("a", (256, 256)), ("b", (256, 256))], "fetch": "c",
                  "what": "f32 matmul 256x256x256", "iters": 200, "flops": 2 * 256 ** 3, "lo": -1.0},
    "matmul512": {"feeds": [("a", (512, 512)), ("b", (512, 512))], "fetch": "c",
                  "what": "f32 matmul 512x512x512", "iters": 50, "flops": 2 * 512 ** 3, "lo": -1.0},
    "matmul1024": {"feeds": [("a", (1024, 1024)), ("b", (1024, 1024))], "fetch": "c",
                   "what": "f32 matmul 1024x1024x1024", "iters": 10, "flops": 2 * 1024 ** 3, "lo": -1.0},
    "mlp64": {"feeds": [("x", (64, 1024))] + [(f"{k}{j}", s) for j in range(3)
                                                for k, s in (("w", (1024, 1024)), ("b", (1024,)))],
              "fetch": "y", "what": "MLP batch 64, 3 x dense 1024 + ReLU", "iters": 50,
              "flops": 3 * 2 * 64 * 1024 * 1024, "lo": -0.05},
    "transformer": {"feeds": _TRANSFORMER_FEEDS, "fetch": "y", "what": "encoder block s128 d256 h4 mlp1024",
                    "iters": 50, "flops": 4 * 2 * 128 * _D * _D + 2 * 2 * 128 * 128 * _D + 2 * 2 * 128 * _D * _F,
                    "lo": -0.1},
    "sum16m": {"feeds": [("x", (1 << 24,))], "fetch": "y", "what": "sum of 16M f32", "iters": 20, "lo": -1.0},
    "chain1m": {"feeds": [("x", (1 << 20,))], "fetch": "y",
                "what": "10-op elementwise chain, 1M f32", "iters": 100},
    "scale16m": {"feeds": [("x", (1 << 24,))], "fetch": "y", "what": "x * 1.7 + 0.3, 16M f32", "iters": 20},
    "softmax": {"feeds": [("x", (256, 4096))], "fetch": "y",
                "what": "softmax over rows, f32[256,4096]", "iters": 100},
    "layernorm": {"feeds": [("x", (512, 1024)), ("g", (1024,)), ("b", (1024,))], "fetch": "y",
                  "what": "layernorm over rows, f32[512,1024]", "iters": 100},
    "conv3x3": {"feeds": [("x", (1, 56, 56, 64)), ("w", (3, 3, 64, 64))], "fetch": "y",
                "what": "conv 3x3 SAME 1x56x56x64 -> 64", "iters": 50},
    "depthwise": {"feeds": [("x", (1, 112, 112, 32)), ("w", (3, 3, 1, 32))], "fetch": "y",
                  "what": "depthwise 3x3 SAME 1x112x112x32", "iters": 50},
    "bnconv": {"feeds": [("x", (1, 56, 56, 64)), ("w", (3, 3, 64, 64)), ("gamma", (64,)), ("beta", (64,)),
                         ("mean", (64,)), ("var", (64,))], "fetch": "y",
               "what": "conv 3x3 + BatchNorm + ReLU, weights fed", "iters": 50},
    # the same model with every weight frozen into the binary (`bound:`); XLA gets them fed
    "bnconv_bound": {"model": "bnconv", "bound": ("w", "gamma", "beta", "mean", "var"),
                     "what": "conv 3x3 + BatchNorm + ReLU, weights bound", "iters": 50},
    # complex feeds ("type"): 5 N log2 N flops per transform, the customary count
    "fft1024": {"feeds": [("x", (256, 1024))], "fetch": "y", "type": "c64", "what": "fft c64[256,1024]",
                "iters": 50, "flops": 256 * 5 * 1024 * 10},
    "fft1000": {"feeds": [("x", (256, 1000))], "fetch": "y", "type": "c64", "what": "fft c64[256,1000]",
                "iters": 50},
    "fft2d256": {"feeds": [("x", (256, 256))], "fetch": "y", "type": "c64", "what": "fft2 c64[256,256]",
                 "iters": 50, "flops": 5 * 256 * 256 * 16},
    # reduced-precision dots ("type" of both feeds)
    "matmul1024_bf16": {"feeds": [("a", (1024, 1024)), ("b", (1024, 1024))], "fetch": "c", "type": "bf16",
                        "what": "bf16 matmul 1024x1024x1024", "iters": 10, "flops": 2 * 1024 ** 3, "lo": -1.0},
    "matmul1024_f16": {"feeds": [("a", (1024, 1024)), ("b", (1024, 1024))], "fetch": "c", "type": "f16",
                       "what": "f16 matmul 1024x1024x1024", "iters": 10, "flops": 2 * 1024 ** 3, "lo": -1.0},
    "matmul1024_s8": {"feeds": [("a", (1024, 1024)), ("b", (1024, 1024))], "fetch": "c", "type": "s8",
                      "what": "s8 x s8 -> s32 matmul 1024x1024x1024", "iters": 10, "flops": 2 * 1024 ** 3},
}


def spec(name: str) -> dict:
    """A workload with its model's feeds and fetch (a bound variant shares its model's)."""
    w = WORKLOADS[name]
    return {**WORKLOADS[w["model"]], **w} if "model" in w else w


def paths(name: str) -> tuple[str, str]:
    model = WORKLOADS[name].get("model", name)
    return os.path.join(HERE, f"{model}.hlo"), os.path.join(HERE, f"{model}.yaml")


def make_inputs(name: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2024)
    lo = spec(name).get("lo", -3.0)
    if spec(name).get("type") == "c64":
        return {n: (rng.uniform(lo, -lo, size=s) + 1j * rng.uniform(lo, -lo, size=s)).astype(np.complex64)
                for n, s in spec(name)["feeds"]}
    if spec(name).get("type") == "s8":
        return {n: rng.integers(-128, 128, size=s, dtype=np.int8) for n, s in spec(name)["feeds"]}
    dtype = _np_dtype(spec(name).get("type", "f32"))
    out = {n: rng.uniform(lo, -lo, size=s).astype(np.float32).astype(dtype) for n, s in spec(name)["feeds"]}
    if "var" in out:
        out["var"] = np.abs(out["var"]) + np.float32(0.1)
    return out


def _np_dtype(name: str):
    """The numpy type of a feed type name (bf16 through ml_dtypes, which JAX installs)."""
    if name == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return {"f32": np.float32, "f16": np.float16, "s8": np.int8, "c64": np.complex64}[name]


# ------------------------------------------------------------------ export

def _models():
    """The JAX function of each model, for --export."""
    import jax
    import jax.numpy as jnp
    from tests.fixtures.cases import chain10

    def conv(x, w, groups=1):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                            feature_group_count=groups)

    def layernorm(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.mean(jnp.square(x - m), axis=-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b

    def bnconv(x, w, gamma, beta, mean, var):
        y = conv(x, w)
        return jax.nn.relu((y - mean) * jax.lax.rsqrt(var + 1e-3) * gamma + beta)

    def mlp(x, *wb):
        for w, b in zip(wb[0::2], wb[1::2]):
            x = jax.nn.relu(x @ w + b)
        return x

    def transformer(x, wq, wk, wv, wo, g1, b1, w1, c1, w2, c2, g2, b2, heads=4):
        s, d = x.shape
        def split(t):
            return t.reshape(s, heads, d // heads).transpose(1, 0, 2)
        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        a = jax.nn.softmax(q @ k.transpose(0, 2, 1) / jnp.sqrt(jnp.float32(d // heads)), axis=-1)
        h = layernorm(x + (a @ v).transpose(1, 0, 2).reshape(s, d) @ wo, g1, b1)
        return layernorm(h + jax.nn.gelu(h @ w1 + c1) @ w2 + c2, g2, b2)

    return {"matmul256": lambda a, b: a @ b, "matmul512": lambda a, b: a @ b,
            "matmul1024": lambda a, b: a @ b, "mlp64": mlp, "transformer": transformer,
            "sum16m": lambda x: jnp.sum(x), "chain1m": chain10, "scale16m": lambda x: x * 1.7 + 0.3,
            "softmax": lambda x: jax.nn.softmax(x, axis=-1), "layernorm": layernorm,
            "conv3x3": conv, "depthwise": lambda x, w: conv(x, w, 32), "bnconv": bnconv,
            "fft1024": jnp.fft.fft, "fft1000": jnp.fft.fft, "fft2d256": jnp.fft.fft2,
            "matmul1024_bf16": lambda a, b: a @ b, "matmul1024_f16": lambda a, b: a @ b,
            "matmul1024_s8": lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.int32)}


def export(only=None) -> None:
    """Write <model>.hlo (pre-optimization HLO from JAX) and <model>.yaml."""
    import jax

    for name, fn in _models().items():
        if only and name not in only:
            continue
        w = WORKLOADS[name]
        dtype = _np_dtype(w.get("type", "f32"))
        args = [np.zeros(s, dtype) for _, s in w["feeds"]]
        text = jax.jit(fn).lower(*args).as_text(dialect="hlo")
        hlo, cfg = paths(name)
        with open(hlo, "w") as f:
            f.write(text)
        with open(cfg, "w") as f:
            f.write(config_text(name))
        print(f"wrote {os.path.relpath(hlo, ROOT)} and {os.path.relpath(cfg, ROOT)}")


def config_text(name: str, npz: str | None = None) -> str:
    """The YAML config of a workload; bound feeds are read from `npz`."""
    w = spec(name)
    bound = w.get("bound", ())
    lines = ["feeds:"]
    for i, (n, s) in enumerate(w["feeds"]):
        if n not in bound:
            lines += [f"  - id: {i}", f"    name: {n}", f"    shape: [{', '.join(map(str, s))}]",
                      f"    type: {w.get('type', 'f32')}"]
    lines += ["fetches:", "  - id: 0", f"    name: {w['fetch']}"]
    if bound:
        lines += ["bound:", f"  file: {npz}", "  params:"]
        lines += [f"    - {{id: {i}, key: {n}}}" for i, (n, _) in enumerate(w["feeds"]) if n in bound]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ numpy

def numpy_chain(x: np.ndarray) -> np.ndarray:
    """The chain of tests/fixtures/cases.py:chain10, op for op."""
    a = x * np.float32(1.7)
    b = a + np.float32(0.3)
    c = b * x
    d = c - np.float32(0.5)
    e = np.abs(d)
    g = np.exp(-e)
    h = np.maximum(g, np.float32(0.1))
    i = np.sqrt(h)
    return np.tanh(i * b)


def numpy_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def numpy_layernorm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = x.mean(axis=-1, keepdims=True)
    d = x - m
    v = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(v + np.float32(1e-5)) * g + b


def numpy_mlp(x: np.ndarray, *wb: np.ndarray) -> np.ndarray:
    for w, b in zip(wb[0::2], wb[1::2]):
        x = np.maximum(x @ w + b, np.float32(0))
    return x


NUMPY = {"matmul256": lambda a, b: a @ b, "matmul512": lambda a, b: a @ b, "matmul1024": lambda a, b: a @ b,
         "mlp64": numpy_mlp, "sum16m": np.sum, "chain1m": numpy_chain, "softmax": numpy_softmax,
         "scale16m": lambda x: x * np.float32(1.7) + np.float32(0.3),
         "layernorm": numpy_layernorm, "fft1024": np.fft.fft, "fft1000": np.fft.fft, "fft2d256": np.fft.fft2}


def numpy_child(name: str, iters: int) -> dict:
    """Runs inside the single-threaded child process."""
    ins = make_inputs(name)
    args = [ins[n] for n, _ in spec(name)["feeds"]]

    def fn():
        return NUMPY[name](*args)
    for _ in range(3):
        fn()
    samples = []
    start = time.perf_counter()
    while len(samples) < iters or (time.perf_counter() - start < 0.5 and len(samples) < 100 * iters):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e6)
    return {"median_us": float(np.median(samples)), "min_us": float(min(samples)),
            "iters": len(samples)}


def time_numpy(name: str, iters: int) -> dict:
    if name not in NUMPY:
        raise RuntimeError("no numpy version")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--numpy-child", name,
                        "--iters", str(iters)], capture_output=True, text=True, env=env,
                       timeout=900)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[-800:])
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ XLA and aotc

def time_xla(name: str, iters: int) -> dict:
    try:
        import jax  # noqa: F401
    except Exception as e:
        raise RuntimeError(f"jax not importable: {e}") from None
    from tests.oracle.xla import time_hlo

    hlo, _ = paths(name)
    ins = make_inputs(name)
    with open(hlo) as f:
        text = f.read()
    return time_hlo(text, [ins[n] for n, _ in spec(name)["feeds"]], iters=iters, threads=1)


def aotc_command() -> list[str] | None:
    exe = shutil.which("aotc")
    if exe:
        return [exe]
    try:
        import aotc.cli  # noqa: F401
    except Exception:
        return None
    return [sys.executable, "-m", "aotc.cli"]


def time_aotc(name: str, iters: int, tmp: str, target: str, threads: int = 1, conv_algorithm: str = "direct") -> dict:
    cmd = aotc_command()
    if cmd is None:
        raise RuntimeError("aotc CLI not found")
    hlo, cfg = paths(name)
    npz = os.path.join(tmp, f"{name}_inputs.npz")
    ins = make_inputs(name)
    bound = spec(name).get("bound", ())
    np.savez(npz, **{k: v for k, v in ins.items() if k not in bound})
    if bound:  # the weights frozen into the binary from an npz beside a config of its own
        weights = os.path.join(tmp, f"{name}_weights.npz")
        np.savez(weights, **{k: v for k, v in ins.items() if k in bound})
        cfg = os.path.join(tmp, f"{name}.yaml")
        with open(cfg, "w") as f:
            f.write(config_text(name, weights))
    p = subprocess.run(cmd + ["bench", hlo, "--config", cfg, "--threads", str(threads), "--json", "--target", target,
                              "--iters", str(iters), "--inputs", npz, "--conv-algorithm", conv_algorithm],
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip().splitlines()[-1][:200]
                           if (p.stderr or p.stdout).strip() else f"exit {p.returncode}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    for k in ("median_us", "min_us"):
        if k not in res:
            raise RuntimeError(f"`aotc bench --json` printed no {k}")
    return res


# ------------------------------------------------------------------ table

def fmt_time(r: dict | None) -> str:
    if r is None:
        return "n/a"
    return f"{r['median_us']:.1f} ({r['min_us']:.1f})"


def fmt_ratio(a: dict | None, b: dict | None) -> str:
    """median ratio (min ratio): on a shared machine the minimums are the steadier"""
    if a is None or b is None or not b["median_us"] or not b["min_us"]:
        return "n/a"
    return f"{a['median_us'] / b['median_us']:.2f} ({a['min_us'] / b['min_us']:.2f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="aotc vs XLA:CPU vs numpy, single-threaded")
    ap.add_argument("--only", action="append", choices=sorted(WORKLOADS))
    ap.add_argument("--iters", type=int, default=0, help="timed calls per column")
    ap.add_argument("--export", action="store_true", help="re-export the HLO files with JAX")
    ap.add_argument("--json", action="store_true", help="also print all results as JSON")
    ap.add_argument("--targets", default="native,host",
                    help="aotc targets, one column each (default: native, this machine's ISA as XLA uses "
                         "it, and host, the portable default of `aotc compile`)")
    ap.add_argument("--threads", type=int, default=1,
                    help="N > 1 adds a column: aotc native on N threads, and its speedup over one thread")
    ap.add_argument("--conv-algorithm", default="direct", choices=("direct", "winograd2", "winograd4"),
                    help="aotc's --conv-algorithm (docs/winograd.md)")
    ap.add_argument("--numpy-child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.numpy_child:
        print(json.dumps(numpy_child(a.numpy_child, a.iters or 50)))
        return 0
    if a.export:
        export(a.only)
    names = a.only or list(WORKLOADS)
    targets = [t for t in a.targets.split(",") if t]
    rows, notes, results = [], [], {}
    with tempfile.TemporaryDirectory(prefix="aotc_bench_") as tmp:
        for name in names:
            iters = a.iters or WORKLOADS[name]["iters"]
            res = {}
            cols = [("xla", lambda: time_xla(name, iters)), ("numpy", lambda: time_numpy(name, iters))]
            cols += [(f"aotc {t}", lambda t=t: time_aotc(name, iters, tmp, t, 1, a.conv_algorithm))
                     for t in targets]
            if a.threads > 1:
                cols.append((f"aotc native {a.threads}T", lambda: time_aotc(name, iters, tmp, "native", a.threads,
                                                                                 a.conv_algorithm)))
            for col, fn in cols:
                try:
                    res[col] = fn()
                except Exception as e:  # a missing column is reported, not fatal
                    res[col] = None
                    notes.append(f"{name}/{col}: n/a: {e}")
            results[name] = res
            row = [name, WORKLOADS[name]["what"], fmt_time(res["xla"]), fmt_time(res["numpy"])]
            for t in targets:
                r = res[f"aotc {t}"]
                row += [fmt_time(r), fmt_ratio(r, res["xla"]), fmt_ratio(r, res["numpy"])]
            flops = WORKLOADS[name].get("flops") or spec(name).get("flops")
            r = res.get("aotc native")
            row.append(f"{flops / r['median_us'] / 1e3:.1f}" if flops and r else "")
            if a.threads > 1:
                rt = res[f"aotc native {a.threads}T"]
                row += [fmt_time(rt), fmt_ratio(r, rt)]
            rows.append(row)
    head = ["workload", "what", "XLA:CPU us", "numpy us"]
    for t in targets:
        head += [f"aotc {t} us", f"/XLA", f"/numpy"]
    head.append("native GFLOP/s")
    if a.threads > 1:
        head += [f"native {a.threads}T us", f"{a.threads}T speedup"]
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    print("single thread; median (min) microseconds per call; ratios aotc/other as median (min); "
          "< 1: aotc faster")
    for r in [head, ["-" * w for w in widths]] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    for n in notes:
        print(n)
    if a.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
