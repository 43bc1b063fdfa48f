"""An op rule that cannot compile a case refuses it with a located error (exit 1), never a
traceback and never code that reads values wrongly: complex maximum in a reduction (its
result on ties depends on XLA:CPU's order of operations), a total-order compare of complex
values, and a map whose computation is not scalar elementwise work."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from aotc.cli import main

CASES = {
    "complex_max_reducer": ("HloModule c\nmx {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n"
                            "  ROOT m = c64[] maximum(a, b)\n}\nENTRY main {\n  x = c64[8] parameter(0)\n"
                            "  z = c64[] constant((0, 0))\n  ROOT y = c64[] reduce(x, z), dimensions={0}, to_apply=mx\n}\n",
                            "m.hlo:10:8: error: cannot compile reduce y: the computation mx it calls has maximum m "
                            "of complex values, whose result in a reduction depends on XLA:CPU's order of operations"),
    "complex_totalorder": ("HloModule c\nENTRY main {\n  x = c64[4] parameter(0)\n"
                           "  ROOT y = pred[4] compare(x, x), direction=LT, type=TOTALORDER\n}\n",
                           "m.hlo:4:8: error: cannot compile compare y: compare of complex values with "
                           "type=TOTALORDER is not supported"),
    "map_reduce": ("HloModule m\nred {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                   "body {\n  x = f32[] parameter(0)\n  v = f32[2] broadcast(x), dimensions={}\n  z = f32[] constant(0)\n"
                   "  ROOT r = f32[] reduce(v, z), dimensions={0}, to_apply=red\n}\n"
                   "ENTRY main {\n  p = f32[3] parameter(0)\n  ROOT y = f32[3] map(p), dimensions={0}, to_apply=body\n}\n",
                   "m.hlo:9:3: error: map y: broadcast v (f32[2]) is not a scalar elementwise op"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_unsupported_case_is_a_located_error(tmp_path, name, monkeypatch):
    text, want = CASES[name]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.hlo").write_text(text)
    result = CliRunner().invoke(main, ["compile", "m.hlo", "-o", "libm"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert want in result.output
    assert not (tmp_path / "libm.c").exists()  # nothing half-written
