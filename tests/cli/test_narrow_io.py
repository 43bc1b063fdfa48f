"""`aotc run` reads arrays of the ml_dtypes types (f8, f4, s2/u2/s4/u4) from an .npz as
numpy writes them (raw void elements, '|V1') with the type of the model's signature, and
writes its results so that they read back as the same bytes. The model only copies its
inputs, so every code must come back unchanged: no arithmetic is checked here (that is
tests/ops/test_narrow_types.py, against XLA)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from click.testing import CliRunner

from aotc.cli import main

MODEL = """HloModule copy_narrow

ENTRY e {
  x = f8e4m3fn[256] parameter(0)
  y = s4[16] parameter(1)
  z = f4e2m1fn[16] parameter(2)
  a = f8e4m3fn[256] copy(x)
  b = s4[16] copy(y)
  c = f4e2m1fn[16] copy(z)
  ROOT t = (f8e4m3fn[256], s4[16], f4e2m1fn[16]) tuple(a, b, c)
}
"""


def test_run_reads_and_writes_ml_dtypes_arrays_through_npz(tmp_path):
    model = tmp_path / "m.hlo"
    model.write_text(MODEL)
    x = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
    y = np.arange(-8, 8).astype(ml_dtypes.int4)
    z = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)
    np.savez(tmp_path / "in.npz", x=x, y=y, z=z)
    with np.load(tmp_path / "in.npz") as f:
        assert f["x"].dtype == np.dtype("V1")  # what the reader has to accept
    r = CliRunner().invoke(main, ["run", str(model), "--inputs", str(tmp_path / "in.npz"),
                                  "--output", str(tmp_path / "out.npz")])
    assert r.exit_code == 0, r.output
    with np.load(tmp_path / "out.npz") as f:
        for name, want in (("a", x), ("b", y), ("c", z)):
            np.testing.assert_array_equal(f[name].view(np.uint8), want.view(np.uint8), err_msg=name)


def test_a_void_array_of_another_width_is_refused(tmp_path):
    model = tmp_path / "m.hlo"
    model.write_text(MODEL)
    np.savez(tmp_path / "in.npz", x=np.zeros(256, "V2"), y=np.zeros(16, ml_dtypes.int4),
             z=np.zeros(16, ml_dtypes.float4_e2m1fn))
    r = CliRunner().invoke(main, ["run", str(model), "--inputs", str(tmp_path / "in.npz"),
                                  "--output", str(tmp_path / "out.npz")])
    assert r.exit_code == 1, r.output
    assert "argument 0 'x': expected f8e4m3fn[256]" in r.output
