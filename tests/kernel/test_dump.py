"""`--dump-after program` prints the kernels' IR readably: loops with their marks, the
threaded range, provenance; a row reduction fused into its consumer shows as one kernel."""
from __future__ import annotations

from aotc import driver
from aotc.emit_c.source import describe_program
from aotc.kernel.vectorize import INTERLEAVE_COPIES
from aotc.options import CompileOptions

SOFTMAX = """HloModule softmax
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
add_f32 {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}
ENTRY main {
  x = f32[64,1024] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mb = f32[64,1024] broadcast(m), dimensions={0}
  d = f32[64,1024] subtract(x, mb)
  e = f32[64,1024] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add_f32
  sb = f32[64,1024] broadcast(s), dimensions={0}
  ROOT y = f32[64,1024] divide(e, sb)
}
"""


def test_softmax_is_one_threaded_vectorized_kernel_computing_exp_once():
    fe = driver.frontend("softmax.hlo", None, CompileOptions(), text=SOFTMAX)
    gen = driver.generate(fe, "libsoftmax", CompileOptions())
    text = describe_program(gen.lowered.program)
    assert text.count("  kernel k_") == 1
    assert "threads over [0, 64)" in text
    assert "/* parallel */" in text and "/* simd, vector, wide */" in text
    # the map loads the fold's values: exp only in the fold, its four interleaved blocks of lanes
    assert text.count("aotc_vf_exp_nonpos(") == INTERLEAVE_COPIES  # x - max(x) <= 0 (ops/bounds.py)
    assert "/* interleave, reduction */" in text
    assert "aotc_exp_f32(" not in text and "aotc_exp_nonpos_f32(" not in text  # 1024 = 64 or 128 vectors: no scalar tail
