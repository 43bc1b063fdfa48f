"""The runtime's parts: which a generated file embeds (`parts_called`), and the runtime
without its vector part, which includes no intrinsics header and still builds warning-free."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aotc.runtime_c import (OPTIONAL_PARTS, SCALAR_PARTS, VECTOR_FILES, VECTOR_PART, parts_called,
                            runtime_source)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "fixtures"


def test_parts_called():
    assert parts_called((), vector_loops=False) == frozenset()
    assert parts_called(("aotc_add_f32", "aotc_bf16_to_f32", "aotc_round_bf16", "aotc_f64_to_bf16", "aotc_f8e4m3fn_to_f32",
                         "aotc_round_afz_f32", "aotc_la_potrf_f32"), vector_loops=False) == {"linalg"}
    assert parts_called((), vector_loops=True) == {VECTOR_PART}
    for name in ("aotc_sgemm_threads", "aotc_dgemm", "aotc_sgemm_pb", "aotc_f16_to_f32", "aotc_f32_to_f16",
                 "aotc_f16_to_f64", "aotc_f64_to_f16", "aotc_round_f16", "aotc_expm1_f16", "aotc_logistic_f16",
                 "aotc_round_f8e4m3fn", "aotc_store_f8e5m2", "aotc_round_f4e2m1fn", "aotc_store_f4e2m1fn"):
        assert parts_called((name,), vector_loops=False) == {VECTOR_PART}, name
    for part, (prefix, _) in OPTIONAL_PARTS.items():  # every optional part but linalg needs it
        want = {part} if part in SCALAR_PARTS else {part, VECTOR_PART}
        assert parts_called((prefix + "x",), vector_loops=False) == want, part
    assert SCALAR_PARTS == {"linalg"}


def test_without_vector_part_text():
    text = runtime_source(frozenset())
    assert "#define AOTC__NO_VECTOR_CODE 1" in text
    for name in VECTOR_FILES:
        assert f"aotc runtime: {name} ====" not in text
    full = runtime_source(frozenset({VECTOR_PART}))
    assert "AOTC__NO_VECTOR_CODE 1" not in full
    assert all(f"aotc runtime: {name} ====" in full for name in VECTOR_FILES)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("march", ["x86-64-v3", "x86-64-v4"])
def test_without_vector_part_includes_no_intrinsics(cc, march, tmp_path):
    """The core runtime alone and with the linear algebra: warning-free, and the headers the
    compiler reads (-H) hold no <immintrin.h>; with the vector part it does (the check can fail)."""
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} not installed")
    for parts, want in ((frozenset(), False), (SCALAR_PARTS, False), (frozenset({VECTOR_PART}), True)):
        src = tmp_path / f"rt_{'_'.join(sorted(parts))}.c"
        src.write_text(runtime_source(parts) + "\nint aotc_parts_probe(void) { return 0; }\n")
        res = subprocess.run([cc, f"-march={march}", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-H",
                              "-c", str(src), "-o", str(tmp_path / "rt.o")], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-3000:]
        assert ("immintrin.h" in res.stderr) == want, (cc, march, sorted(parts))


def test_generated_files_embed_the_vector_part_only_when_used(tmp_path):
    """A bf16 abs (scalar loop over widened values) leaves it out; the same op on f32 (a SIMD
    loop), on f16 (F16C conversions) and a dot (the GEMM) embed it."""
    import aotc

    for case, vector in (("abs_bf16", False), ("abs_f32", True), ("abs_f16", True), ("dot_f32_100x33x17", True)):
        d = FIXTURES / case
        assert d.is_dir(), case
        aotc.compile(str(d / "model.hlo"), config=str(d / "cfg.yaml"), out=str(tmp_path / case / "lib"))
        text = (tmp_path / case / "lib.c").read_text()
        assert ("#define AOTC__NO_VECTOR_CODE 1" not in text) == vector, case
        assert ("aotc runtime: aotc_simd.h ====" in text) == vector, case
