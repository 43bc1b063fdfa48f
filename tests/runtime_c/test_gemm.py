"""aotc_sgemm / aotc_dgemm against a float64 numpy reference, on every SIMD path
this machine can run (AVX-512, AVX2+FMA, scalar) and on NEON under qemu."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from aotc.runtime_c import ALIGNMENT, GEMM_SCRATCH_BYTES, runtime_source

from .conftest import HERE, aarch64_tools, have_tool, run_c_program, variants

VARIANTS = variants()


@pytest.fixture(scope="module", params=VARIANTS, ids=[v.name for v in VARIANTS])
def gemm_rt(request, rt_builds):
    v = request.param
    mod = rt_builds.get(v)
    assert mod.ffi.string(mod.lib.t_simd_name()).decode() == v.simd
    return mod


def aligned_scratch() -> np.ndarray:
    raw = np.zeros(GEMM_SCRATCH_BYTES + ALIGNMENT, np.uint8)
    off = (-raw.ctypes.data) % ALIGNMENT
    return raw[off:off + GEMM_SCRATCH_BYTES]


def strided_operand(rng, rows: int, cols: int, rs: int, cs: int, dtype):
    """A buffer holding a rows x cols matrix at element strides (rs, cs), which
    may be padded, transposed, zero or negative.  Returns (buffer, offset of
    element [0, 0], the logical matrix)."""
    if rows == 0 or cols == 0:
        return np.zeros(1, dtype), 0, np.zeros((rows, cols), dtype)
    corners = [r * rs + c * cs for r in (0, rows - 1) for c in (0, cols - 1)]
    lo, hi = min(corners), max(corners)
    buf = rng.uniform(-1, 1, hi - lo + 1).astype(dtype)
    off = -lo
    idx = off + np.arange(rows)[:, None] * rs + np.arange(cols)[None, :] * cs
    return buf, off, buf[idx]


LAYOUTS = {
    # name: function (M, N, K) -> (a_rs, a_cs, b_rs, b_cs)
    "rowmajor": lambda M, N, K: (K, 1, N, 1),
    "a_trans": lambda M, N, K: (1, M, N, 1),
    "b_trans": lambda M, N, K: (K, 1, 1, K),
    "both_trans": lambda M, N, K: (1, M, 1, K),
    "padded": lambda M, N, K: (K + 5, 1, N + 3, 1),
    "gather": lambda M, N, K: (2 * K + 1, 2, 3, 3 * K + 2),
    "broadcast_reversed": lambda M, N, K: (-K, 1, 0, 1),
}


def run_gemm(mod, dtype, M, N, K, layout, seed=0, ldc_pad=3, parts=0):
    """Runs aotc_[sd]gemm (parts == 0) or every slice of aotc_[sd]gemm_part;
    returns (C, float64 reference, |A| @ |B|)."""
    ffi, lib = mod.ffi, mod.lib
    rng = np.random.default_rng(seed)
    a_rs, a_cs, b_rs, b_cs = LAYOUTS[layout](M, N, K)
    abuf, aoff, A = strided_operand(rng, M, K, a_rs, a_cs, dtype)
    bbuf, boff, B = strided_operand(rng, K, N, b_rs, b_cs, dtype)
    ldc = N + ldc_pad
    C = np.full((max(M, 1), ldc), np.nan, dtype)
    ctype = "float" if dtype == np.float32 else "double"
    fn = lib.aotc_sgemm if dtype == np.float32 else lib.aotc_dgemm
    part_fn = lib.aotc_sgemm_part if dtype == np.float32 else lib.aotc_dgemm_part
    scratch = aligned_scratch()
    args = (M, N, K, ffi.from_buffer(f"{ctype}[]", abuf) + aoff, a_rs, a_cs,
            ffi.from_buffer(f"{ctype}[]", bbuf) + boff, b_rs, b_cs,
            ffi.from_buffer(f"{ctype}[]", C), ldc, ffi.from_buffer(scratch))
    if parts == 0:
        fn(*args)
    else:
        for p in reversed(range(parts)):
            part_fn(p, parts, *args)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    mag = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64))
    return C, ref, mag


def check(C, ref, mag, M, N, K, dtype):
    eps = np.finfo(dtype).eps / 2
    got = C[:M, :N].astype(np.float64)
    tol = 3 * (K + 1) * eps * mag + 1e-300
    err = np.abs(got - ref)
    assert np.all(err <= tol), f"max err {np.nanmax(err)} (M={M} N={N} K={K})"
    assert np.all(np.isnan(C[:, N:])), "wrote outside the C tile"


FIXED = [(1, 1, 1), (1, 1, 300), (1, 100, 50), (100, 1, 50), (12, 32, 16), (13, 33, 17),
         (11, 31, 256), (25, 65, 257), (144, 64, 64), (145, 70, 513), (3, 2100, 5),
         (37, 2049, 3), (6, 16, 1), (7, 17, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_gemm_fixed_shapes(gemm_rt, dtype, layout):
    for i, (M, N, K) in enumerate(FIXED):
        C, ref, mag = run_gemm(gemm_rt, dtype, M, N, K, layout, seed=i)
        check(C, ref, mag, M, N, K, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gemm_random_shapes(gemm_rt, dtype):
    rng = np.random.default_rng(11)
    names = list(LAYOUTS)
    for i in range(40):
        M, N, K = (int(x) for x in rng.integers(1, [160, 160, 600]))
        layout = names[int(rng.integers(len(names)))]
        C, ref, mag = run_gemm(gemm_rt, dtype, M, N, K, layout, seed=100 + i)
        check(C, ref, mag, M, N, K, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gemm_empty(gemm_rt, dtype):
    # K == 0: C is overwritten with zeros
    C, ref, _ = run_gemm(gemm_rt, dtype, 4, 5, 0, "rowmajor")
    assert np.all(C[:4, :5] == 0) and np.all(np.isnan(C[:, 5:]))
    # M == 0 or N == 0: nothing is written
    for M, N in ((0, 5), (4, 0)):
        C, _, _ = run_gemm(gemm_rt, dtype, M, N, 3, "rowmajor")
        assert np.all(np.isnan(C))


VECTOR_SHAPES = [(1, 1, 1), (1, 1, 17), (1, 5, 3), (5, 1, 3), (1, 100, 257), (100, 1, 257),
                 (1, 2049, 6), (2049, 1, 6), (1, 4100, 9), (3, 1, 1000), (1, 3, 1000),
                 (1, 31, 5000), (31, 1, 5000)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("ldc_pad", [0, 2])
def test_gemm_vector_shapes(gemm_rt, dtype, ldc_pad):
    """M == 1 or N == 1 take the streaming axpy/dot paths for most layouts."""
    for layout in LAYOUTS:
        for i, (M, N, K) in enumerate(VECTOR_SHAPES):
            C, ref, mag = run_gemm(gemm_rt, dtype, M, N, K, layout, seed=i, ldc_pad=ldc_pad)
            check(C, ref, mag, M, N, K, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gemm_parts_are_bit_identical(gemm_rt, dtype):
    """Slices from aotc_*gemm_part, for any number of parts, assemble to
    exactly the bits of the single call (thread count never changes results)."""
    shapes = [(1, 300, 40), (300, 1, 40), (13, 70, 33), (70, 13, 33), (25, 2100, 9), (145, 33, 300),
              (2, 1, 5), (1, 1, 7), (37, 38, 0)]
    for i, (M, N, K) in enumerate(shapes):
        for layout in ("rowmajor", "a_trans", "b_trans", "gather"):
            whole, ref, mag = run_gemm(gemm_rt, dtype, M, N, K, layout, seed=i, ldc_pad=0)
            check(whole, ref, mag, M, N, K, dtype)
            for parts in (1, 2, 3, 5, 64):
                sliced, _, _ = run_gemm(gemm_rt, dtype, M, N, K, layout, seed=i, ldc_pad=0, parts=parts)
                assert np.array_equal(sliced.view(np.uint8), whole.view(np.uint8)), (M, N, K, layout, parts)


def test_gemm_large_matches_numpy(gemm_rt):
    C, ref, mag = run_gemm(gemm_rt, np.float32, 300, 260, 700, "rowmajor", seed=5, ldc_pad=0)
    check(C, ref, mag, 300, 260, 700, np.float32)


def test_scratch_size(rt):
    assert rt.lib.aotc_gemm_scratch_bytes() == GEMM_SCRATCH_BYTES


def _rt_check_source(tmp_path):
    src = tmp_path / "rt_check_full.c"
    src.write_text(runtime_source() + "\n" + (HERE / "rt_check.c").read_text())
    return src


def test_gemm_driver_scalar_native(tmp_path):
    """The standalone driver on the portable scalar kernels (gcc, -O2 only)."""
    if not have_tool("gcc"):
        pytest.skip("gcc not found")
    out = run_c_program("gcc", [_rt_check_source(tmp_path)], tmp_path / "rt_check",
                        ["-std=c11", "-O2", "-DAOTC_SIMD_SCALAR"])
    assert out.strip() == "ok scalar"


def test_gemm_neon_under_qemu(tmp_path):
    """NEON micro-kernels (and the pool, FPCR.FZ) on aarch64 through qemu-user."""
    tools = aarch64_tools()
    if tools is None:
        pytest.skip("needs aarch64-linux-gnu-gcc and qemu-aarch64")
    cc, runner = tools
    out = run_c_program(cc, [_rt_check_source(tmp_path)], tmp_path / "rt_check_aarch64",
                        ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"], runner=runner)
    assert out.strip() == "ok neon"
    out = run_c_program(cc, [_rt_check_source(tmp_path)], tmp_path / "rt_check_aarch64_scalar",
                        ["-std=c11", "-O2", "-DAOTC_SIMD_SCALAR"], runner=runner)
    assert out.strip() == "ok scalar"


@pytest.mark.slow  # cross-built and emulated: minutes
@pytest.mark.parametrize("target,qemu", [("arm-linux-musleabihf", "qemu-arm"),
                                         ("riscv64-linux-musl", "qemu-riscv64")])
def test_rt_check_other_targets(tmp_path, target, qemu):
    """32-bit ARM (FPSCR.FZ path) and RISC-V (no FP env control, scalar GEMM),
    cross-built with zig cc and run under qemu-user."""
    if importlib.util.find_spec("ziglang") is None or not have_tool(qemu):
        pytest.skip(f"needs the ziglang package and {qemu}")
    src = _rt_check_source(tmp_path)
    exe = tmp_path / f"rt_check_{target}"
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", target, "-std=c11", "-O2", "-static",
           "-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe), "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)}\n{r.stderr}")
    r = subprocess.run([qemu, str(exe), "10"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok scalar", r.stdout + r.stderr


@pytest.mark.parametrize("mnk", [(1, 1, 1), (2, 3, 2), (7, 13, 5), (64, 64, 64), (100, 33, 17), (300, 5000, 700),
                                 (1, 1024, 1024), (1024, 1, 300), (513, 2049, 257)])
def test_scratch_need_is_size_dependent_and_bounded_by_the_planner(rt, mnk):
    """What the planner reserves (max over every micro-kernel) covers what this build
    uses, and never exceeds the fixed upper bound."""
    from aotc.runtime_c import gemm_scratch_bytes

    m, n, k = mnk
    for es, fn in ((4, "aotc_sgemm_scratch_need"), (8, "aotc_dgemm_scratch_need")):
        planned = gemm_scratch_bytes(m, n, k, es)
        used = getattr(rt.lib, fn)(m, n, k)
        assert used <= planned <= GEMM_SCRATCH_BYTES
        assert used % ALIGNMENT == 0


def test_gemm_runs_in_exactly_its_scratch_need(rt):
    """A call given only aotc_sgemm_scratch_need bytes, followed by a guard zone,
    leaves the guard untouched and computes the right product."""
    rng = np.random.default_rng(7)
    for m, n, k in ((5, 7, 3), (37, 129, 300), (150, 40, 20), (1, 64, 33)):
        need = rt.lib.aotc_sgemm_scratch_need(m, n, k)
        raw = np.full(need + 4096 + ALIGNMENT, 0xAB, np.uint8)
        off = (-raw.ctypes.data) % ALIGNMENT
        buf = raw[off:]
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        c = np.zeros((m, n), np.float32)
        ffi = rt.ffi
        rt.lib.aotc_sgemm(m, n, k, ffi.cast("float*", a.ctypes.data), k, 1, ffi.cast("float*", b.ctypes.data), n, 1,
                          ffi.cast("float*", c.ctypes.data), n, ffi.cast("void*", buf.ctypes.data))
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
        assert (buf[need:need + 4096] == 0xAB).all()


# (128, 1024, 256), (150, 512, 300), (192, 256, 600): rows of B 2 KB apart, no direct-B path, so
# B is packed a panel at a time (M <= 192); (193, 256, 300) just past that
@pytest.mark.parametrize("mnk", [(5, 7, 3), (12, 32, 300), (37, 129, 300), (150, 40, 20), (196, 32, 1152),
                                 (49, 300, 513), (128, 1024, 256), (150, 512, 300), (192, 256, 600),
                                 (193, 256, 300)])
def test_row_major_a_runs_in_its_planned_scratch(gemm_rt, mnk):
    """A row-major A is read in place but for one partial panel: the planner's smaller
    reservation (a_rows=True) suffices, the guard behind it stays untouched."""
    from aotc.runtime_c import gemm_scratch_bytes

    m, n, k = mnk
    rng = np.random.default_rng(11)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    for dtype, fn, es in ((np.float32, lib.aotc_sgemm, 4), (np.float64, lib.aotc_dgemm, 8)):
        need = gemm_scratch_bytes(m, n, k, es, a_rows=True)
        assert need <= gemm_scratch_bytes(m, n, k, es)
        raw = np.full(need + 4096 + ALIGNMENT, 0xAB, np.uint8)
        off = (-raw.ctypes.data) % ALIGNMENT
        buf = raw[off:]
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        c = np.zeros((m, n), dtype)
        ct = "float*" if dtype == np.float32 else "double*"
        fn(m, n, k, ffi.cast(ct, a.ctypes.data), k, 1, ffi.cast(ct, b.ctypes.data), n, 1,
           ffi.cast(ct, c.ctypes.data), n, ffi.cast("void*", buf.ctypes.data))
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
        assert (buf[need:need + 4096] == 0xAB).all()


@pytest.mark.parametrize("mnk", [(12, 32, 7), (37, 129, 300), (196, 32, 1152), (150, 40, 520), (128, 1024, 256),
                                 (190, 512, 600), (200, 64, 512), (77, 96, 1024), (13, 40, 2048)])
def test_a_in_place_gives_the_bits_of_packed_a(gemm_rt, mnk):
    """A row-major A (read in place) and the same A transposed in memory (packed) give
    bit-identical products: the micro-kernels sum in the same order.  Rows a multiple
    of 2 KiB apart (K = 512, 1024, 2048) run in half-height tiles on AVX-512, with a
    last tile of 7 to 12 rows."""
    m, n, k = mnk
    rng = np.random.default_rng(5)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    for dtype, fn in ((np.float32, lib.aotc_sgemm), (np.float64, lib.aotc_dgemm)):
        ct = "float*" if dtype == np.float32 else "double*"
        a = rng.standard_normal((m, k)).astype(dtype)
        at = np.ascontiguousarray(a.T)
        b = rng.standard_normal((k, n)).astype(dtype)
        outs = []
        for buf, rs, cs in ((a, k, 1), (at, 1, m)):
            c = np.zeros((m, n), dtype)
            fn(m, n, k, ffi.cast(ct, buf.ctypes.data), rs, cs, ffi.cast(ct, b.ctypes.data), n, 1,
               ffi.cast(ct, c.ctypes.data), n, ffi.from_buffer(aligned_scratch()))
            outs.append(c)
        assert outs[0].tobytes() == outs[1].tobytes()


@pytest.mark.parametrize("mnkp", [(128, 256, 1024, 4), (49, 2048, 512, 4), (784, 128, 96, 4), (37, 129, 300, 2),
                                  (5, 700, 33, 4), (1, 1000, 40, 4)])
def test_each_slice_runs_in_the_planned_part_scratch(gemm_rt, mnkp):
    """Every slice of aotc_sgemm_part stays within gemm_part_scratch_bytes (a guard zone
    behind it is untouched), and the slices together give the product."""
    from aotc.runtime_c import gemm_part_scratch_bytes

    m, n, k, parts = mnkp
    rng = np.random.default_rng(3)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    need = gemm_part_scratch_bytes(m, n, k, parts, 4, a_rows=True)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    for p in range(parts):
        raw = np.full(need + 4096 + ALIGNMENT, 0xAB, np.uint8)
        off = (-raw.ctypes.data) % ALIGNMENT
        buf = raw[off:]
        lib.aotc_sgemm_part(p, parts, m, n, k, ffi.cast("float*", a.ctypes.data), k, 1,
                            ffi.cast("float*", b.ctypes.data), n, 1, ffi.cast("float*", c.ctypes.data), n,
                            ffi.cast("void*", buf.ctypes.data))
        assert (buf[need:need + 4096] == 0xAB).all()
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


# (512, 512, 512, 4), (256, 1024, 256, 4): slices of at most 192 rows pack one B panel, the
# whole product (no pool: one slice in the scratch of all four) a whole B block
@pytest.mark.parametrize("mnkp", [(128, 256, 1024, 4), (49, 2048, 512, 4), (784, 128, 96, 4), (37, 129, 300, 2),
                                  (5, 700, 33, 4), (1, 1000, 40, 4), (130, 61, 77, 4), (512, 512, 512, 4),
                                  (256, 1024, 256, 4)])
def test_one_slice_per_thread_runs_in_the_scratch_of_the_slices_it_merges(gemm_rt, mnkp):
    """aotc_sgemm_threads on a pool of T threads, T dividing `parts`, cuts T slices, each
    given the scratch of parts / T planned slices, and without a pool runs the whole product
    in the scratch of all of them: each stays within it."""
    from aotc.runtime_c import gemm_part_scratch_bytes

    m, n, k, parts = mnkp
    rng = np.random.default_rng(4)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    for used in (t for t in range(1, parts) if parts % t == 0):
        need = gemm_part_scratch_bytes(m, n, k, parts, 4, a_rows=True) * (parts // used)
        c = np.zeros((m, n), np.float32)
        for q in range(used):
            raw = np.full(need + 4096 + ALIGNMENT, 0xAB, np.uint8)
            buf = raw[(-raw.ctypes.data) % ALIGNMENT:]
            lib.aotc_sgemm_part(q, used, m, n, k, ffi.cast("float*", a.ctypes.data), k, 1,
                                ffi.cast("float*", b.ctypes.data), n, 1, ffi.cast("float*", c.ctypes.data), n,
                                ffi.cast("void*", buf.ctypes.data))
            assert (buf[need:need + 4096] == 0xAB).all(), (used, q)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [8, 16, 32])
def test_b_of_one_aligned_panel_gives_the_bits_of_packed_b(gemm_rt, n):
    """A row-major B of exactly NR columns at an aligned address is used as its own packed
    panel; at an unaligned address it is packed: the products are bit-identical."""
    m, k = 61, 700
    rng = np.random.default_rng(9)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    outs = []
    for shift in (0, 1):
        raw = np.zeros(k * n + 16 + ALIGNMENT, np.float32)
        off = ((-raw.ctypes.data) % ALIGNMENT) // 4 + shift
        bb = raw[off:off + k * n]
        bb[:] = b.ravel()
        assert (bb.ctypes.data % ALIGNMENT == 0) == (shift == 0)
        c = np.zeros((m, n), np.float32)
        lib.aotc_sgemm(m, n, k, ffi.cast("float*", a.ctypes.data), k, 1, ffi.cast("float*", bb.ctypes.data), n, 1,
                       ffi.cast("float*", c.ctypes.data), n, ffi.from_buffer(aligned_scratch()))
        outs.append(c)
    np.testing.assert_allclose(outs[0], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert outs[0].tobytes() == outs[1].tobytes()


@pytest.mark.parametrize("n", [40, 64])
def test_short_row_tiles_give_the_bits_of_packed_a(gemm_rt, n):
    """Every remainder of M over the register tile's rows (1 to 27 rows: MR 4, 6 and 12
    leave each remainder with zero, one and two whole tiles) runs through the short
    tiles of aotc__tile_rows when A is read in place: the bits of A packed into whole
    tiles, with B in place (64 columns) or packed with a partial panel (40), over two
    K blocks."""
    k = 600
    rng = np.random.default_rng(21)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    for dtype, fn in ((np.float32, lib.aotc_sgemm), (np.float64, lib.aotc_dgemm)):
        ct = "float*" if dtype == np.float32 else "double*"
        b = rng.standard_normal((k, n)).astype(dtype)
        for m in range(1, 28):
            a = rng.standard_normal((m, k)).astype(dtype)
            at = np.ascontiguousarray(a.T)
            outs = []
            for buf, rs, cs in ((a, k, 1), (at, 1, m)):
                c = np.full((m, n + 3), np.nan, dtype)
                fn(m, n, k, ffi.cast(ct, buf.ctypes.data), rs, cs, ffi.cast(ct, b.ctypes.data), n, 1,
                   ffi.cast(ct, c.ctypes.data), n + 3, ffi.from_buffer(aligned_scratch()))
                outs.append(c)
            np.testing.assert_allclose(outs[0][:, :n], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
            assert np.isnan(outs[0][:, n:]).all(), m
            assert outs[0].tobytes() == outs[1].tobytes(), m


@pytest.mark.parametrize("mnk", [(128, 256, 256), (61, 64, 700), (7, 32, 300), (192, 96, 513), (13, 256, 1024),
                                 (2, 64, 40)])
def test_b_in_place_gives_the_bits_of_packed_b(gemm_rt, mnk):
    """A product with few rows and a row-major B of whole tiles reads B in place; the same
    B transposed in memory, or with rows 2 KB apart, is packed: bit-identical products."""
    m, n, k = mnk
    rng = np.random.default_rng(12)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    for dtype, fn in ((np.float32, lib.aotc_sgemm), (np.float64, lib.aotc_dgemm)):
        ct = "float*" if dtype == np.float32 else "double*"
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        wide = np.zeros((k, 2048 // np.dtype(dtype).itemsize), dtype)
        wide[:, :n] = b
        bt = np.ascontiguousarray(b.T)
        outs = []
        for buf, rs, cs in ((b, n, 1), (bt, 1, k), (wide, wide.shape[1], 1)):
            c = np.zeros((m, n), dtype)
            fn(m, n, k, ffi.cast(ct, a.ctypes.data), k, 1, ffi.cast(ct, buf.ctypes.data), rs, cs,
               ffi.cast(ct, c.ctypes.data), n, ffi.from_buffer(aligned_scratch()))
            outs.append(c)
        np.testing.assert_allclose(outs[0], a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
        assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()


def pack_panels_reference(b: np.ndarray) -> np.ndarray:
    """B [K, N] in the panel layout of aotc_gemm_panels.c, written out from its formula
    (element (k, n) at (n // 32) * K * 32 + k * 32 + n % 32), not with the compiler's
    packer, which tests/ops/test_dot_panels.py checks against this."""
    k, n = b.shape
    out = np.empty(k * n, b.dtype)
    kk, nn = np.meshgrid(np.arange(k), np.arange(n), indexing="ij")
    out[(nn // 32) * k * 32 + kk * 32 + nn % 32] = b
    return out


@pytest.mark.parametrize("mnk", [(1, 96, 300), (1, 32, 3), (2, 32, 7), (3, 64, 40), (4, 96, 513), (13, 256, 1024), (128, 1024, 256),
                                 (128, 256, 1024), (150, 160, 600), (300, 64, 96), (61, 128, 1200)])
def test_b_in_panels_gives_the_bits_of_row_major_b(gemm_rt, mnk):
    """aotc_sgemm_pb on B stored in panels: the bits of aotc_sgemm on the row-major B (every
    row count from one (the matrix-vector path) and the copied short rows to several row
    blocks, K over several KC blocks), on
    every SIMD path; every slice of aotc_sgemm_pb_part (columns cut in whole panels, rows in
    tiles) together: the same bits again; nothing written outside C."""
    m, n, k = mnk
    rng = np.random.default_rng(m * 7 + n + k)
    ffi, lib = gemm_rt.ffi, gemm_rt.lib
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bp = pack_panels_reference(b)
    fp = lambda x: ffi.cast("float*", x.ctypes.data)  # noqa: E731
    want = np.zeros((m, n), np.float32)
    lib.aotc_sgemm(m, n, k, fp(a), k, 1, fp(b), n, 1, fp(want), n, ffi.from_buffer(aligned_scratch()))
    np.testing.assert_allclose(want, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
    ldc = n + 5
    got = np.full((m, ldc), np.nan, np.float32)
    lib.aotc_sgemm_pb(m, n, k, fp(a), k, fp(bp), fp(got), ldc, ffi.from_buffer(aligned_scratch()))
    assert got[:, :n].tobytes() == want.tobytes()
    assert np.isnan(got[:, n:]).all()
    for parts in (2, 3, 4):
        sliced = np.full((m, ldc), np.nan, np.float32)
        for p in reversed(range(parts)):
            lib.aotc_sgemm_pb_part(p, parts, m, n, k, fp(a), k, fp(bp), fp(sliced), ldc,
                                   ffi.from_buffer(aligned_scratch()))
        assert sliced[:, :n].tobytes() == want.tobytes(), parts
        assert np.isnan(sliced[:, n:]).all()
