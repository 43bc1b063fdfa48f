"""The C runtime embedded into every generated .c file.

Owns the list and order of the runtime sources (``RUNTIME_FILES``) and the text
that gets embedded (``runtime_source()``); the C files themselves live next to
this module and are compiled and tested on their own.  It knows nothing about
HLO or about the generated code around the embedded text.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent

# Concatenation order: each file only needs files before it.  Headers guard
# their #include of earlier files with the earlier file's include guard, so the
# concatenated text never reads a file from the include path.
RUNTIME_FILES: tuple[str, ...] = (
    "aotc_rt.h",  # linkage/inline macros, complex types, endianness, SIMD ISA
    "aotc_math.h",  # XLA scalar semantics, conversions, half types, FP env
    "aotc_gemm.h",  # sgemm/dgemm declarations and blocking parameters
    "aotc_gemm.c",  # packed GEMM and its micro-kernels
    "aotc_pool.h",  # thread pool API, plug-in pool type
    "aotc_pool.c",  # thread pool implementation
)

# Bytes of scratch one aotc_sgemm/aotc_dgemm call needs (AOTC_GEMM_SCRATCH_BYTES
# in aotc_gemm.h; the same on every ISA).  Tests check the two agree.
GEMM_SCRATCH_BYTES = 4 * 1024 * 1024

# Alignment (bytes) of GEMM scratch and arena buffers (AOTC_ALIGNMENT).
ALIGNMENT = 64


def gemm_scratch_bytes() -> int:
    """Scratch bytes of one aotc_sgemm/aotc_dgemm call (a fixed size)."""
    return GEMM_SCRATCH_BYTES


def runtime_path(name: str) -> Path:
    """Path of one runtime source file."""
    if name not in RUNTIME_FILES:
        raise KeyError(f"not a runtime file: {name}")
    return RUNTIME_DIR / name


@lru_cache(maxsize=None)
def runtime_source() -> str:
    """The whole runtime as one C text, in ``RUNTIME_FILES`` order.

    Embed it near the top of a generated file (it includes system headers).
    Everything in it is ``static``
    unless ``AOTC_RT_API`` is defined beforehand.
    """
    parts = []
    for name in RUNTIME_FILES:
        text = runtime_path(name).read_text(encoding="utf-8")
        parts.append(f"/* ==== aotc runtime: {name} ==== */\n{text.rstrip()}\n")
    return "\n".join(parts)
