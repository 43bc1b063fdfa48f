"""Kernels that prefetch the next row (kernel/prefetch.py) give XLA's results: a softmax
over rows of 1003 f32 and a layernorm over rows of 1024 (each read two or three times per
row), on 1 and 2 threads (a range's last row prefetches itself, never past the buffer).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import pytest

from .conftest import assert_matches, c_text_of, load_case
from .test_stream_stores import CASES as _STREAM_CASES, _inputs


def _layernorm(name: str, rows: int, cols: int) -> str:
    return f"""HloModule {name}
add_f {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  zero = f32[] constant(0)
  s = f32[{rows}] reduce(x, zero), dimensions={{1}}, to_apply=add_f
  n = f32[] constant({1.0 / cols!r})
  nb = f32[{rows}] broadcast(n), dimensions={{}}
  mean = f32[{rows}] multiply(s, nb)
  mb = f32[{rows},{cols}] broadcast(mean), dimensions={{0}}
  d = f32[{rows},{cols}] subtract(x, mb)
  d2 = f32[{rows},{cols}] multiply(d, d)
  v = f32[{rows}] reduce(d2, zero), dimensions={{1}}, to_apply=add_f
  var = f32[{rows}] multiply(v, nb)
  eps = f32[] constant(1e-05)
  eb = f32[{rows}] broadcast(eps), dimensions={{}}
  ve = f32[{rows}] add(var, eb)
  r = f32[{rows}] rsqrt(ve)
  rb = f32[{rows},{cols}] broadcast(r), dimensions={{0}}
  ROOT y = f32[{rows},{cols}] multiply(d, rb)
}}
"""


CASES = {"prefetch_layernorm": (_layernorm("prefetch_layernorm", 96, 1024), _inputs("prefetch_layernorm", (96, 1024)),
                                1e-6)}
_ALL = {**CASES, "stream_softmax_odd": _STREAM_CASES["stream_softmax_odd"]}


@pytest.mark.parametrize("name", [n if n in CASES else pytest.param(n, marks=pytest.mark.slow) for n in sorted(_ALL)])
def test_prefetching_kernels_match_xla_on_threads(name, workdir):
    import aotc

    text, _, rtol = _ALL[name]
    assert "AOTC_PREFETCH_R(&s_x[" in c_text_of(text, name, workdir)
    inputs, expected = load_case(name)
    model = workdir / f"{name}.prefetch.hlo"
    model.write_text(text)
    runs = {t: list(aotc.run(str(model), inputs={"x": inputs[0]}, threads=t).values()) for t in (1, 2)}
    assert_matches(runs[1][0], expected[0], rtol, name)
    assert runs[2][0].tobytes() == runs[1][0].tobytes(), f"{name}: 2 threads"
