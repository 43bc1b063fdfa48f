"""Non-temporal stores (kernel/stream.py) give XLA:CPU's results and the bits of plain stores:
maps, a softmax's division pass and an interleaved exp/tanh chain, with rows that are not a
multiple of the vector (most stores unaligned, so the plain-store fallback runs beside the
streamed ones), on 1 and 2 threads, into a result buffer that is not aligned to any vector,
and under ASan/UBSan. The threshold is lowered (`stream_min_bytes`) so that fixture-sized
outputs stream; the default's sizes are checked against live JAX in the slow step.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import CFLAGS, assert_matches, load_case, run_hlo_text

_SMALL = 4096  # stream every output of at least 4 KiB


def _map(name: str, rows: int, cols: int) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  a = f32[] constant(1.7)
  ab = f32[{rows},{cols}] broadcast(a), dimensions={{}}
  m = f32[{rows},{cols}] multiply(x, ab)
  b = f32[] constant(0.3)
  bb = f32[{rows},{cols}] broadcast(b), dimensions={{}}
  ROOT y = f32[{rows},{cols}] add(m, bb)
}}
"""


def _softmax(name: str, rows: int, cols: int) -> str:
    return f"""HloModule {name}
max_f {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}}
add_f {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[{rows}] reduce(x, ninf), dimensions={{1}}, to_apply=max_f
  mb = f32[{rows},{cols}] broadcast(mx), dimensions={{0}}
  d = f32[{rows},{cols}] subtract(x, mb)
  e = f32[{rows},{cols}] exponential(d)
  zero = f32[] constant(0)
  s = f32[{rows}] reduce(e, zero), dimensions={{1}}, to_apply=add_f
  sb = f32[{rows},{cols}] broadcast(s), dimensions={{0}}
  ROOT y = f32[{rows},{cols}] divide(e, sb)
}}
"""


def _chain(name: str, n: int) -> str:
    """exp and tanh: an interleaved vector loop (four vectors per trip) writing two results,
    one also read by the other's kernel."""
    return f"""HloModule {name}
ENTRY main {{
  x = f32[{n}] parameter(0)
  c = f32[] constant(0.5)
  cb = f32[{n}] broadcast(c), dimensions={{}}
  s = f32[{n}] subtract(x, cb)
  e = f32[{n}] exponential(s)
  t = f32[{n}] tanh(e)
  m = f32[{n}] multiply(t, x)
  ROOT r = (f32[{n}], f32[{n}]) tuple(m, e)
}}
"""


def _inputs(name: str, shape) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(map(ord, name)))
    return [(rng.standard_normal(shape) * 3).astype(np.float32)]


CASES = {
    "stream_map_odd_rows": (_map("stream_map_odd_rows", 129, 1003), _inputs("stream_map_odd_rows", (129, 1003)), 0.0),
    "stream_map_aligned": (_map("stream_map_aligned", 32, 4096), _inputs("stream_map_aligned", (32, 4096)), 0.0),
    "stream_softmax_odd": (_softmax("stream_softmax_odd", 64, 1003), _inputs("stream_softmax_odd", (64, 1003)), 1e-6),
    "stream_chain": (_chain("stream_chain", 60001), _inputs("stream_chain", (60001,)), 1e-6),
}


def _generate(text: str, name: str, workdir, stream_min_bytes: int):
    from aotc import driver
    from aotc.options import CompileOptions

    opts = CompileOptions(stream_min_bytes=stream_min_bytes)
    gen = driver.generate(driver.frontend(f"{name}.hlo", None, opts, text=text), str(workdir / f"lib{name}"), opts)
    return gen


def _kernels(c_text: str) -> str:
    return c_text[c_text.index("/* ---------------------------------------------------------------- kernels"):]


# make test keeps one map and the softmax; the rest run in the heavy step
_FAST = ("stream_map_odd_rows", "stream_softmax_odd")


@pytest.mark.parametrize("name", [n if n in _FAST else pytest.param(n, marks=pytest.mark.slow) for n in sorted(CASES)])
def test_streamed_stores_match_xla_and_plain_bits(name, workdir):
    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    streamed = _generate(text, f"{name}_nt", workdir, _SMALL)
    plain = _generate(text, f"{name}_plain", workdir, 0)
    assert "aotc_vf_stream(" in _kernels(streamed.c_text) and "aotc_stream_fence();" in streamed.c_text
    assert "_stream(" not in _kernels(plain.c_text)
    native = ("gcc", *CFLAGS, "-march=native")
    want = run_hlo_text(text, inputs, workdir, f"{name}_plain", build_cmd=native, stream_min_bytes=0)
    for misalign in (0, 4, 12):
        got = run_hlo_text(text, inputs, workdir, f"{name}_nt", build_cmd=native, stream_min_bytes=_SMALL,
                           misalign=misalign)
        for k, (g, w, e) in enumerate(zip(got, want, expected)):
            assert g.tobytes() == w.tobytes(), f"{name} output {k}: streamed bits differ (result at +{misalign})"
            assert_matches(g, e, rtol, f"{name} output {k}")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["stream_map_odd_rows", "stream_softmax_odd"])
def test_streamed_stores_on_threads(name, workdir):
    """Each thread's ranges stream and fence their own stores: 2 and 3 threads give 1's bits."""
    import aotc
    from aotc.options import CompileOptions

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    model = workdir / f"{name}.threads.hlo"
    model.write_text(text)
    opts = CompileOptions(stream_min_bytes=_SMALL)
    runs = {t: list(aotc.run(str(model), inputs={"x": inputs[0]}, threads=t, options=opts).values())
            for t in (1, 2, 3)}
    for k, (g, e) in enumerate(zip(runs[1], expected)):
        assert_matches(g, e, rtol, f"{name} output {k}")
    for t in (2, 3):
        for k, (g, f) in enumerate(zip(runs[t], runs[1])):
            assert g.tobytes() == f.tobytes(), f"{name} output {k}: {t} threads"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_streamed_stores_under_sanitizers(name, workdir):
    import aotc
    from aotc.options import CompileOptions

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    model = workdir / f"{name}.asan.hlo"
    model.write_text(text)
    outs = aotc.run(str(model), inputs={"x": inputs[0]}, threads=2,
                    options=CompileOptions(cc="gcc", opt_level="-O1", sanitize="address", stream_min_bytes=_SMALL))
    for k, (g, e) in enumerate(zip(outs.values(), expected)):
        assert_matches(np.asarray(g), e, rtol, f"{name} output {k} (sanitizers)")


@pytest.mark.slow
def test_default_threshold_streams_a_64_mib_map_against_live_xla(workdir):
    """At the default threshold: a 64 MiB result streams, XLA's bits (live JAX)."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    import aotc
    from aotc.options import CompileOptions

    assert jax.devices()[0].platform == "cpu"
    x = _inputs("stream_big", (4096, 4096))[0]
    text = _map("stream_big", 4096, 4096)
    gen = _generate(text, "stream_big", workdir, CompileOptions().stream_min_bytes)
    assert "aotc_vf_stream(" in _kernels(gen.c_text)
    model = workdir / "stream_big.hlo"
    model.write_text(text)
    (got,) = aotc.run(str(model), inputs={"x": x}, threads=2).values()
    want = np.asarray(jax.jit(lambda v: v * jnp.float32(1.7) + jnp.float32(0.3))(x))
    assert got.tobytes() == want.tobytes()
