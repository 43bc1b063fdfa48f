"""The fusion stage as HLO: every kernel with fused producers is a `fusion` instruction
calling a computation of its own (kind kLoop, kInput or kOutput), bare kernels stay as they
are, and a GEMM takes its elementwise consumers as an epilogue only when nothing else
needs its value. `--dump-after fusion` prints the module, checked with CHECK lines."""
from aotc import driver
from aotc.hlo.opcodes import Op
from aotc.options import CompileOptions
from tests.passes.filecheck import filecheck

MLP = """HloModule mlp
add_f32 {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT uv = f32[] add(u, v)
}
ENTRY main {
  x = f32[64,128] parameter(0)
  w = f32[128,32] parameter(1)
  b = f32[32] parameter(2)
  d = f32[64,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,32] broadcast(b), dimensions={1}
  h = f32[64,32] add(d, bb)
  zero = f32[] constant(0)
  z = f32[64,32] broadcast(zero), dimensions={}
  r = f32[64,32] maximum(h, z)
  e = f32[64,32] exponential(r)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add_f32
  sb = f32[64,32] broadcast(s), dimensions={0}
  p = f32[64,32] divide(e, sb)
  ROOT t = (f32[64,32], f32[64,32]) tuple(r, p)
}
"""


def _dump(text: str, capsys):
    fe = driver.frontend("m.hlo", None, CompileOptions(), text=text)
    gen = driver.generate(fe, "libm", CompileOptions(dump_after=("fusion",)))
    return capsys.readouterr().err, gen.lowered.fusion


def test_gemm_epilogue_and_row_fusion_as_fusion_instructions(capsys):
    text, fused = _dump(MLP, capsys)
    filecheck(text, """
        CHECK: // ---- after fusion
        CHECK: ENTRY %main
        CHECK: %r = f32[64,32] fusion(%x, %w, %b), kind=kOutput, calls=%fused_r
        CHECK-NEXT: %p = f32[64,32] fusion(%r), kind=kInput, calls=%fused_p
        CHECK: %fused_r {
        CHECK: %d = f32[64,32] dot(%x, %w)
        CHECK: ROOT %r = f32[64,32] maximum(%h, %z)
        CHECK: %fused_p {
        CHECK-NEXT: %r = f32[64,32] parameter(0)
        CHECK: %s = f32[64] reduce(%e, %zero)
        CHECK: ROOT %p = f32[64,32] multiply(%e, %sb.recip)
    """)
    assert fused.order == ("r", "p") and fused.heroes == {"r": "d"}
    assert fused.module.entry_computation.get("r").opcode == Op.FUSION


def test_a_gemm_whose_value_is_also_needed_elsewhere_keeps_its_buffer(capsys):
    text = MLP.replace("tuple(r, p)", "tuple(r, p, d)").replace("ROOT t = (f32[64,32], f32[64,32])",
                                                                   "ROOT t = (f32[64,32], f32[64,32], f32[64,32])")
    out, fused = _dump(text, capsys)
    filecheck(out, """
        CHECK: ENTRY %main
        CHECK: %d = f32[64,32] dot(%x, %w)
        CHECK-NOT: kOutput
    """)
    assert not fused.heroes


def test_a_gemm_feeding_a_reduction_keeps_its_buffer(capsys):
    text = MLP.replace("e = f32[64,32] exponential(r)", "e = f32[64,32] exponential(d)").replace(
        "tuple(r, p)", "tuple(h, p)")
    out, fused = _dump(text, capsys)
    assert "kOutput" not in out and not fused.heroes
    entry = fused.module.entry_computation
    assert entry.get("d").opcode == Op.DOT
