"""What a target's instruction set decides about results, known before any C is written:
whether it has fused multiply-add. XLA:CPU lets LLVM fuse `a*b + c` into one FMA wherever
the machine has the instruction, so aotc fuses the same products on such targets
(kernel/contract.py) and rounds them apart elsewhere."""
from __future__ import annotations

from .targets import Target

# x86 -march names with FMA3 (GCC spelling); the x86-64-v3/v4 levels include it
_X86_FMA = frozenset("""x86-64-v3 x86-64-v4 haswell broadwell skylake skylake-avx512 cascadelake cooperlake
cannonlake icelake-client icelake-server tigerlake rocketlake alderlake raptorlake meteorlake arrowlake
arrowlake-s lunarlake pantherlake gracemont sapphirerapids emeraldrapids graniterapids graniterapids-d
diamondrapids sierraforest grandridge clearwaterforest knl knm bdver2 bdver3 bdver4 znver1 znver2 znver3
znver4 znver5""".split())


def has_fma(target: Target) -> bool:
    if target.arch is None:  # generic: portable C, whatever the machine
        return False
    if target.arch in ("aarch64", "riscv64"):  # in the base ISA (RV64GC: F and D)
        return True
    if target.arch == "arm":
        return any(f.startswith("-mfpu=") and "vfpv4" in f for f in target.simd_cflags)
    if target.arch != "x86_64":
        return False
    if target.fat_levels:  # every level computes x86_64's (v3's) results; the baseline calls fmaf
        return True
    if "-fma" in target.features:
        return False
    if "+fma" in target.features:
        return True
    if target.cpu == "native":
        return _host_has_fma()
    return target.cpu in _X86_FMA


def _host_has_fma() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return "fma" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False
