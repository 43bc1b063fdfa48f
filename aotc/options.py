"""Every knob of a compilation, in one frozen dataclass the CLI (or the Python
API) fills. No stage reads the environment; `$CC` is read once, by the CLI and
`aotc.compile`, and passed in here as `cc`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompileOptions:
    target: str = "host"  # host | native | x86_64 | aarch64 | generic | a triple
    target_cpu: str | None = None  # e.g. "cortex-a76", "znver4" (-mcpu / -march)
    target_features: str | None = None  # e.g. "+avx2,+fma" or "+neon"
    cc: str | None = None  # explicit C compiler command (from --cc or $CC)
    cflags: tuple[str, ...] = ()  # extra flags for the C compiler
    opt_level: str = "-O3"  # gcc's -O2 does not vectorize the kernels' loops
    name: str | None = None  # C symbol prefix; default from config `name` or the -o basename
    elided_constants: str = "error"  # error | zeros | random
    bind_constants: str | None = None  # .npz of values for elided constants, by instruction name
    emit: tuple[str, ...] = ("o",)  # any of o, so, a
    dump_after: tuple[str, ...] = ()  # pipeline stage names whose result is dumped
    dump_dir: str | None = None
    source_name: str | None = None  # file name shown in the generated banner
    shapes: tuple[tuple[str, int], ...] = ()  # sizes of symbolic dimensions (--shape b=1), sorted
