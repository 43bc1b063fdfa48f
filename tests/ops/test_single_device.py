"""Ops exported from multi-device code, with their one-replica, one-partition meaning, against
XLA:CPU run with one device: replica-id, partition-id, the collectives (all-reduce,
all-gather, reduce-scatter, all-to-all, collective-permute) and their -start/-done halves,
domain, the SPMD sharding markers, get-dimension-size and dynamic-reshape on static shapes, and
instruction names reused across computations.

XLA:CPU cannot run four of them: copy-start/copy-done and collective-broadcast (its thunk
emitter has no code for them), async-start/async-done (the path through StableHLO that runs
HLO text loses their shapes) and the tuple form of all-to-all (it crashes). Those cases (`SAME_AS`) are compared with the outputs XLA gives
for the plain op they stand for on one device (copy, call), on the same inputs.

stochastic-convert is XLA's decomposition, compared with XLA bit for bit.

Located errors: groups or pairs naming another device, a partitioned shard shape, a
reduce-scatter reducer XLA:CPU does not run, stochastic-convert to a float, a bounded dynamic
entry parameter (set-dimension-size and the rest of dynamic shapes: test_dynamic_shapes.py).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.ops.conftest import assert_matches, load_case, run_hlo_text

_RNG = np.random.default_rng(11)
_X = np.concatenate([_RNG.standard_normal(33 * 65 - 6).astype(np.float32),
                     np.array([np.nan, -0.0, np.inf, -np.inf, 1e-40, 3e38], np.float32)]).reshape(33, 65)
_N = _RNG.integers(-1000, 1000, (33, 65)).astype(np.int32)
# values with every fraction, small and huge magnitudes, the integer ranges' edges and NaN
_SC_X = np.concatenate([_RNG.uniform(-300, 300, 33 * 65 - 16),
                        [np.nan, -np.inf, np.inf, -0.0, 0.5, -0.5, 127.5, -128.5, 2.0 ** 31, -2.0 ** 31,
                         3e9, -3e9, 32767.5, -32768.9, 1e-40, 1e38]]).astype(np.float32).reshape(33, 65)
_ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""
_MAX_S32 = """max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] maximum(a, b)
}
"""

CASES = {
    "single_replica_ids": ("""HloModule single_replica_ids
ENTRY main {
  x = f32[33,65] parameter(0)
  r = u32[] replica-id()
  p = u32[] partition-id()
  s = u32[] add(r, p)
  f = f32[] convert(s)
  b = f32[33,65] broadcast(f), dimensions={}
  y = f32[33,65] add(x, b)
  ROOT t = (u32[], u32[], f32[33,65]) tuple(r, p, y)
}
""", [_X], 0.0),
    "single_all_reduce": ("""HloModule single_all_reduce
""" + _ADD + _MAX_S32 + """
ENTRY main {
  x = f32[33,65] parameter(0)
  n = s32[33,65] parameter(1)
  a = f32[33,65] all-reduce(x), replica_groups={}, to_apply=add
  b = f32[33,65] all-reduce(x), replica_groups={{0}}, to_apply=add
  c = f32[33,65] all-reduce(a), replica_groups=[1,1]<=[1], to_apply=add
  d = (f32[33,65], f32[33,65]) all-reduce(b, x), replica_groups={}, to_apply=add
  e = f32[33,65] get-tuple-element(d), index=1
  f = s32[33,65] all-reduce(n), replica_groups={{0}}, to_apply=max_s32
  g = f32[33,65] multiply(c, e)
  ROOT t = (f32[33,65], f32[33,65], s32[33,65]) tuple(a, g, f)
}
""", [_X, _N], 0.0),
    "single_all_reduce_start": ("""HloModule single_all_reduce_start
""" + _ADD + """
ENTRY main {
  x = f32[33,65] parameter(0)
  s = f32[33,65] all-reduce-start(x), replica_groups={{0}}, to_apply=add
  d = f32[33,65] all-reduce-done(s)
  ROOT e = f32[33,65] exponential(d)
}
""", [_X], 1e-6),
    "single_all_gather": ("""HloModule single_all_gather
ENTRY main {
  x = f32[33,65] parameter(0)
  n = s32[33,65] parameter(1)
  a = f32[33,65] all-gather(x), replica_groups={}, dimensions={0}
  b = f32[33,65] all-gather(x), replica_groups={{0}}, dimensions={1}, use_global_device_ids=true, channel_id=1
  s = (f32[33,65], f32[33,65]) all-gather-start(x), replica_groups={{0}}, dimensions={1}
  c = f32[33,65] all-gather-done(s)
  w = (f32[33,65], s32[33,65]) all-gather(x, n), replica_groups={}, dimensions={0}
  e = s32[33,65] get-tuple-element(w), index=1
  ab = f32[33,65] subtract(a, b)
  ROOT t = (f32[33,65], f32[33,65], s32[33,65]) tuple(ab, c, e)
}
""", [_X, _N], 0.0),
    "single_reduce_scatter": ("""HloModule single_reduce_scatter
""" + _ADD + """
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] multiply(b, a)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] minimum(a, b)
}
addh {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
""" + _MAX_S32 + """
ENTRY main {
  x = f32[33,65] parameter(0)
  n = s32[33,65] parameter(1)
  a = f32[33,65] reduce-scatter(x), replica_groups={}, dimensions={1}, to_apply=add
  b = f32[33,65] reduce-scatter(x), replica_groups={{0}}, dimensions={0}, to_apply=mul
  c = f32[33,65] reduce-scatter(x), replica_groups={}, dimensions={1}, to_apply=max
  d = f32[33,65] reduce-scatter(x), replica_groups={}, dimensions={1}, to_apply=min
  h = bf16[33,65] convert(x)
  e = bf16[33,65] reduce-scatter(h), replica_groups={}, dimensions={1}, to_apply=addh
  f = s32[33,65] reduce-scatter(n), replica_groups={}, dimensions={0}, to_apply=max_s32
  ROOT t = (f32[33,65], f32[33,65], f32[33,65], f32[33,65], bf16[33,65], s32[33,65]) tuple(a, b, c, d, e, f)
}
""", [_X, _N], 0.0),
    "single_all_to_all": ("""HloModule single_all_to_all
ENTRY main {
  x = f32[33,65] parameter(0)
  a = f32[33,65] all-to-all(x), replica_groups={{0}}, dimensions={0}
  b = f32[33,65] all-to-all(a), replica_groups=[1,1]<=[1], dimensions={1}
  ROOT o = (f32[33,65], f32[33,65]) tuple(a, b)
}
""", [_X], 0.0),
    "single_collective_permute": ("""HloModule single_collective_permute
ENTRY main {
  x = f32[33,65] parameter(0)
  n = s32[7] parameter(1)
  a = f32[33,65] collective-permute(x), source_target_pairs={{0,0}}
  b = f32[33,65] collective-permute(x), source_target_pairs={}
  c = s32[7] collective-permute(n), source_target_pairs={}, channel_id=2
  s = (f32[33,65], f32[33,65], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,0}}
  d = f32[33,65] collective-permute-done(s)
  e = f32[33,65] add(a, d)
  ROOT o = (f32[33,65], f32[33,65], s32[7]) tuple(e, b, c)
}
""", [_X, np.arange(7, dtype=np.int32) - 3], 0.0),
    "single_domain_sharding": ("""HloModule single_domain_sharding
ENTRY main {
  x = f32[33,65] parameter(0)
  d = f32[33,65] domain(x), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  s = f32[33,65] custom-call(d), custom_call_target="Sharding", sharding={replicated}
  a = f32[33,65] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  m = f32[33,65] multiply(a, a)
  ROOT b = f32[33,65] custom-call(m), custom_call_target="SPMDShardToFullShape", sharding={replicated}
}
""", [_X], 0.0),
    "single_dimension_size": ("""HloModule single_dimension_size
ENTRY main {
  x = f32[33,65] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  d0 = s32[] get-dimension-size(x), dimensions={0}
  d1 = s32[] get-dimension-size(x), dimensions={1}
  m = s32[] multiply(d0, d1)
  r = f32[65,33] dynamic-reshape(x, a, b)
  ROOT t = (s32[], s32[], f32[65,33]) tuple(d1, m, r)
}
""", [_X, np.int32(5), np.int32(7)], 0.0),
    "single_collectives_in_loop": ("""HloModule single_collectives_in_loop
""" + _ADD + """
cond {
  s = (s32[], f32[33,65]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[33,65]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[33,65] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[33,65] all-reduce(x), replica_groups={{0}}, to_apply=add
  id = u32[] replica-id()
  f = f32[] convert(id)
  h = f32[] constant(0.5)
  g = f32[] add(f, h)
  b = f32[33,65] broadcast(g), dimensions={}
  y = f32[33,65] multiply(r, b)
  ROOT t = (s32[], f32[33,65]) tuple(j, y)
}
ENTRY main {
  x = f32[33,65] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[33,65]) tuple(zero, x)
  w = (s32[], f32[33,65]) while(s), condition=cond, body=body
  ROOT o = f32[33,65] get-tuple-element(w), index=1
}
""", [_X], 0.0),
    "single_add_dependency": ("""HloModule single_add_dependency
ENTRY main {
  x = f32[33,65] parameter(0)
  t = token[] after-all()
  d = f32[33,65] add-dependency(x, t)
  ROOT n = f32[33,65] negate(d)
}
""", [_X], 0.0),
    "reused_names": ("""HloModule reused_names
sq {
  x = f32[] parameter(0)
  y = f32[] multiply(x, x)
  ROOT z = f32[] add(y, x)
}
body {
  x = f32[33,65] parameter(0)
  y = f32[33,65] exponential(x)
  ROOT z = f32[33,65] negate(y)
}
ENTRY main {
  x = f32[33,65] parameter(0)
  y = f32[33,65] call(x), to_apply=body
  y.1 = f32[33,65] map(x), dimensions={0,1}, to_apply=sq
  z = f32[33,65] add(y, y.1)
  ROOT z.1 = f32[33,65] subtract(z, x)
}
""", [np.clip(_X, -5, 5)], 1e-6),
    "tuple_parameter": ("""HloModule tuple_parameter
ENTRY main {
  p = (f32[33,65], (s32[33,65], bf16[5,3]), f32[]) parameter(0)
  x = f32[33,65] get-tuple-element(p), index=0
  q = (s32[33,65], bf16[5,3]) get-tuple-element(p), index=1
  n = s32[33,65] get-tuple-element(q), index=0
  h = bf16[5,3] get-tuple-element(q), index=1
  s = f32[] get-tuple-element(p), index=2
  b = f32[33,65] broadcast(s), dimensions={}
  f = f32[33,65] convert(n)
  m = f32[33,65] multiply(x, b)
  y = f32[33,65] add(m, f)
  hh = bf16[5,3] multiply(h, h)
  ROOT t = (f32[33,65], bf16[5,3], s32[33,65]) tuple(y, hh, n)
}
""", [_X, _N, (np.arange(15, dtype=np.float32).reshape(5, 3) / 7).astype(ml_dtypes.bfloat16), np.float32(-1.5)], 0.0),
    "stochastic_convert": ("""HloModule stochastic_convert
ENTRY main {
  x = f32[33,65] parameter(0)
  r = u32[33,65] parameter(1)
  h = bf16[33,65] parameter(2)
  q = u16[33,65] parameter(3)
  f = f16[33,65] parameter(4)
  d = f64[33,65] parameter(5)
  w = u64[33,65] parameter(6)
  a = s32[33,65] stochastic-convert(x, r)
  b = s8[33,65] stochastic-convert(x, r)
  c = s16[33,65] stochastic-convert(h, q)
  e = s32[33,65] stochastic-convert(f, q)
  g = s64[33,65] stochastic-convert(d, w)
  ROOT t = (s32[33,65], s8[33,65], s16[33,65], s32[33,65], s64[33,65]) tuple(a, b, c, e, g)
}
""", [_SC_X, _RNG.integers(0, 2**32, (33, 65), dtype=np.uint32), _SC_X.astype(ml_dtypes.bfloat16),
      _RNG.integers(0, 2**16, (33, 65), dtype=np.uint16), np.clip(_SC_X, -6e4, 6e4).astype(np.float16),
      _SC_X.astype(np.float64) * 1e9, _RNG.integers(0, 2**64, (33, 65), dtype=np.uint64)], 0.0),
    # the plain ops three cases below stand for (XLA:CPU cannot run those)
    "single_plain_copy": ("""HloModule single_plain_copy
ENTRY main {
  x = f32[33,65] parameter(0)
  c = f32[33,65] copy(x)
  ROOT e = f32[33,65] exponential(c)
}
""", [_X], 1e-6),
    "single_plain_call": ("""HloModule single_plain_call
""" + _ADD + """
wrapped {
  p = f32[33,65] parameter(0)
  q = s32[33,65] parameter(1)
  e = f32[33,65] exponential(p)
  r = f32[33,65] all-reduce(e), replica_groups={{0}}, to_apply=add
  f = f32[33,65] convert(q)
  ROOT m = f32[33,65] multiply(r, f)
}
ENTRY main {
  x = f32[33,65] parameter(0)
  n = s32[33,65] parameter(1)
  ROOT c = f32[33,65] call(x, n), to_apply=wrapped
}
""", [np.clip(_X, -5, 5), _N], 1e-6),
}

# cases XLA:CPU cannot run, each compared with the XLA outputs of the plain case it stands for
SAME_AS = {
    "copy_start_done": ("single_plain_copy", """HloModule copy_start_done
ENTRY main {
  x = f32[33,65] parameter(0)
  s = (f32[33,65], f32[33,65], u32[]) copy-start(x)
  c = f32[33,65] copy-done(s)
  ROOT e = f32[33,65] exponential(c)
}
"""),
    "all_to_all_tuple": ("single_plain_copy", """HloModule all_to_all_tuple
ENTRY main {
  x = f32[33,65] parameter(0)
  t = (f32[33,65]) all-to-all(x), replica_groups={{0}}
  c = f32[33,65] get-tuple-element(t), index=0
  ROOT e = f32[33,65] exponential(c)
}
"""),
    "collective_broadcast": ("single_plain_copy", """HloModule collective_broadcast
ENTRY main {
  x = f32[33,65] parameter(0)
  c = f32[33,65] collective-broadcast(x), replica_groups={{0}}
  ROOT e = f32[33,65] exponential(c)
}
"""),
    "async_start_done": ("single_plain_call", """HloModule async_start_done
""" + _ADD + """
wrapped {
  p = f32[33,65] parameter(0)
  q = s32[33,65] parameter(1)
  e = f32[33,65] exponential(p)
  r = f32[33,65] all-reduce(e), replica_groups={{0}}, to_apply=add
  f = f32[33,65] convert(q)
  ROOT m = f32[33,65] multiply(r, f)
}
ENTRY main {
  x = f32[33,65] parameter(0)
  n = s32[33,65] parameter(1)
  s = ((f32[33,65], s32[33,65]), f32[33,65], s32[]) async-start(x, n), async_execution_thread="parallel", calls=wrapped
  u = ((f32[33,65], s32[33,65]), f32[33,65], s32[]) async-update(s)
  ROOT d = f32[33,65] async-done(u)
}
"""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(SAME_AS))
def test_same_as_plain_op(name, workdir):
    plain, text = SAME_AS[name]
    inputs, expected = load_case(plain)
    got = run_hlo_text(text, inputs, workdir, name)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_matches(g, e, CASES[plain][2], f"{name} output {k}")


_ERRORS = {
    "replica_groups={{0,1}}": ("""HloModule e
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}
""", 9, "names devices other than device 0"),
    "iota groups": ("""HloModule e
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[8] all-gather(x), replica_groups=[1,2]<=[2], dimensions={0}
}
""", 4, "replica_groups=[1,2]<=[2] names devices other than device 0"),
    "gathered shape": ("""HloModule e
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[8] all-gather(x), replica_groups={}, dimensions={0}
}
""", 4, "all-gather on one device gives f32[4], not f32[8] (a module built for several devices"),
    "pairs": ("""HloModule e
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] collective-permute(x), source_target_pairs={{0,1},{1,0}}
}
""", 4, "source_target_pairs={{0,1},{1,0}} names devices"),
    "shard shape": ("""HloModule e
ENTRY main {
  x = f32[4] parameter(0)
  ROOT a = f32[2] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
}
""", 4, "partitioned for several devices"),
    "stochastic-convert to a float": ("""HloModule e
ENTRY main {
  x = f32[4] parameter(0)
  r = u32[4] parameter(1)
  ROOT z = bf16[4] stochastic-convert(x, r)
}
""", 5, "from f32 to bf16 (XLA:CPU converts floats to signed integers s8 to s64 only)"),
    "reduce-scatter reducer": ("""HloModule e
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] subtract(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=sub
}
""", 9, "to_apply=sub is not a reduction XLA:CPU runs"),
    "dynamic parameter": ("""HloModule e
ENTRY main {
  x = f32[<=8,3] parameter(0)
  ROOT n = f32[<=8,3] negate(x)
}
""", 3, "bounded dynamic shape f32[<=8,3]"),
}


@pytest.mark.parametrize("what", sorted(_ERRORS))
def test_located_errors(what):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions

    text, line, message = _ERRORS[what]
    with pytest.raises(AotcError) as err:
        fe = driver.frontend("e.hlo", None, CompileOptions(), text=text)
        driver.generate(fe, None, CompileOptions())
    assert message in str(err.value)
    assert err.value.loc is not None and err.value.loc.line == line, str(err.value)


@pytest.mark.slow  # imports jax
def test_jax_shard_map_on_one_device(workdir):
    """What JAX exports for shard_map over a one-device mesh (psum, axis_index, all_gather,
    ppermute: all-reduce, partition-id, all-gather, collective-permute), read as StableHLO and
    as HLO text, against the outputs JAX itself computes (XLA:CPU)."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec as P

    mesh = Mesh(jax.devices()[:1], ("x",))

    def g(a):
        s = jax.lax.psum(a, "x")
        i = jax.lax.axis_index("x")
        return s * 2 + i, jax.lax.all_gather(a, "x", tiled=True), jax.lax.ppermute(jnp.exp(a), "x", [(0, 0)])

    f = jax.jit(jax.shard_map(g, mesh=mesh, in_specs=P("x"), out_specs=(P("x"),) * 3, check_vma=False))
    # no -0: JAX compiles with partition-id known to be 0, and XLA then drops `+ 0` (A + 0 => A),
    # a rewrite aotc's algsimp does not mirror (with -0 the bits differ)
    x = np.where(_X == 0, np.float32(1), np.clip(_X, -5, 5))
    want = [np.asarray(o) for o in f(x)]
    lowered = f.lower(x)
    for form, text in (("mlir", lowered.as_text()), ("hlo", lowered.as_text(dialect="hlo"))):
        got = run_hlo_text(text, [x], workdir, f"jax_shard_map_{form}")
        assert len(got) == len(want)
        for k, (g_, w) in enumerate(zip(got, want)):
            assert_matches(g_, w, 0.0, f"{form} output {k}")
