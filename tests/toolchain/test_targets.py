"""Target names → triple, ISA flags (GCC/Clang and zig spellings), emulator."""
from __future__ import annotations

import dataclasses
import os

import pytest

from aotc.errors import AotcError
from aotc.toolchain.targets import Target, host_triple, known_targets, parse_features, resolve_target

HOST_ARCH = resolve_target("host").arch
OTHER = "aarch64" if HOST_ARCH != "aarch64" else "x86_64"  # an arch that is not this machine's


def test_host_is_this_machines_arch_alias():
    t = resolve_target("host")
    assert t.runs_on_host and t.emulator is None
    arch = t.arch
    alias = resolve_target(arch)  # x86_64 -> x86-64-v3, aarch64 -> NEON baseline
    assert (t.triple, t.simd_cflags) == (alias.triple, alias.simd_cflags)
    assert t.triple.split("-")[0] == host_triple().split("-")[0]
    assert resolve_target("") == t  # empty means host


def test_x86_64_alias_is_v3_and_triple_is_baseline():
    assert resolve_target("x86_64").simd_cflags == ("-march=x86-64-v3",)
    assert resolve_target("x86_64").triple == "x86_64-linux-gnu"
    assert resolve_target("x86_64-linux-gnu").simd_cflags == ()
    assert resolve_target("x86_64-pc-linux-gnu").triple == "x86_64-linux-gnu"


def test_x86_features_become_m_flags():
    t = resolve_target("x86_64-linux-gnu", target_features="+avx2,+fma,-avx512f")
    assert t.simd_cflags == ("-mavx2", "-mfma", "-mno-avx512f")
    t = resolve_target("x86_64", target_cpu="znver4", target_features="+sse4.2")
    assert t.simd_cflags == ("-march=znver4", "-msse4.2")
    assert t.flags_for("zig") == ("-mcpu=znver4+sse4_2",)


def test_aarch64_neon_baseline_and_features_on_march():
    for name in ("aarch64", "arm64", "aarch64-linux-gnu", "aarch64-unknown-linux-gnu"):
        t = resolve_target(name)
        assert (t.triple, t.arch, t.os, t.simd_cflags) == ("aarch64-linux-gnu", "aarch64", "linux", ())
    t = resolve_target("aarch64", target_features="+dotprod,-sve,+neon,+fullfp16")
    assert t.simd_cflags == ("-march=armv8-a+dotprod+nosve+simd+fp16",)
    assert t.flags_for("zig") == ("-mcpu=baseline+dotprod-sve+neon+fullfp16",)
    t = resolve_target("aarch64", target_cpu="cortex-a76", target_features="+dotprod")
    assert t.simd_cflags == ("-mcpu=cortex-a76+dotprod",)
    assert t.flags_for("zig") == ("-mcpu=cortex_a76+dotprod",)
    t = resolve_target("aarch64", target_cpu="armv8.2-a")
    assert t.simd_cflags == ("-march=armv8.2-a",)
    assert t.flags_for("zig") == ("-mcpu=generic+v8_2a",)


def test_generic_is_portable_c():
    t = resolve_target("generic")
    assert t.arch is None and t.triple == host_triple() and t.runs_on_host
    assert t.simd_cflags == ("-DAOTC_SIMD_SCALAR",)
    assert not any(f.startswith(("-march", "-mcpu")) for f in t.flags_for("zig"))
    with pytest.raises(AotcError, match="portable"):
        resolve_target("generic", target_cpu="znver4")
    with pytest.raises(AotcError, match="portable"):
        resolve_target("generic", target_features="+avx2")


def test_native():
    t = resolve_target("native")
    assert t.triple == host_triple() and t.runs_on_host
    if HOST_ARCH == "x86_64":
        assert t.simd_cflags == ("-march=native",)
    elif HOST_ARCH == "aarch64":
        assert t.simd_cflags == ("-mcpu=native",)
    assert t.flags_for("zig") == ("-mcpu=native",)
    with pytest.raises(AotcError, match="native"):
        resolve_target("native", target_cpu="znver4")


def test_arm_and_riscv():
    t = resolve_target("armv7-linux-gnueabihf")
    assert t.arch == "arm" and t.gnu_prefix == "arm-linux-gnueabihf"
    assert t.simd_cflags == ("-march=armv7-a", "-mfpu=vfpv3-d16", "-mfloat-abi=hard")
    assert "-mfpu=neon" in resolve_target("arm", target_features="+neon").simd_cflags
    with pytest.raises(AotcError, match="not supported for arm"):
        resolve_target("arm", target_features="+avx2")
    t = resolve_target("riscv64", target_features="+v,+zba")
    assert t.simd_cflags == ("-march=rv64gcv_zba", "-mabi=lp64d")
    if t.emulator:  # qemu-user's default RISC-V CPU has no V: the emulator turns it on
        assert t.emulator[:3] == ("qemu-riscv64", "-cpu", "rv64,v=true,vlen=128,zba=true")
    with pytest.raises(AotcError, match="only be added"):
        resolve_target("riscv64", target_features="-c")


def test_non_linux_triples():
    mac = resolve_target("aarch64-apple-darwin")
    assert (mac.arch, mac.os, mac.so_suffix, mac.zig_triple) == ("aarch64", "darwin", ".dylib",
                                                                   "aarch64-macos")
    android = resolve_target("aarch64-linux-android")
    assert android.os == "android" and android.so_suffix == ".so"
    if host_triple().endswith("linux-gnu"):
        assert not mac.runs_on_host and mac.emulator is None
        assert not android.runs_on_host and android.emulator is None


def test_foreign_linux_target_runs_under_qemu():
    t = resolve_target(OTHER)
    assert not t.runs_on_host
    assert t.emulator[0] == f"qemu-{OTHER}"
    sysroot = f"/usr/{t.gnu_prefix}"
    if os.path.isdir(sysroot):
        assert t.sysroot == sysroot and t.emulator[-2:] == ("-L", sysroot)


def test_unknown_target_lists_known_ones():
    with pytest.raises(AotcError) as e:
        resolve_target("mips-linux-gnu")
    msg = str(e.value)
    assert "unknown target 'mips-linux-gnu'" in msg
    for name in ("host", "native", "generic", "x86_64", "aarch64", "aarch64-linux-android",
                 "aarch64-apple-darwin", "armv7-linux-gnueabihf", "riscv64-linux-gnu"):
        assert name in msg and name in known_targets()


def test_feature_syntax():
    assert parse_features(" +AVX2, ,-fma ") == ("+avx2", "-fma")
    assert parse_features(None) == () and parse_features("") == ()
    with pytest.raises(AotcError, match=r"must be \+name or -name"):
        parse_features("avx2")
    with pytest.raises(AotcError, match="not a CPU name"):
        resolve_target("x86_64", target_cpu="znver4; rm -rf /")


def test_banner_is_one_line_naming_target_and_flags():
    b = resolve_target("aarch64", target_features="+dotprod").banner()
    assert "\n" not in b and "aarch64-linux-gnu" in b and "-march=armv8-a+dotprod" in b
    assert "AOTC_SIMD_SCALAR" in resolve_target("generic").banner()
    assert "baseline" in resolve_target("x86_64-linux-gnu").banner()


def test_target_is_plain_frozen_data():
    t = resolve_target("x86_64")
    assert t == resolve_target("x86_64") and hash(t) == hash(resolve_target("x86_64"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.triple = "x"  # type: ignore[misc]
    assert isinstance(t, Target)
