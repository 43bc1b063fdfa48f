"""The rng-get-and-update-state model of test_rng_state.py: two call sites at the top level
(one with a delta that carries into the high word on the third run) and one in a while
body that executes three times a run. gen_rng_state_expected.py records XLA:CPU's outputs
of RUNS executions of one compiled module."""

RUNS = 4

MODEL = """HloModule rng_state

body {
  p = (s32[], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = u64[2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  c = u64[2] rng-get-and-update-state(), delta=3
  s = u64[2] add(acc, c)
  ROOT t = (s32[], u64[2]) tuple(j, s)
}

cond {
  p = (s32[], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = u64[2] parameter(0)
  a = u64[2] rng-get-and-update-state(), delta=16
  big = u64[2] rng-get-and-update-state(), delta=9223372036854775807
  z = s32[] constant(0)
  w0 = (s32[], u64[2]) tuple(z, x)
  w = (s32[], u64[2]) while(w0), condition=cond, body=body
  loop = u64[2] get-tuple-element(w), index=1
  ROOT r = (u64[2], u64[2], u64[2]) tuple(a, big, loop)
}
"""

X = (1, 2)  # the parameter x
