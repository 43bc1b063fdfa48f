"""The C runtime embedded into every generated .c file.

Owns the list and order of the runtime sources (``RUNTIME_FILES``) and the text
that gets embedded (``runtime_source()``); the C files themselves live next to
this module and are compiled and tested on their own.  It knows nothing about
HLO or about the generated code around the embedded text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent

# Concatenation order: each file only needs files before it.  Headers guard
# their #include of earlier files with the earlier file's include guard, so the
# concatenated text never reads a file from the include path.
RUNTIME_FILES: tuple[str, ...] = (
    "aotc_rt.h",  # linkage/inline macros, complex types, endianness, SIMD ISA
    "aotc_math.h",  # XLA scalar semantics, conversions, half types, FP env
    "aotc_complex.h",  # complex exp, log, sin, cos, tanh, tan as XLA:CPU computes them
    "aotc_precision.h",  # reduce-precision on the bits, as XLA's emitter does
    "aotc_narrow.h",  # f8 and f4 types: decode, encode, XLA's per-op rounding
    "aotc_simd.h",  # f32 vocabulary of vectorized kernels (8 lanes, the widest), same bits as aotc_math.h
    "aotc_gemm.h",  # sgemm/dgemm declarations and blocking parameters
    "aotc_gemm.c",  # packed GEMM and its micro-kernels
    "aotc_gemm_panels.c",  # f32 GEMM whose B the compiler stored in panels (bound weights)
    "aotc_taps.h",  # convolution as one GEMM over window positions, no im2col (optional part "taps")
    "aotc_taps.c",  # its slice copy, weight packing and segment micro-kernel (optional part "taps")
    "aotc_winograd.h",  # Winograd 3x3 convolution declarations (optional part "winograd")
    "aotc_winograd.c",  # Winograd F(2x2,3x3) / F(4x4,3x3) over aotc_sgemm (optional part "winograd")
    "aotc_thread.h",  # threads, locks, atomics: POSIX or Win32; C11, C++ or MSVC atomics
    "aotc_pool.h",  # thread pool API, plug-in pool type
    "aotc_pool.c",  # thread pool implementation
    "aotc_fft.h",  # FFT declarations (fft op: FFT, IFFT, RFFT, IRFFT) and scratch sizes (optional part "fft")
    "aotc_fft_v8.c",  # the f32 FFT passes on 8-lane vectors, c64 gather/scatter by 8x8 transposes (part "fft")
    "aotc_fft.c",  # mixed-radix Stockham FFT, Bluestein for other lengths (optional part "fft")
    "aotc_linalg.h",  # linear algebra: scalar helpers per element type (optional part "linalg")
    "aotc_linalg.c",  # LU, Cholesky, triangular solve, QR, eigh, SVD (optional part "linalg")
    "aotc_laqr5_c.c",  # complex multishift QR sweep (optional part "linalg")
    "aotc_laqr_c.c",  # complex multishift QR with early deflation, n > 75 (optional part "linalg")
    "aotc_geev.c",  # general eigenproblem: Hessenberg, shifted QR, eigenvectors (optional part "linalg")
    "aotc_laqr5.c",  # real multishift QR sweep (optional part "linalg")
    "aotc_laqr_swap.c",  # reordering of a real Schur form for the early deflation (optional part "linalg")
    "aotc_laqr.c",  # real multishift QR with early deflation, n > 75 (optional part "linalg")
    "aotc_schur.c",  # real Schur form: Hessenberg, Francis double-shift QR (optional part "linalg")
    "aotc_lowp.h",  # bf16 and s8 GEMM declarations (optional part "lowp")
    "aotc_lowp.c",  # vdpbf16ps / vpdpbusd / sdot / vpmaddwd GEMMs and their portable paths (optional part "lowp")
    "aotc_transpose.h",  # strided 2-D transpose of 32-bit elements (optional part "transpose")
    "aotc_transpose.c",  # its 8 x 8 tiles (optional part "transpose")
)

# Optional parts: embedded only into a .c whose kernels call a function of the part (every
# such function's name starts with the part's prefix); the rest of the runtime is always there.
# Every optional part but "linalg" needs "vector" (VECTOR_PART) too.
OPTIONAL_PARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "fft": ("aotc_fft_", ("aotc_fft.h", "aotc_fft_v8.c", "aotc_fft.c")),
    "linalg": ("aotc_la_", ("aotc_linalg.h", "aotc_linalg.c", "aotc_laqr5_c.c", "aotc_laqr_c.c", "aotc_geev.c",
                          "aotc_laqr5.c", "aotc_laqr_swap.c", "aotc_laqr.c", "aotc_schur.c")),
    "winograd": ("aotc_wino_", ("aotc_winograd.h", "aotc_winograd.c")),
    "taps": ("aotc_taps_", ("aotc_taps.h", "aotc_taps.c")),
    "lowp": ("aotc_lp_", ("aotc_lowp.h", "aotc_lowp.c")),
    "transpose": ("aotc_tr_", ("aotc_transpose.h", "aotc_transpose.c")),
}

# The vector part: the SIMD vocabulary and the packed GEMM, with the compiler's intrinsics
# headers they need (<immintrin.h> alone is most of the time a C compiler takes over the file
# of a small model). Embedded into a .c whose kernels hold a vector loop, call a GEMM, a
# helper that converts or rounds to f16 (F16C instructions: every f16 helper, the f8 and f4
# types' per-op rounding and stores), or a function of an optional part built on it; without
# it the runtime is built with AOTC__NO_VECTOR_CODE defined and includes neither header (the
# f16 helpers would then take their portable code: the same bits, slower).
VECTOR_PART = "vector"
VECTOR_FILES = ("aotc_simd.h", "aotc_gemm.h", "aotc_gemm.c", "aotc_gemm_panels.c")
VECTOR_CALLS = ("aotc_sgemm", "aotc_dgemm", "aotc_gemm_", "aotc_round_f8", "aotc_round_f4", "aotc_store_f8",
                "aotc_store_f4")
_F16 = re.compile(r"(?<![a-z])f16")  # f16, not bf16
SCALAR_PARTS = frozenset({"linalg"})  # optional parts written in plain C, which need no vector part

# Bytes of scratch one aotc_sgemm/aotc_dgemm call needs (AOTC_GEMM_SCRATCH_BYTES
# in aotc_gemm.h; the same on every ISA).  Tests check the two agree.
GEMM_SCRATCH_BYTES = 4 * 1024 * 1024

# Alignment (bytes) of GEMM scratch and arena buffers (AOTC_ALIGNMENT).
ALIGNMENT = 64


# Register tile and cache blocks of every GEMM micro-kernel (aotc_gemm.h):
# (MR, NR, MC, KC, NC) per ISA, for f32 and f64.
_GEMM_BLOCKING = {
    4: [(12, 32, 144, 512, 128), (6, 16, 72, 512, 128), (12, 8, 144, 512, 128), (4, 16, 48, 512, 128)],
    8: [(12, 16, 96, 256, 128), (6, 8, 48, 256, 128), (12, 4, 96, 256, 128), (4, 8, 32, 256, 128)],
}


def gemm_scratch_bytes(m: int | None = None, n: int | None = None, k: int | None = None,
                       elem_bytes: int = 4, a_rows: bool = False) -> int:
    """Scratch bytes one aotc_sgemm (elem_bytes 4) / aotc_dgemm (8) call of size M x N x K
    uses on any ISA (aotc_[sd]gemm_scratch_need, maximized over the micro-kernels);
    without sizes, the fixed upper bound AOTC_GEMM_SCRATCH_BYTES. `a_rows`: A is row-major
    (column stride 1), read in place but for one partial panel of MR rows."""
    if m is None or n is None or k is None:
        return GEMM_SCRATCH_BYTES
    return max(_scratch_one(m, n, k, elem_bytes, a_rows, blk) for blk in _GEMM_BLOCKING[elem_bytes])


def gemm_part_scratch_bytes(m: int, n: int, k: int, parts: int, elem_bytes: int = 4,
                            a_rows: bool = False) -> int:
    """Scratch bytes of one of the `parts` slices aotc_[sd]gemm_part cuts an M x N x K
    product into, on any ISA: the longer of M and N in ranges of whole MR or NR tiles (a
    slice of N columns packs only its columns of B). aotc_[sd]gemm_threads may run the
    slices fewer at a time, d of them as one slice in the scratch of d (a pool of
    parts / d threads), or the whole product in the scratch of all `parts` (no pool): a
    larger slice can need more than d times a small one (a slice of at most
    GEMM_PANEL_B_MAX_M rows packs one B panel, a larger one a whole B block), so each of
    those is covered too."""
    if parts <= 1:
        return gemm_scratch_bytes(m, n, k, elem_bytes, a_rows)
    need = 0
    for d in range(1, parts + 1):
        if parts % d:
            continue
        q = parts // d  # slices the product is cut into when d of them run as one
        for mr, nr, mc, kc, nc in _GEMM_BLOCKING[elem_bytes]:
            split_n = m < n
            size, tile = (n, nr) if split_n else (m, mr)
            part = -(-(-(-size // tile)) // q) * tile
            sm, sn = (m, min(n, part)) if split_n else (min(m, part), n)
            one = _scratch_one(sm, sn, k, elem_bytes, a_rows, (mr, nr, mc, kc, nc))
            need = max(need, (-(-one // d) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT)
    return need


# columns of the panels a constant B of aotc_sgemm_pb is stored in (AOTC_GEMM_PANEL)
GEMM_PANEL = 32

# a row-major A of at most this many rows is one block, and B is packed a panel at a time
# (AOTC_GEMM_DIRECT_B_MAX_M in aotc_gemm.c)
GEMM_PANEL_B_MAX_M = 192


def _scratch_one(m: int, n: int, k: int, elem_bytes: int, a_rows: bool, blocking) -> int:
    mr, nr, mc, kc, nc = blocking
    kk = max(0, min(k, kc))
    rows = min(m, mr) if a_rows else min(m, mc)
    a = (-(-max(0, rows) // mr) * mr * kk + 15) // 16 * 16
    b = -(-max(0, min(n, nc)) // nr) * nr * kk
    if a_rows and m <= GEMM_PANEL_B_MAX_M:
        b = min(b, nr * kk)
    panels = (a + b) * elem_bytes
    vec = k * elem_bytes if 0 < k * elem_bytes <= GEMM_SCRATCH_BYTES else 0
    return (max(panels, vec) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


# ---- reduced-precision GEMM scratch (aotc_lp_[bi]gemm_scratch_need in aotc_lowp.c)

LP_MR, LP_NR = 12, 32  # AOTC_LP_MR, AOTC_LP_NR
LP_PAIR_MR, LP_PAIR_NR = 6, 16  # AOTC__LPI_PAIR_MR, AOTC__LPI_PAIR_NR (the s8 path on s16 pairs)


def _lp_packed(rows: int, tile: int, k: int, group: int) -> int:
    return (-(-rows // tile) * tile * -(-k // group) * 4 + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def lp_bgemm_scratch_bytes(m: int, n: int, k: int, parts: int, part_scratch: int) -> int:
    """aotc_lp_bgemm_scratch_need: packed pairs (AVX512_BF16) or f32 copies and sgemm slices."""
    up = lambda b: (b + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT  # noqa: E731
    packed = _lp_packed(m, LP_MR, k, 2) + _lp_packed(n, LP_NR, k, 2)
    wide = up(m * k * 4) + up(k * n * 4) + max(parts, 1) * part_scratch
    return max(packed, wide)


def lp_igemm_scratch_bytes(m: int, n: int, k: int) -> int:
    """aotc_lp_igemm_scratch_need: packed quads or s16 pairs of A and B (and B's column
    corrections), the larger of the two layouts."""
    quads = _lp_packed(m, LP_MR, k, 4) + _lp_packed(n, LP_NR, k + 4, 4)
    pairs = _lp_packed(m, LP_PAIR_MR, k, 2) + _lp_packed(n, LP_PAIR_NR, k + 2, 2)
    return max(quads, pairs)


def runtime_path(name: str) -> Path:
    """Path of one runtime source file."""
    if name not in RUNTIME_FILES:
        raise KeyError(f"not a runtime file: {name}")
    return RUNTIME_DIR / name


def parts_called(names, vector_loops: bool = True) -> frozenset[str]:
    """The optional parts whose functions are among the called function `names`, with the
    vector part when there are `vector_loops`, a call that needs it or a part that does."""
    names = tuple(names)
    parts = {part for part, (prefix, _) in OPTIONAL_PARTS.items() if any(n.startswith(prefix) for n in names)}
    if vector_loops or parts - SCALAR_PARTS or any(n.startswith(VECTOR_CALLS) or _F16.search(n) for n in names):
        parts.add(VECTOR_PART)
    return frozenset(parts)


@lru_cache(maxsize=None)
def runtime_source(parts: frozenset[str] | None = None) -> str:
    """The runtime as one C text, in ``RUNTIME_FILES`` order: the core and the optional
    `parts` (every part when None: the runtime tested on its own).

    Embed it near the top of a generated file (it includes system headers).
    Everything in it is ``static``
    unless ``AOTC_RT_API`` is defined beforehand.
    """
    left_out = {f for part, (_, files) in OPTIONAL_PARTS.items() if parts is not None and part not in parts
                for f in files}
    parts_text = []
    if parts is not None and VECTOR_PART not in parts:
        left_out.update(VECTOR_FILES)
        parts_text.append("/* no kernel of this file holds vector code: the runtime without its vector part */\n"
                          "#define AOTC__NO_VECTOR_CODE 1\n")
    for name in RUNTIME_FILES:
        if name in left_out:
            continue
        text = runtime_path(name).read_text(encoding="utf-8")
        parts_text.append(f"/* ==== aotc runtime: {name} ==== */\n{text.rstrip()}\n")
    return "\n".join(parts_text)


# ---- FFT scratch (aotc_fft_scratch_need in aotc_fft.c; tests check the two agree)

FFT_LANES = 8  # AOTC_FFT_LANES: lines transformed side by side
FFT_SLACK = 8192  # AOTC__FFT_SLACK: bytes after each work buffer for its planes' offsets
FFT_KINDS = {"FFT": 0, "IFFT": 1, "RFFT": 2, "IRFFT": 3}  # AOTC_FFT_FFT ...


def _up64(b: int) -> int:
    return (b + 63) // 64 * 64


def _smooth(n: int) -> bool:
    if n < 1:
        return False
    for p in (2, 3, 5):
        while n % p == 0:
            n //= p
    return n == 1


def fft_core_len(n: int) -> int:
    """The Stockham length of a length-n transform: n, or Bluestein's 5-smooth m >= 2n-1."""
    if n <= 1 or _smooth(n):
        return n
    m = 2 * n - 1
    while not _smooth(m):
        m += 1
    return m


def fft_scratch_bytes(kind: str, batch: int, lengths: tuple[int, int, int], parts: int = 1) -> int:
    """Scratch bytes one aotc_fft_c64/aotc_fft_c128 call of `batch` transforms of fft_length
    `lengths` (three, leading ones 1) needs: the IRFFT intermediate, each transformed
    axis's tables (twiddles; Bluestein's chirp and its transform), three work buffers
    (each with FFT_SLACK bytes for its planes' offsets); `parts` sets of work buffers for
    aotc_fft_c64_threads (aotc_fft_threads_scratch_need)."""
    n0, n1, n2 = lengths
    if batch <= 0 or min(lengths) <= 0:
        return 0
    total = 0
    if kind == "IRFFT" and (n0 > 1 or n1 > 1):
        total += _up64(batch * n0 * n1 * (n2 // 2 + 1) * 16)
    used = [n for d, n in enumerate(lengths) if n > 1 or d == 2]
    for n in used:
        core = fft_core_len(n)
        # twiddles in f64 and f32; Bluestein's chirp and its transform in f64
        total += _up64(core * 16) + _up64(core * 8) + (_up64(n * 16) + _up64(core * 16) if core != n else 0)
    work = _up64(max(used) * 16 * FFT_LANES) + FFT_SLACK
    work += 2 * (_up64(max(fft_core_len(n) for n in used) * 16 * FFT_LANES) + FFT_SLACK)
    return total + max(1, parts) * work
