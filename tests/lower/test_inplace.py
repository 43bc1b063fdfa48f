"""In-place reuse: an elementwise kernel writes over an arena buffer it reads for the
last time (a decision recorded in the program), and never over one still needed.
(`d` is a sort: a dot there would take `e` as its epilogue.)"""
from aotc.driver import frontend, generate
from aotc.options import CompileOptions

TEXT = """
HloModule m

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

lt_f32 {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT c = pred[] compare(p, q), direction=LT
}

ENTRY main {
  x = f32[64,64] parameter(0)
  w = f32[64,64] parameter(1)
  xw = f32[64,64] add(x, w)
  d = f32[64,64] sort(xw), dimensions={1}, to_apply=lt_f32
  e = f32[64,64] exponential(d)
  z = f32[] constant(0)
  r0 = f32[64] reduce(e, z), dimensions={1}, to_apply=add_f32
  r1 = f32[64] reduce(e, z), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[64], f32[64]) tuple(r0, r1)
}
"""


def _program(tmp_path, text):
    p = tmp_path / "m.hlo"
    p.write_text(text)
    return generate(frontend(str(p)), "libm", CompileOptions()).lowered.program


def test_elementwise_kernel_overwrites_a_dying_buffer(tmp_path):
    prog = _program(tmp_path, TEXT)
    e = next(s for s in prog.slots if s.hlo == "e")
    d = next(s for s in prog.slots if s.hlo == "d")
    assert e.place == "alias" and e.alias_of == d.cname
    k = next(k for k in prog.kernels if k.cname == "k_e")
    assert k.params == ((d.cname, True),)  # reads and writes through one pointer
    assert "in place" in k.body[0].text
    assert d.live[1] == max(i for i, k in enumerate(prog.kernels) if k.cname in ("k_r0", "k_r1"))


def test_no_reuse_when_the_buffer_is_read_later(tmp_path):
    text = TEXT.replace("r1 = f32[64] reduce(e, z)", "r1 = f32[64] reduce(d, z)")
    text = text.replace("ROOT t = (f32[64], f32[64]) tuple(r0, r1)",
                        "r2 = f32[64] reduce(e, z), dimensions={0}, to_apply=add_f32\n"
                        "  ROOT t = (f32[64], f32[64], f32[64]) tuple(r0, r1, r2)")
    prog = _program(tmp_path, text)
    d = next(s for s in prog.slots if s.hlo == "d")
    e = next(s for s in prog.slots if s.hlo == "e")
    assert e.place == "arena"  # d is still needed by r1
    writers = [k.cname for k in prog.kernels for c, w in k.params if w and c == d.cname]
    assert writers == ["k_d"]
