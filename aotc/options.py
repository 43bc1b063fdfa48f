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
    emit: tuple[str, ...] = ("o",)  # any of o, so, a (binaries) and d, pc (build-system files)
    weights: str = "bound"  # bound: the config's `bound` section freezes values in; fed: those parameters are
    # feeds; file: they are written to PREFIX.weights and loaded at run time (docs/weights.md)
    dump_after: tuple[str, ...] = ()  # pipeline stage names whose result is dumped
    dump_dir: str | None = None
    source_name: str | None = None  # file name shown in the generated banner
    shapes: tuple[tuple[str, int], ...] = ()  # sizes of symbolic dimensions (--shape b=1), sorted
    programs: tuple[str, ...] = ()  # C programs written beside the library: test (PREFIX_test.c), bench
    test_inputs: str | None = None  # .npz of argument values by name, embedded in PREFIX_test.c
    test_expected: str | None = None  # .npz of expected results by name (XLA's), embedded likewise
    test_rtol: float | None = None  # None: 1e-5 for 32/64-bit floats, 1e-2 for 16-bit ones
    test_atol: float | None = None  # None: 1e-6 for 32/64-bit floats, 1e-2 for 16-bit ones
    profile: bool = False  # time every kernel call of the run function (P_profile_* API)
    const_encoding: str = "auto"  # auto | incbin | string | array: how constants are written (docs/weights.md)
    custom_calls: tuple[str, ...] = ()  # custom-call targets the application implements in C (--custom-call and
    # the config's `custom_calls`, merged and sorted): each is an extern PREFIX_cc_<target> (docs/custom_calls.md)
    conv_algorithm: str = "direct"  # direct | winograd2 | winograd4: stride-1 3x3 f32 convolutions by Winograd
    # F(2x2,3x3) or F(4x4,3x3), which round differently from XLA (docs/winograd.md)
    stream_min_bytes: int = 16 << 20  # outputs this large or larger are written around the caches (non-temporal
    # vector stores, kernel/stream.py); 0: never
    sanitize: str | None = None  # run/bench: "address" (ASan+UBSan, any report aborts) or "thread" (TSan)
