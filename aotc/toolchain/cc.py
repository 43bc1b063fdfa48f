"""C toolchain discovery for a `Target`.

Finds a compiler that can really build and link for the target (it compiles and
links a probe program and checks the machine type of what came out) and
describes it as a `Toolchain`. Running compile / link / archive steps with it is
`commands.py`'s job; it does not decide which flags a model needs (`build.py`
and `runner.py` do).

A compiler the user names (`--cc`, or `cc` in the Python API) is used, or it is
an error saying why: it is never silently replaced. Otherwise the discovery
order is: $CC (used only when it builds for the target, checked with
`-dumpmachine` — a Clang is pointed at the target with `--target=`), `<triple>-gcc` (and plain `gcc`/`cc` for host targets), an
Android NDK `<triple><api>-clang`, `clang --target=<triple>` (retried with
`-fuse-ld=lld`), and `python -m ziglang cc -target <zig triple>` (the optional
`ziglang` pip package). Probe results are cached for the life of the process.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from ..errors import AotcError, ToolchainError
from .targets import Target, system_libs

PROBE_TIMEOUT_S = 600  # zig builds the target's libc on first use (tens of seconds)

_PROBE_SOURCE = """\
#include <math.h>
#include <pthread.h>
#include <stdio.h>
static void *work(void *p) { *(double *)p = sqrt(*(double *)p); return p; }
int main(void) {
  double x = 2.0;
  pthread_t t;
  if (pthread_create(&t, NULL, work, &x) != 0) return 1;
  pthread_join(t, NULL);
  printf("%g\\n", x);
  return 0;
}
"""

# Windows programs of the model use Win32 threads (aotc_thread.h), not pthreads.
_PROBE_SOURCE_WINDOWS = """\
#include <math.h>
#include <stdio.h>
#include <windows.h>
static DWORD WINAPI work(LPVOID p) { *(double *)p = sqrt(*(double *)p); return 0; }
int main(void) {
  double x = 2.0;
  HANDLE t = CreateThread(NULL, 0, work, &x, 0, NULL);
  if (t == NULL) return 1;
  WaitForSingleObject(t, INFINITE);
  CloseHandle(t);
  printf("%g\\n", x);
  return 0;
}
"""


@dataclass(frozen=True, slots=True)
class Toolchain:
    argv: tuple[str, ...]  # compiler command prefix, e.g. ("clang", "--target=aarch64-linux-gnu")
    kind: str  # "gcc" | "clang" | "zig"
    target: Target
    flags: tuple[str, ...]  # the target's ISA flags in this compiler's spelling
    link_flags: tuple[str, ...]  # extra flags for link steps only (e.g. -fuse-ld=lld)
    ar: tuple[str, ...]  # archiver command prefix
    found_by: str  # how discovery found it, for messages
    skipped: tuple[str, ...] = ()  # candidates tried before it: "what: why"

    def describe(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True, slots=True)
class _Candidate:
    label: str
    argv: tuple[str, ...]
    kind: str
    found_by: str
    check_machine: bool = False  # ask -dumpmachine before probing (the caller's cc)


_probe_cache: dict[tuple, str | None] = {}  # (argv, flags, link_flags, triple, PATH) -> failure
_found_cache: dict[tuple, Toolchain] = {}


def clear_cache() -> None:
    """Forget every probe result (tests that change PATH call this)."""
    _probe_cache.clear()
    _found_cache.clear()


def zig_cc_argv() -> tuple[str, ...] | None:
    """`python -m ziglang cc` when the ziglang package is installed, else None."""
    if importlib.util.find_spec("ziglang") is None:
        return None
    return (sys.executable, "-m", "ziglang", "cc")


def find_toolchain(target: Target, cc: str | None = None) -> Toolchain:
    """The first working compiler for `target` in discovery order (see module doc)."""
    key = (target, cc, os.environ.get("PATH", ""), os.environ.get("CC", ""))
    if key in _found_cache:
        return _found_cache[key]
    if cc:  # named by the user: that compiler or an error, never another one
        argv = tuple(shlex.split(cc))
        if not argv:
            raise AotcError("--cc: empty compiler command")
        tc, why = _try_candidate(_Candidate(f"--cc '{cc}'", argv, _kind_of(argv), "--cc", check_machine=True),
                                 target)
        if tc is None:
            raise ToolchainError(f"--cc '{cc}' cannot build for {target.triple}: {why}")
        _found_cache[key] = tc
        return tc
    tried: list[str] = []
    for cand in _candidates(target, cc, tried):
        tc, why = _try_candidate(cand, target)
        if tc is not None:
            tc = replace(tc, skipped=tuple(tried))
            _found_cache[key] = tc
            return tc
        tried.append(f"{cand.label}: {why}")
    raise ToolchainError(_not_found_message(target, tried))


def static_variant(tc: Toolchain) -> Toolchain:
    """A toolchain able to link fully static programs: zig switches glibc for musl
    (zig cannot link glibc statically); gcc and clang are returned unchanged."""
    if tc.kind != "zig" or "-target" not in tc.argv or tc.target.os == "windows":
        return tc  # MinGW-w64 links its C runtime statically as it is
    i = tc.argv.index("-target") + 1
    musl = tc.argv[i].replace("-gnueabihf", "-musleabihf").replace("-gnu", "-musl")
    return replace(tc, argv=tc.argv[:i] + (musl,) + tc.argv[i + 1:])


# ----------------------------------------------------------------------------- discovery

def _candidates(target: Target, cc: str | None, tried: list[str]) -> Iterable[_Candidate]:
    env_cc = os.environ.get("CC", "")
    if not cc and shlex.split(env_cc):  # $CC, when it builds for the target
        yield _Candidate(f"cc '{env_cc}' (from $CC)", tuple(shlex.split(env_cc)), _kind_of(tuple(shlex.split(env_cc))),
                         "$CC", check_machine=True)
    prefix = target.gnu_prefix
    yield _Candidate(f"{prefix}-gcc", (f"{prefix}-gcc",), "gcc", "PATH")
    if target.runs_on_host:
        yield _Candidate("gcc", ("gcc",), "gcc", "PATH")
        yield _Candidate("cc", ("cc",), _kind_of(("cc",)), "PATH")
    if target.os == "android":
        ndk = _ndk_clangs(target.clang_triple)
        if ndk:
            yield _Candidate(ndk[0], (ndk[0],), "clang", "PATH (Android NDK)")
        else:
            tried.append(f"{target.clang_triple}<api>-clang: no Android NDK clang on PATH")
    clang = ("clang", f"--target={target.clang_triple}")
    yield _Candidate(shlex.join(clang), clang, "clang", "clang --target")
    zig = zig_cc_argv()
    zig_label = f"zig cc -target {target.zig_triple}"
    if zig is None:
        tried.append(f"{zig_label}: the ziglang package is not installed")
    else:
        yield _Candidate(zig_label, zig + ("-target", target.zig_triple), "zig", "ziglang")


def _try_candidate(cand: _Candidate, target: Target) -> tuple[Toolchain | None, str]:
    argv = cand.argv
    if _which(argv[0]) is None:
        return None, "not found on PATH"
    if cand.kind == "zig" and "-target" not in argv:
        argv = argv + ("-target", target.zig_triple)
    elif cand.check_machine:
        machine = _dumpmachine(argv)
        if machine is None:
            return None, "does not answer -dumpmachine"
        if not _machine_matches(machine, target):
            if cand.kind != "clang":
                return None, f"builds for {machine}, not {target.triple}"
            argv = argv + (f"--target={target.clang_triple}",)
    flags = target.flags_for(cand.kind)
    why = _probe(argv, flags, (), target)
    link_flags: tuple[str, ...] = ()
    if why is not None and cand.kind == "clang" and _which("ld.lld"):
        if _probe(argv, flags, ("-fuse-ld=lld",), target) is None:
            why, link_flags = None, ("-fuse-ld=lld",)
    if why is not None:
        return None, why
    tc = Toolchain(argv=argv, kind=cand.kind, target=target, flags=flags, link_flags=link_flags,
                   ar=_archiver(argv, cand.kind, target), found_by=cand.found_by)
    return tc, ""


def _probe(argv: tuple[str, ...], flags: tuple[str, ...], link_flags: tuple[str, ...],
           target: Target) -> str | None:
    """None when `argv` compiles and links a threaded libm program for `target`,
    else why not (one short line)."""
    key = (argv, flags, link_flags, target.triple, target.machine_arch,
           os.environ.get("PATH", ""))
    if key in _probe_cache:
        return _probe_cache[key]
    with tempfile.TemporaryDirectory(prefix="aotc-probe-") as d:
        src, exe = Path(d) / "probe.c", Path(d) / "probe"
        src.write_text(_PROBE_SOURCE_WINDOWS if target.os == "windows" else _PROBE_SOURCE)
        cmd = [*argv, *flags, str(src), "-o", str(exe), *link_flags, *system_libs(target)]
        why = None
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  errors="replace", timeout=PROBE_TIMEOUT_S, cwd=d)
            if proc.returncode != 0:
                why = f"cannot build a test program: {_first_error(proc.stdout)}"
            else:
                arch = binary_arch(exe)
                if arch is not None and arch != target.machine_arch:
                    why = f"produced {arch} code, not {target.machine_arch}"
        except FileNotFoundError:
            why = "not found on PATH"
        except subprocess.TimeoutExpired:
            why = f"test build timed out after {PROBE_TIMEOUT_S} s"
        except OSError as e:
            why = f"cannot run: {e}"
    _probe_cache[key] = why
    return why


def _first_error(output: str) -> str:
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower() or "cannot find" in ln or "not found" in ln:
            return ln[:300]
    return (lines[0][:300] if lines else "exit status non-zero, no output")


def _dumpmachine(argv: tuple[str, ...]) -> str | None:
    try:
        proc = subprocess.run([*argv, "-dumpmachine"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.strip().splitlines()
    return out[0].strip() if proc.returncode == 0 and out else None


def _machine_matches(machine: str, target: Target) -> bool:
    parts = machine.lower().split("-")
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(parts[0], parts[0])
    if arch.startswith("arm") and arch != "arm64":
        arch = "arm"
    if "android" in machine:
        os_name = "android"
    elif "mingw" in machine or "windows" in machine:
        os_name = "windows"
    elif "darwin" in machine or "apple" in machine or "macos" in machine:
        os_name = "darwin"
    else:
        os_name = "linux"
    return arch == target.machine_arch and os_name == target.os


def _kind_of(argv: tuple[str, ...]) -> str:
    names = [os.path.basename(a) for a in argv]
    if "ziglang" in argv or any(n == "zig" or n.startswith("zig.") for n in names):
        return "zig"
    try:
        proc = subprocess.run([*argv, "--version"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace", timeout=60)
        text = proc.stdout.lower()
    except (OSError, subprocess.TimeoutExpired):
        text = ""
    return "clang" if "clang" in text else "gcc"


def _which(cmd: str) -> str | None:
    if os.sep in cmd:
        return cmd if os.access(cmd, os.X_OK) else None
    return shutil.which(cmd)


def _ndk_clangs(clang_triple: str) -> list[str]:
    """Android NDK compiler drivers on PATH, newest API level first."""
    found = set()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        for p in glob.glob(os.path.join(d, f"{clang_triple}[0-9]*-clang")):
            found.add(os.path.basename(p))

    def api(name: str) -> int:
        digits = name[len(clang_triple):].split("-")[0]
        return int(digits) if digits.isdigit() else 0
    return sorted(found, key=api, reverse=True)


def _archiver(argv: tuple[str, ...], kind: str, target: Target) -> tuple[str, ...]:
    if kind == "zig":
        cut = argv.index("cc") if "cc" in argv else len(argv)
        return argv[:cut] + ("ar",)
    options: list[str] = []
    base = os.path.basename(argv[0])
    if kind == "gcc" and base.endswith("gcc"):
        options.append(os.path.join(os.path.dirname(argv[0]), base[:-3] + "ar"))
    if kind == "clang":
        options.append("llvm-ar")
        if base.startswith("clang-"):
            options.append("llvm-ar-" + base[len("clang-"):])
    options += [f"{target.gnu_prefix}-ar", "ar"]
    for opt in options:
        if _which(opt) if os.sep in opt else shutil.which(opt):
            return (opt,)
    return ("ar",)


def binary_arch(path: str | os.PathLike) -> str | None:
    """The machine of an ELF, Mach-O or PE file ("x86_64", "aarch64", ...), None if unknown."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
            if head[:2] == b"MZ" and len(head) >= 2:  # PE: the COFF header follows "PE\0\0"
                f.seek(0x3C)
                f.seek(int.from_bytes(f.read(4), "little"))
                pe = f.read(6)
                if pe[:4] != b"PE\0\0":
                    return None
                return {0x8664: "x86_64", 0xAA64: "aarch64", 0x14C: "i386"}.get(
                    int.from_bytes(pe[4:6], "little"))
    except OSError:
        return None
    if head[:4] == b"\x7fELF" and len(head) >= 20:
        order = "little" if head[5] == 1 else "big"
        machine = int.from_bytes(head[18:20], order)
        return {62: "x86_64", 183: "aarch64", 40: "arm", 243: "riscv64", 3: "i386"}.get(machine)
    if head[:4] == b"\xcf\xfa\xed\xfe" and len(head) >= 8:
        cpu = int.from_bytes(head[4:8], "little")
        return {0x01000007: "x86_64", 0x0100000C: "aarch64"}.get(cpu)
    return None


def _not_found_message(target: Target, tried: list[str]) -> str:
    lines = [f"no working C compiler for target {target.name} ({target.triple}). Tried:"]
    lines += [f"  - {t}" for t in tried]
    lines.append("Install one, for example:")
    if target.os == "linux":
        if target.runs_on_host:
            lines.append("  apt-get install gcc            (Debian/Ubuntu; or clang)")
        else:
            lines.append(f"  apt-get install gcc-{target.gnu_prefix}   (Debian/Ubuntu cross gcc)")
        lines.append("  pip install ziglang            (zig cc: cross-compiles to any Linux)")
    elif target.os == "android":
        lines.append("  the Android NDK, with toolchains/llvm/prebuilt/<host>/bin on PATH")
    elif target.os == "darwin":
        lines.append("  pip install ziglang            (zig cc ships the macOS headers)")
    elif target.os == "windows":
        lines.append("  pip install ziglang            (zig cc ships MinGW-w64)")
        lines.append("  apt-get install gcc-mingw-w64-x86-64   (Debian/Ubuntu)")
        lines.append("  or build on macOS with Xcode's clang")
    lines.append(f"or pass --cc (or set CC to) a compiler for {target.triple}.")
    return "\n".join(lines)
