"""HLO modules that call into the application (custom calls, infeed/outfeed, send/recv,
tokens) and, for each, the equivalent module XLA can run on its own: the custom call
replaced by the HLO computing the same, feeds replaced by parameters and results. The
expected values of tests/e2e/test_host_calls.py are XLA's outputs for the equivalents
(gen_host_expected.py writes them to data/host_calls.npz)."""

ROWS, COLS = 64, 256  # the custom-call model: f32[ROWS, COLS]
STEPS, WIDTH = 10, 256  # the streaming model: STEPS trips over f32[WIDTH] feeds
N = 128  # the send/recv model: f32[N]

# y = my_affine(x) (typed FFI attributes: y = x * scale + shift), s = row_sumsq(y) (a string
# backend_config), result (y + x, s)
CUSTOM = f"""HloModule custom, entry_computation_layout={{(f32[{ROWS},{COLS}]{{1,0}})->(f32[{ROWS},{COLS}]{{1,0}}, f32[{ROWS}]{{0}})}}

ENTRY main {{
  x = f32[{ROWS},{COLS}]{{1,0}} parameter(0)
  y = f32[{ROWS},{COLS}]{{1,0}} custom-call(x), custom_call_target="my_affine", api_version=API_VERSION_TYPED_FFI, backend_config={{scale = 1.500000e+00 : f32, shift = 2 : i32, note = "affine"}}
  s = f32[{ROWS}]{{0}} custom-call(y), custom_call_target="row_sumsq", backend_config="sumsq"
  yx = f32[{ROWS},{COLS}]{{1,0}} add(y, x)
  ROOT out = (f32[{ROWS},{COLS}]{{1,0}}, f32[{ROWS}]{{0}}) tuple(yx, s)
}}
"""

CUSTOM_REF = f"""HloModule custom_ref

add_f32 {{
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT pq = f32[] add(p, q)
}}

ENTRY main {{
  x = f32[{ROWS},{COLS}]{{1,0}} parameter(0)
  c15 = f32[] constant(1.5)
  c2 = f32[] constant(2)
  b15 = f32[{ROWS},{COLS}]{{1,0}} broadcast(c15), dimensions={{}}
  b2 = f32[{ROWS},{COLS}]{{1,0}} broadcast(c2), dimensions={{}}
  xs = f32[{ROWS},{COLS}]{{1,0}} multiply(x, b15)
  y = f32[{ROWS},{COLS}]{{1,0}} add(xs, b2)
  yy = f32[{ROWS},{COLS}]{{1,0}} multiply(y, y)
  zero = f32[] constant(0)
  s = f32[{ROWS}]{{0}} reduce(yy, zero), dimensions={{1}}, to_apply=add_f32
  yx = f32[{ROWS},{COLS}]{{1,0}} add(y, x)
  ROOT out = (f32[{ROWS},{COLS}]{{1,0}}, f32[{ROWS}]{{0}}) tuple(yx, s)
}}
"""

# a streaming loop: each trip reads (x, k) from the infeed (a tuple), accumulates acc += x,
# writes acc * x * k to the outfeed; the token runs through the loop state and out of the entry
STREAM = f"""HloModule stream, entry_computation_layout={{(f32[{WIDTH}]{{0}}, s32[], token[])->(f32[{WIDTH}]{{0}}, token[])}}

cond {{
  cs = (s32[], s32[], f32[{WIDTH}]{{0}}, token[]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  cn = s32[] get-tuple-element(cs), index=1
  ROOT lt = pred[] compare(ci, cn), direction=LT
}}

body {{
  bs = (s32[], s32[], f32[{WIDTH}]{{0}}, token[]) parameter(0)
  bi = s32[] get-tuple-element(bs), index=0
  bn = s32[] get-tuple-element(bs), index=1
  bacc = f32[{WIDTH}]{{0}} get-tuple-element(bs), index=2
  bt = token[] get-tuple-element(bs), index=3
  feed = ((f32[{WIDTH}]{{0}}, s32[]), token[]) infeed(bt)
  data = (f32[{WIDTH}]{{0}}, s32[]) get-tuple-element(feed), index=0
  x = f32[{WIDTH}]{{0}} get-tuple-element(data), index=0
  k = s32[] get-tuple-element(data), index=1
  bt2 = token[] get-tuple-element(feed), index=1
  acc2 = f32[{WIDTH}]{{0}} add(bacc, x)
  kf = f32[] convert(k)
  kb = f32[{WIDTH}]{{0}} broadcast(kf), dimensions={{}}
  ax = f32[{WIDTH}]{{0}} multiply(acc2, x)
  y = f32[{WIDTH}]{{0}} multiply(ax, kb)
  bt3 = token[] outfeed(y, bt2), outfeed_shape=f32[{WIDTH}]{{0}}
  one = s32[] constant(1)
  bi2 = s32[] add(bi, one)
  ROOT next = (s32[], s32[], f32[{WIDTH}]{{0}}, token[]) tuple(bi2, bn, acc2, bt3)
}}

ENTRY main {{
  a = f32[{WIDTH}]{{0}} parameter(0)
  n = s32[] parameter(1)
  t0 = token[] parameter(2)
  z = s32[] constant(0)
  init = (s32[], s32[], f32[{WIDTH}]{{0}}, token[]) tuple(z, n, a, t0)
  w = (s32[], s32[], f32[{WIDTH}]{{0}}, token[]) while(init), condition=cond, body=body
  acc = f32[{WIDTH}]{{0}} get-tuple-element(w), index=2
  tf = token[] get-tuple-element(w), index=3
  ROOT out = (f32[{WIDTH}]{{0}}, token[]) tuple(acc, tf)
}}
"""

# the same loop with the feeds as parameters (xs, ks) and the outfeed as a result (ys)
STREAM_REF = f"""HloModule stream_ref

cond {{
  cs = (s32[], f32[{WIDTH}]{{0}}, f32[{STEPS},{WIDTH}]{{1,0}}, f32[{STEPS},{WIDTH}]{{1,0}}, s32[{STEPS}]{{0}}) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  cn = s32[] constant({STEPS})
  ROOT lt = pred[] compare(ci, cn), direction=LT
}}

body {{
  bs = (s32[], f32[{WIDTH}]{{0}}, f32[{STEPS},{WIDTH}]{{1,0}}, f32[{STEPS},{WIDTH}]{{1,0}}, s32[{STEPS}]{{0}}) parameter(0)
  bi = s32[] get-tuple-element(bs), index=0
  bacc = f32[{WIDTH}]{{0}} get-tuple-element(bs), index=1
  bys = f32[{STEPS},{WIDTH}]{{1,0}} get-tuple-element(bs), index=2
  xs = f32[{STEPS},{WIDTH}]{{1,0}} get-tuple-element(bs), index=3
  ks = s32[{STEPS}]{{0}} get-tuple-element(bs), index=4
  zero = s32[] constant(0)
  xrow = f32[1,{WIDTH}]{{1,0}} dynamic-slice(xs, bi, zero), dynamic_slice_sizes={{1,{WIDTH}}}
  x = f32[{WIDTH}]{{0}} reshape(xrow)
  kk = s32[1]{{0}} dynamic-slice(ks, bi), dynamic_slice_sizes={{1}}
  k = s32[] reshape(kk)
  acc2 = f32[{WIDTH}]{{0}} add(bacc, x)
  kf = f32[] convert(k)
  kb = f32[{WIDTH}]{{0}} broadcast(kf), dimensions={{}}
  ax = f32[{WIDTH}]{{0}} multiply(acc2, x)
  y = f32[{WIDTH}]{{0}} multiply(ax, kb)
  yrow = f32[1,{WIDTH}]{{1,0}} reshape(y)
  ys2 = f32[{STEPS},{WIDTH}]{{1,0}} dynamic-update-slice(bys, yrow, bi, zero)
  one = s32[] constant(1)
  bi2 = s32[] add(bi, one)
  ROOT next = (s32[], f32[{WIDTH}]{{0}}, f32[{STEPS},{WIDTH}]{{1,0}}, f32[{STEPS},{WIDTH}]{{1,0}}, s32[{STEPS}]{{0}}) tuple(bi2, acc2, ys2, xs, ks)
}}

ENTRY main {{
  a = f32[{WIDTH}]{{0}} parameter(0)
  exs = f32[{STEPS},{WIDTH}]{{1,0}} parameter(1)
  eks = s32[{STEPS}]{{0}} parameter(2)
  z = s32[] constant(0)
  fz = f32[] constant(0)
  ys0 = f32[{STEPS},{WIDTH}]{{1,0}} broadcast(fz), dimensions={{}}
  init = (s32[], f32[{WIDTH}]{{0}}, f32[{STEPS},{WIDTH}]{{1,0}}, f32[{STEPS},{WIDTH}]{{1,0}}, s32[{STEPS}]{{0}}) tuple(z, a, ys0, exs, eks)
  w = (s32[], f32[{WIDTH}]{{0}}, f32[{STEPS},{WIDTH}]{{1,0}}, f32[{STEPS},{WIDTH}]{{1,0}}, s32[{STEPS}]{{0}}) while(init), condition=cond, body=body
  acc = f32[{WIDTH}]{{0}} get-tuple-element(w), index=1
  ys = f32[{STEPS},{WIDTH}]{{1,0}} get-tuple-element(w), index=2
  ROOT out = (f32[{WIDTH}]{{0}}, f32[{STEPS},{WIDTH}]{{1,0}}) tuple(acc, ys)
}}
"""

# recv on channel 5 (the data), a conditional over (data, token) that carries the token
# through its branches, add-dependency and after-all joining tokens, send on channel 7
SENDRECV = f"""HloModule sendrecv, entry_computation_layout={{(pred[], f32[{N}]{{0}})->(f32[{N}]{{0}}, token[])}}

on_true {{
  tp = (f32[{N}]{{0}}, token[]) parameter(0)
  td = f32[{N}]{{0}} get-tuple-element(tp), index=0
  tt = token[] get-tuple-element(tp), index=1
  tn = f32[{N}]{{0}} negate(td)
  ROOT tr = (f32[{N}]{{0}}, token[]) tuple(tn, tt)
}}

on_false {{
  fp = (f32[{N}]{{0}}, token[]) parameter(0)
  fd = f32[{N}]{{0}} get-tuple-element(fp), index=0
  ft = token[] get-tuple-element(fp), index=1
  fm = f32[{N}]{{0}} multiply(fd, fd)
  ROOT fr = (f32[{N}]{{0}}, token[]) tuple(fm, ft)
}}

ENTRY main {{
  p = pred[] parameter(0)
  x = f32[{N}]{{0}} parameter(1)
  t0 = token[] after-all()
  rv = (f32[{N}]{{0}}, u32[], token[]) recv(t0), channel_id=5, is_host_transfer=true
  rd = (f32[{N}]{{0}}, token[]) recv-done(rv), channel_id=5, is_host_transfer=true
  d = f32[{N}]{{0}} get-tuple-element(rd), index=0
  t1 = token[] get-tuple-element(rd), index=1
  dx = f32[{N}]{{0}} add(d, x)
  st = (f32[{N}]{{0}}, token[]) tuple(dx, t1)
  c = (f32[{N}]{{0}}, token[]) conditional(p, st, st), true_computation=on_true, false_computation=on_false
  v = f32[{N}]{{0}} get-tuple-element(c), index=0
  t2 = token[] get-tuple-element(c), index=1
  vd = f32[{N}]{{0}} add-dependency(v, t2)
  sd = (f32[{N}]{{0}}, u32[], token[]) send(vd, t2), channel_id=7, is_host_transfer=true
  t3 = token[] send-done(sd), channel_id=7, is_host_transfer=true
  t4 = token[] after-all(t3, t1)
  ROOT out = (f32[{N}]{{0}}, token[]) tuple(v, t4)
}}
"""

# the same with the received data as parameter r and the sent data as a result
SENDRECV_REF = f"""HloModule sendrecv_ref

on_true {{
  tp = (f32[{N}]{{0}}) parameter(0)
  td = f32[{N}]{{0}} get-tuple-element(tp), index=0
  tn = f32[{N}]{{0}} negate(td)
  ROOT tr = (f32[{N}]{{0}}) tuple(tn)
}}

on_false {{
  fp = (f32[{N}]{{0}}) parameter(0)
  fd = f32[{N}]{{0}} get-tuple-element(fp), index=0
  fm = f32[{N}]{{0}} multiply(fd, fd)
  ROOT fr = (f32[{N}]{{0}}) tuple(fm)
}}

ENTRY main {{
  p = pred[] parameter(0)
  x = f32[{N}]{{0}} parameter(1)
  r = f32[{N}]{{0}} parameter(2)
  dx = f32[{N}]{{0}} add(r, x)
  st = (f32[{N}]{{0}}) tuple(dx)
  c = (f32[{N}]{{0}}) conditional(p, st, st), true_computation=on_true, false_computation=on_false
  v = f32[{N}]{{0}} get-tuple-element(c), index=0
  ROOT out = (f32[{N}]{{0}}, f32[{N}]{{0}}) tuple(v, v)
}}
"""
