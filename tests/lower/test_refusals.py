"""An op rule that cannot compile a case refuses it with a located error (exit 1), never a
traceback and never code that reads values wrongly: expm1 on f8 (XLA computes it in f16
by an expansion aotc does not reproduce), complex maximum, and a map whose computation is
not scalar elementwise work."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from aotc.cli import main

CASES = {
    "f8_expm1": ("HloModule f8\nENTRY main {\n  x = f8e4m3fn[4] parameter(0)\n"
                 "  ROOT y = f8e4m3fn[4] exponential-minus-one(x)\n}\n",
                 "m.hlo:4:8: error: cannot compile exponential-minus-one y: exponential-minus-one on f8e4m3fn is "
                 "not supported"),
    "complex_max": ("HloModule c\nENTRY main {\n  x = c64[4] parameter(0)\n  ROOT y = c64[4] maximum(x, x)\n}\n",
                    "m.hlo:4:8: error: cannot compile maximum y: maximum on complex values is not supported yet"),
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
