"""Compilation targets: what a target name means as a triple, an ISA choice,
compiler flags and, when the code cannot run on this machine, the emulator that
runs it. This module only describes targets; finding compilers is `cc.py`'s job,
invoking them `commands.py`'s, and nothing here runs a program.

Target names (`CompileOptions.target`):

- ``host`` (the default): this machine's architecture under its alias below --
  ``x86_64`` (x86-64-v3) on x86 hosts, ``aarch64`` on ARM hosts -- so the
  library runs on any current machine of the same kind.
- ``native``: this machine's exact CPU (``-march=native`` / ``-mcpu=native``).
- ``x86_64``: x86-64-v3 (AVX2, FMA, BMI2; Haswell and later, every current
  server); the full triple ``x86_64-linux-gnu`` is the SSE2 baseline instead.
- ``aarch64`` (alias ``arm64``): aarch64-linux-gnu; NEON is baseline there.
- ``arm`` (``armv7-linux-gnueabihf``): ARMv7-A hard-float, VFPv3-D16; NEON
  only with ``+neon``, because Debian's armhf baseline has none.
- ``riscv64`` (``riscv64-linux-gnu``): RV64GC, lp64d.
- ``x86_64-windows``: ``x86_64-windows-gnu`` (MinGW-w64 ABI, the one zig cc
  and ``x86_64-w64-mingw32-gcc`` build for) at x86-64-v3; the full triple is
  the SSE2 baseline.  Programs run here under wine.
- ``x86_64-fat``: one artifact for every x86-64 machine: the kernels are built three
  times, at the x86-64 baseline, x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512), and the
  model picks one at run time by CPUID (docs/portability.md, "Targets"). Its results are
  those of ``x86_64`` (fused multiply-adds where XLA:CPU fuses them) on every level.
- ``generic``: portable C for the host triple with no ``-march`` and no
  intrinsics (defines ``AOTC_SIMD_SCALAR``).
- the triples ``aarch64-linux-gnu``, ``aarch64-linux-android``,
  ``aarch64-apple-darwin``, ``x86_64-apple-darwin``, ``x86_64-linux-gnu``,
  ``armv7-linux-gnueabihf``, ``riscv64-linux-gnu``, ``x86_64-windows-gnu``.

``target_cpu`` becomes ``-march=`` on x86 and ``-mcpu=`` elsewhere (``-march=``
when it names an architecture such as ``armv8.2-a`` or ``rv64gcv``).
``target_features`` is tfcompile's spelling, ``+avx2,+fma,-avx512f``: on x86 it
becomes ``-mavx2 -mfma -mno-avx512f``; on AArch64 the features are appended to
``-march``/``-mcpu`` (``-march=armv8-a+dotprod+nosve``, LLVM names such as
``neon`` and ``fullfp16`` are mapped to GCC's ``simd`` and ``fp16``).
"""
from __future__ import annotations

import os
import platform
import re
import sys
from dataclasses import dataclass, replace

from ..errors import AotcError


@dataclass(frozen=True, slots=True)
class _TripleInfo:
    arch: str
    os: str
    gnu_prefix: str  # prefix of GNU cross tools: "<gnu_prefix>-gcc", "<gnu_prefix>-ar"
    clang_triple: str
    zig_triple: str
    qemu: str | None  # qemu-user binary for this arch (linux only); wine's for windows


_TRIPLES: dict[str, _TripleInfo] = {
    "x86_64-linux-gnu": _TripleInfo("x86_64", "linux", "x86_64-linux-gnu", "x86_64-linux-gnu",
                                    "x86_64-linux-gnu", "qemu-x86_64"),
    "aarch64-linux-gnu": _TripleInfo("aarch64", "linux", "aarch64-linux-gnu", "aarch64-linux-gnu",
                                     "aarch64-linux-gnu", "qemu-aarch64"),
    "aarch64-linux-android": _TripleInfo("aarch64", "android", "aarch64-linux-android",
                                         "aarch64-linux-android", "aarch64-linux-android", None),
    "aarch64-apple-darwin": _TripleInfo("aarch64", "darwin", "aarch64-apple-darwin",
                                        "aarch64-apple-darwin", "aarch64-macos", None),
    "x86_64-apple-darwin": _TripleInfo("x86_64", "darwin", "x86_64-apple-darwin",
                                       "x86_64-apple-darwin", "x86_64-macos", None),
    "armv7-linux-gnueabihf": _TripleInfo("arm", "linux", "arm-linux-gnueabihf",
                                         "armv7-linux-gnueabihf", "arm-linux-gnueabihf", "qemu-arm"),
    "riscv64-linux-gnu": _TripleInfo("riscv64", "linux", "riscv64-linux-gnu", "riscv64-linux-gnu",
                                     "riscv64-linux-gnu", "qemu-riscv64"),
    "x86_64-windows-gnu": _TripleInfo("x86_64", "windows", "x86_64-w64-mingw32",
                                      "x86_64-w64-windows-gnu", "x86_64-windows-gnu", "wine"),
}

# Short names: (triple, default cpu). The default cpu is what the name promises.
_ALIASES: dict[str, tuple[str, str | None]] = {
    "x86_64": ("x86_64-linux-gnu", "x86-64-v3"),
    "aarch64": ("aarch64-linux-gnu", None),
    "arm64": ("aarch64-linux-gnu", None),
    "arm": ("armv7-linux-gnueabihf", None),
    "riscv64": ("riscv64-linux-gnu", None),
    "x86_64-windows": ("x86_64-windows-gnu", "x86-64-v3"),
    "x86_64-w64-mingw32": ("x86_64-windows-gnu", None),
    "x86_64-fat": ("x86_64-linux-gnu", "x86-64"),
}

# Targets whose kernels are also built at further -march levels, chosen at run time: the
# level number the generated code calls each (AOTC_FAT_LEVEL) and its -march name.
FAT_LEVELS: dict[str, tuple[tuple[int, str], ...]] = {
    "x86_64-fat": ((3, "x86-64-v3"), (4, "x86-64-v4")),
}

_SPECIAL = ("host", "native", "generic")

# LLVM (tfcompile) AArch64 feature names whose GCC extension name differs.
_AARCH64_GCC_NAMES = {"neon": "simd", "fp-armv8": "fp", "fullfp16": "fp16"}
_AARCH64_ZIG_NAMES = {"simd": "neon", "fp": "fp_armv8", "fp16": "fullfp16"}
_ARM_FPUS = {"neon": "neon", "vfpv4": "vfpv4", "neon-vfpv4": "neon-vfpv4", "vfpv3": "vfpv3"}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_FEATURE_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def known_targets() -> tuple[str, ...]:
    """Every target name `resolve_target` accepts, in a stable order."""
    return _SPECIAL + tuple(_ALIASES) + tuple(_TRIPLES)


@dataclass(frozen=True, slots=True)
class Target:
    name: str  # the name the user asked for: "host", "aarch64", a triple
    triple: str  # canonical triple: "aarch64-linux-gnu"
    arch: str | None  # "x86_64" | "aarch64" | "arm" | "riscv64"; None for generic
    os: str  # "linux" | "android" | "darwin" | "windows"
    cpu: str | None  # -march/-mcpu value in GCC spelling; None = the compiler's baseline
    features: tuple[str, ...]  # normalised "+name" / "-name", in the order given
    simd_cflags: tuple[str, ...]  # ISA flags in GCC/Clang spelling (plus AOTC_SIMD_SCALAR)
    emulator: tuple[str, ...] | None  # command prefix that runs target programs here
    sysroot: str | None  # target libraries (Debian cross layout /usr/<prefix>), if present
    runs_on_host: bool  # programs built for it run directly on this machine
    fat_levels: tuple[tuple[int, str], ...] = ()  # further builds of the kernels (FAT_LEVELS)

    @property
    def machine_arch(self) -> str:
        """The architecture of the produced code (the host's for `generic`)."""
        return self.arch or _info(self.triple).arch

    @property
    def gnu_prefix(self) -> str:
        return _info(self.triple).gnu_prefix

    @property
    def clang_triple(self) -> str:
        return _info(self.triple).clang_triple

    @property
    def zig_triple(self) -> str:
        return _info(self.triple).zig_triple

    @property
    def so_suffix(self) -> str:
        return {"darwin": ".dylib", "windows": ".dll"}.get(self.os, ".so")

    @property
    def exe_suffix(self) -> str:
        return ".exe" if self.os == "windows" else ""

    def flags_for(self, kind: str) -> tuple[str, ...]:
        """The ISA flags in the spelling of compiler `kind` (gcc | clang | zig)."""
        if kind != "zig":
            return self.simd_cflags
        return _zig_flags(self)

    def banner(self) -> str:
        """One line for the generated header: what the code is built for."""
        if self.arch is None:
            return (f"target generic ({self.triple}): portable C, no SIMD intrinsics "
                    f"(AOTC_SIMD_SCALAR)")
        flags = " ".join(f for f in self.simd_cflags) or "baseline ISA"
        if self.fat_levels:
            flags += "; kernels also at " + ", ".join(f"{m} (level {n})" for n, m in self.fat_levels)
            flags += ", chosen at run time by CPUID"
        return f"target {self.name} ({self.triple}, {self.arch}): {flags}"


def host_triple() -> str:
    """This machine's triple in the table's spelling (best effort for unknown hosts)."""
    arch = _normalise_arch(platform.machine())
    if sys.platform == "darwin":
        return f"{arch}-apple-darwin"
    if arch == "arm":
        return "armv7-linux-gnueabihf"
    return f"{arch}-linux-gnu"


def resolve_target(name: str, target_cpu: str | None = None,
                   target_features: str | None = None) -> Target:
    """The `Target` for a target name plus the optional cpu and feature strings."""
    name = (name or "host").strip()
    features = parse_features(target_features)
    if target_cpu is not None:
        target_cpu = target_cpu.strip()
        if not _NAME_RE.match(target_cpu):
            raise AotcError(f"--target-cpu: '{target_cpu}' is not a CPU name")
    host = host_triple()
    if name == "generic":
        if target_cpu or features:
            raise AotcError("the generic target is portable C: it takes no --target-cpu "
                            "or --target-features")
        return _make(name, host, None, (), ("-DAOTC_SIMD_SCALAR",), generic=True)
    if name == "native":
        if target_cpu:
            raise AotcError("--target native already means this machine's CPU; "
                            "drop --target-cpu or use --target host")
        arch = _info(host).arch
        if arch == "riscv64":
            raise AotcError("--target native is not supported on riscv64; "
                            "name the CPU with --target host --target-cpu")
        return _make(name, host, "native", features, _isa_flags(arch, "native", features))
    if name == "host":
        triple, default_cpu = _ALIASES.get(_info(host).arch, (host, None))
        if triple != host and _info(triple).os != _info(host).os:
            triple, default_cpu = host, None
    elif name in _ALIASES:
        triple, default_cpu = _ALIASES[name]
    else:
        triple, default_cpu = _canonical_triple(name), None
    if name in FAT_LEVELS:
        if target_cpu or features:
            raise AotcError(f"--target {name} chooses its instruction sets at run time; it takes no "
                            f"--target-cpu or --target-features")
        if _info(host).arch != "x86_64":
            raise AotcError(f"--target {name} is built on an x86-64 machine (gcc or clang)")
    cpu = target_cpu or default_cpu
    arch = _info(triple).arch
    t = _make(name, triple, cpu, features, _isa_flags(arch, cpu, features))
    return replace(t, fat_levels=FAT_LEVELS.get(name, ()))


def parse_features(text: str | None) -> tuple[str, ...]:
    """`"+avx2, +fma,-avx512f"` → `("+avx2", "+fma", "-avx512f")` (validated)."""
    if not text:
        return ()
    out = []
    for item in text.split(","):
        item = item.strip().lower()
        if not item:
            continue
        if item[0] not in "+-" or not _FEATURE_RE.match(item[1:]):
            raise AotcError(f"--target-features: '{item}' must be +name or -name "
                            f"(for example +avx2,+fma,-avx512f)")
        out.append(item)
    return tuple(out)


def system_libs(target: Target) -> tuple[str, ...]:
    """Libraries a generated model links against (bionic has pthreads inside libc; on
    Windows the model uses Win32 threads, in kernel32, which every program links)."""
    return ("-lm",) if target.os in ("android", "windows") else ("-lm", "-lpthread")


def _make(name: str, triple: str, cpu: str | None, features: tuple[str, ...],
          flags: tuple[str, ...], generic: bool = False) -> Target:
    info = _info(triple)
    host = host_triple()
    runs_on_host = generic or (info.arch == _info(host).arch and info.os == _info(host).os)
    sysroot = f"/usr/{info.gnu_prefix}"
    sysroot = sysroot if info.os == "linux" and os.path.isdir(sysroot) else None
    emulator = None
    if info.os == "windows":  # wine runs x86-64 Windows programs on an x86-64 Linux
        if _info(host).arch == info.arch and _info(host).os == "linux":
            emulator = (info.qemu,)
    elif not runs_on_host and info.qemu is not None and _info(host).os == "linux":
        emulator = (info.qemu,) + _qemu_cpu_args(info.arch, features)
        if sysroot:
            emulator += ("-L", sysroot)
    return Target(name=name, triple=triple, arch=None if generic else info.arch, os=info.os,
                  cpu=cpu, features=features, simd_cflags=flags, emulator=emulator,
                  sysroot=sysroot, runs_on_host=runs_on_host)


def _info(triple: str) -> _TripleInfo:
    if triple in _TRIPLES:
        return _TRIPLES[triple]
    arch = _normalise_arch(triple.split("-")[0])  # an unlisted host: describe it anyway
    os_name = ("darwin" if "darwin" in triple else
               "windows" if "windows" in triple or "mingw" in triple else "linux")
    return _TripleInfo(arch, os_name, triple, triple, triple, None)


def _normalise_arch(machine: str) -> str:
    m = machine.lower()
    if m in ("amd64", "x86_64", "x64"):
        return "x86_64"
    if m in ("arm64", "aarch64"):
        return "aarch64"
    if m.startswith("arm"):
        return "arm"
    return m


def _canonical_triple(name: str) -> str:
    parts = name.split("-")
    if len(parts) == 4 and parts[1] in ("unknown", "pc", "none"):
        parts = [parts[0]] + parts[2:]  # x86_64-pc-linux-gnu → x86_64-linux-gnu
    if parts and parts[0] == "arm64":
        parts[0] = "aarch64"
    triple = "-".join(parts)
    if triple not in _TRIPLES:
        raise AotcError(f"unknown target '{name}'; known targets: {', '.join(known_targets())}")
    return triple


def _uses_march(arch: str, cpu: str) -> bool:
    """Whether `cpu` names an architecture level (-march) rather than a core (-mcpu)."""
    return arch == "x86_64" or cpu.startswith(("armv", "rv32", "rv64"))


def _isa_flags(arch: str, cpu: str | None, features: tuple[str, ...]) -> tuple[str, ...]:
    if arch == "x86_64":
        flags = [f"-march={cpu}"] if cpu else []
        flags += [f"-m{f[1:]}" if f[0] == "+" else f"-mno-{f[1:]}" for f in features]
        return tuple(flags)
    if arch == "aarch64":
        ext = "".join("+" + _AARCH64_GCC_NAMES.get(f[1:], f[1:]) if f[0] == "+"
                      else "+no" + _AARCH64_GCC_NAMES.get(f[1:], f[1:]) for f in features)
        if cpu is None and not ext:
            return ()
        base = cpu or "armv8-a"
        return (f"{'-march' if _uses_march(arch, base) else '-mcpu'}={base}{ext}",)
    if arch == "arm":
        fpu = "vfpv3-d16"
        for f in features:
            key = _AARCH64_GCC_NAMES.get(f[1:], f[1:])
            key = "neon" if key == "simd" else key
            if key not in _ARM_FPUS:
                raise AotcError(f"--target-features: '{f}' is not supported for arm; "
                                f"known: {', '.join('+' + k for k in _ARM_FPUS)}")
            fpu = _ARM_FPUS[key] if f[0] == "+" else "vfpv3-d16"
        base = cpu or "armv7-a"
        return (f"{'-march' if _uses_march(arch, base) else '-mcpu'}={base}", f"-mfpu={fpu}",
                "-mfloat-abi=hard")
    if arch == "riscv64":
        exts = ""
        for f in features:
            if f[0] == "-":
                raise AotcError(f"--target-features: '{f}': riscv64 extensions can only be added")
            exts += f[1:] if len(f) == 2 else "_" + f[1:]
        flags = []
        if cpu and not _uses_march(arch, cpu):
            flags.append(f"-mcpu={cpu}")
            if exts:
                flags.append(f"-march=rv64gc{exts}")
        else:
            flags.append(f"-march={(cpu or 'rv64gc')}{exts}")
        return tuple(flags) + ("-mabi=lp64d",)
    raise AotcError(f"no ISA flags known for architecture '{arch}'")


def _qemu_cpu_args(arch: str, features: tuple[str, ...]) -> tuple[str, ...]:
    """qemu-user's default RISC-V CPU lacks optional extensions; enable the asked ones."""
    if arch != "riscv64" or not features:
        return ()
    props = ["rv64"]
    for f in features:
        name = f[1:]
        props.append(f"{name}=true")
        if name == "v":
            props.append("vlen=128")
    return ("-cpu", ",".join(props))


def _zig_name(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")


def _zig_flags(t: Target) -> tuple[str, ...]:
    """zig cc takes one -mcpu=<cpu>+feat-feat with LLVM names spelled with '_'."""
    if t.arch is None:
        return t.simd_cflags
    cpu, feats = t.cpu, []
    arch = t.arch
    if arch == "aarch64":
        if cpu and cpu.startswith("armv"):
            m = re.match(r"armv(\d+)(?:\.(\d+))?-a", cpu)
            if m and m.group(2):
                feats.append(f"+v{m.group(1)}_{m.group(2)}a")
            cpu = "generic"
        for f in t.features:
            name = _AARCH64_GCC_NAMES.get(f[1:], f[1:])
            feats.append(f[0] + _AARCH64_ZIG_NAMES.get(name, _zig_name(name)))
    elif arch == "arm":
        cpu = None if cpu and cpu.startswith("armv") else cpu
        for f in t.features:
            feats.append(f[0] + _zig_name(f[1:]))
    elif arch == "riscv64":
        cpu = None if cpu and cpu.startswith("rv") else cpu
        feats = [f[0] + _zig_name(f[1:]) for f in t.features]
    else:
        feats = [f[0] + _zig_name(f[1:]) for f in t.features]
    if cpu is None and not feats:
        return ()
    base = "native" if cpu == "native" else (_zig_name(cpu) if cpu else "baseline")
    return (f"-mcpu={base}{''.join(feats)}",)
