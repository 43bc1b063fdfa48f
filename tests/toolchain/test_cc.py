"""Compiler discovery (order, -dumpmachine and machine checks, the error when
nothing works), compile/link/archive steps, build_outputs and the build cache.
Fake compilers are shell scripts in a temporary directory put on PATH."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from aotc.errors import AotcError, ToolchainError
from aotc.options import CompileOptions
from aotc.toolchain import cc, commands
from aotc.toolchain.build import build_outputs, cache_dir, cached_build
from aotc.toolchain.targets import resolve_target

from . import TINY_C, have_tools, zig_works

HOST = resolve_target("host")
OTHER = resolve_target("aarch64" if HOST.arch != "aarch64" else "x86_64")
REAL_PATH = os.environ.get("PATH", "")
REAL_GCC = shutil.which("gcc")

needs_gcc = pytest.mark.skipif(REAL_GCC is None, reason="no host gcc")


@pytest.fixture(autouse=True)
def fresh_probe_cache():
    cc.clear_cache()
    yield
    cc.clear_cache()


def fake(bindir, name: str, body: str) -> str:
    """A shell script `name` in `bindir`; its log of calls is bindir/name.log."""
    path = os.path.join(bindir, name)
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\necho \"$@\" >> '{path}.log'\n{body}\n")
    os.chmod(path, 0o755)
    return path


def wrapper(bindir, name: str, real: str) -> str:
    """A fake that runs a real compiler with the real PATH (for as/ld)."""
    return fake(bindir, name, f'PATH="{REAL_PATH}" exec "{real}" "$@"')


def broken(bindir, name: str) -> str:
    return fake(bindir, name, 'echo "fake compiler failure" >&2\nexit 1')


def calls(path: str) -> int:
    try:
        with open(path + ".log") as f:
            return len(f.readlines())
    except OSError:
        return 0


@pytest.fixture
def only_bin(tmp_path, monkeypatch):
    """PATH holds only a fresh directory of fakes; zig is hidden."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(cc, "zig_cc_argv", lambda: None)
    return str(bindir)


@needs_gcc
def test_triple_gcc_on_path_is_found_first(only_bin):
    gcc = wrapper(only_bin, f"{HOST.gnu_prefix}-gcc", REAL_GCC)
    wrapper(only_bin, "gcc", REAL_GCC)
    tc = cc.find_toolchain(HOST)
    assert tc.argv == (f"{HOST.gnu_prefix}-gcc",) and tc.kind == "gcc" and tc.found_by == "PATH"
    assert calls(gcc) == 1  # one probe build
    assert cc.find_toolchain(HOST) is tc and calls(gcc) == 1  # cached for the process


@needs_gcc
def test_explicit_cc_comes_first(only_bin):
    wrapper(only_bin, f"{HOST.gnu_prefix}-gcc", REAL_GCC)
    mine = wrapper(only_bin, "mycc", REAL_GCC)
    tc = cc.find_toolchain(HOST, cc=mine)
    assert tc.argv == (mine,) and tc.found_by == "--cc"
    assert calls(mine) >= 2  # -dumpmachine, then the probe


@needs_gcc
def test_a_named_compiler_that_fails_is_an_error_not_replaced(only_bin):
    wrapper(only_bin, "gcc", REAL_GCC)
    broken(only_bin, "mycc")
    with pytest.raises(ToolchainError) as e:
        cc.find_toolchain(HOST, cc="mycc")
    assert "--cc 'mycc' cannot build for" in str(e.value) and e.value.exit_code == 3


@needs_gcc
def test_cc_from_the_environment_is_tried_first_and_skipped_when_broken(only_bin, monkeypatch):
    wrapper(only_bin, "gcc", REAL_GCC)
    broken(only_bin, "envcc")
    monkeypatch.setenv("CC", "envcc")
    tc = cc.find_toolchain(HOST)
    assert tc.argv == ("gcc",) and any("from $CC" in s for s in tc.skipped), tc.skipped
    monkeypatch.setenv("CC", wrapper(only_bin, "goodcc", REAL_GCC))
    assert cc.find_toolchain(HOST).found_by == "$CC"


@needs_gcc
def test_broken_candidates_are_skipped_with_reasons(only_bin):
    broken(only_bin, f"{HOST.gnu_prefix}-gcc")
    wrapper(only_bin, "gcc", REAL_GCC)
    tc = cc.find_toolchain(HOST)
    assert tc.argv == ("gcc",)
    assert any("fake compiler failure" in s for s in tc.skipped), tc.skipped


@needs_gcc
def test_cc_for_another_machine_is_skipped(only_bin):
    with pytest.raises(AotcError) as e:
        cc.find_toolchain(OTHER, cc=REAL_GCC)
    msg = str(e.value)
    assert f"builds for {HOST.machine_arch}" in msg and f"not {OTHER.triple}" in msg


@needs_gcc
def test_lying_compiler_is_caught_by_the_machine_check(only_bin):
    # claims the other arch on -dumpmachine but really builds host code
    liar = fake(only_bin, "liar", f'if [ "$1" = "-dumpmachine" ]; then echo {OTHER.triple}; exit 0; fi\n'
                                  f'PATH="{REAL_PATH}" exec "{REAL_GCC}" "$@"')
    with pytest.raises(AotcError) as e:
        cc.find_toolchain(OTHER, cc=liar)
    assert f"produced {HOST.machine_arch} code, not {OTHER.machine_arch}" in str(e.value)


def test_clang_is_next_and_takes_target(only_bin):
    real = shutil.which("clang", path=REAL_PATH)
    if real is None:
        pytest.skip("no clang")
    broken(only_bin, f"{HOST.gnu_prefix}-gcc")
    broken(only_bin, "gcc")
    broken(only_bin, "cc")
    wrapper(only_bin, "clang", real)
    tc = cc.find_toolchain(HOST)
    assert tc.kind == "clang" and tc.argv == ("clang", f"--target={HOST.clang_triple}")
    assert len(tc.skipped) == 3


def test_explicit_clang_for_another_target_gets_target_flag(monkeypatch):
    if shutil.which("clang") is None:
        pytest.skip("no clang")
    try:
        tc = cc.find_toolchain(OTHER, cc="clang")
    except AotcError as e:
        pytest.skip(f"clang cannot link for {OTHER.triple} here: {e}")
    assert tc.found_by == "--cc" and tc.argv == ("clang", f"--target={OTHER.clang_triple}")


def test_nothing_found_is_one_clear_error(only_bin):
    with pytest.raises(AotcError) as e:
        cc.find_toolchain(OTHER)
    msg = str(e.value)
    assert msg.startswith(f"error: no working C compiler for target {OTHER.name} ({OTHER.triple})")
    assert f"{OTHER.gnu_prefix}-gcc: not found on PATH" in msg
    assert f"clang --target={OTHER.clang_triple}: not found on PATH" in msg
    assert "the ziglang package is not installed" in msg
    assert f"apt-get install gcc-{OTHER.gnu_prefix}" in msg
    assert "pip install ziglang" in msg
    assert "--cc" in msg and "Traceback" not in msg


def test_nothing_found_for_android_points_at_the_ndk(only_bin):
    with pytest.raises(AotcError, match="Android NDK"):
        cc.find_toolchain(resolve_target("aarch64-linux-android"))


def test_ndk_clang_names_are_found(only_bin):
    real = shutil.which("clang", path=REAL_PATH)
    if real is None:
        pytest.skip("no clang")
    for api in (21, 30):
        fake(only_bin, f"aarch64-linux-android{api}-clang", "exit 1")
    with pytest.raises(AotcError) as e:
        cc.find_toolchain(resolve_target("aarch64-linux-android"))
    assert "aarch64-linux-android30-clang: cannot build a test program" in str(e.value)


@needs_gcc
def test_compile_error_carries_output_and_command(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void) { return undeclared_thing; }\n")
    tc = cc.find_toolchain(HOST)
    with pytest.raises(AotcError) as e:
        commands.compile_object(tc, bad, tmp_path / "bad.o", ["-std=c11"])
    msg = str(e.value)
    assert "compiling bad.c failed" in msg and "$ " in msg and str(bad) in msg
    assert "undeclared_thing" in msg


def test_missing_tool_is_an_aotc_error(tmp_path):
    tc = cc.Toolchain(("no-such-compiler-xyz",), "gcc", HOST, (), (), ("ar",), "test")
    with pytest.raises(AotcError, match="'no-such-compiler-xyz' was not found"):
        commands.compile_object(tc, TINY_C, tmp_path / "t.o")


def test_trim_output_keeps_the_head():
    text = "\n".join(f"line {i}" for i in range(100))
    out = commands.trim_output(text)
    assert out.startswith("line 0") and "line 39" in out and "line 40" not in out
    assert "(60 more lines)" in out


def test_static_variant_switches_zig_to_musl():
    zig = cc.Toolchain(("zig", "cc", "-target", "arm-linux-gnueabihf"), "zig", HOST, (), (),
                       ("zig", "ar"), "test")
    assert cc.static_variant(zig).argv[-1] == "arm-linux-musleabihf"
    gcc = cc.Toolchain(("gcc",), "gcc", HOST, (), (), ("ar",), "test")
    assert cc.static_variant(gcc) is gcc


# ---------------------------------------------------------------------------- builds

def ar_members(a_path) -> list[str]:
    return subprocess.run(["ar", "t", str(a_path)], capture_output=True, text=True,
                          check=True).stdout.split()


@needs_gcc
def test_build_outputs_host(tmp_path):
    out = build_outputs(TINY_C, tmp_path / "lib" / "libtiny", HOST,
                        CompileOptions(emit=("o", "so", "a"), cflags=("-Wall", "-Werror")))
    assert out == {k: str(tmp_path / "lib" / f"libtiny.{k}") for k in ("o", "so", "a")}
    assert cc.binary_arch(out["o"]) == HOST.machine_arch
    assert cc.binary_arch(out["so"]) == HOST.machine_arch
    if shutil.which("ar"):
        assert ar_members(out["a"]) == ["libtiny.o"]
    syms = subprocess.run(["nm", "-D", out["so"]], capture_output=True, text=True).stdout
    assert "tiny_run_with" in syms and "tiny_create" in syms


@needs_gcc
def test_build_only_so_leaves_no_object(tmp_path):
    out = build_outputs(TINY_C, tmp_path / "m", "generic", CompileOptions(emit=("so",)))
    assert list(out) == ["so"] and not (tmp_path / "m.o").exists()


def test_build_rejects_unknown_emit_kind(tmp_path):
    with pytest.raises(AotcError, match="unknown --emit kind exe"):
        build_outputs(TINY_C, tmp_path / "m", HOST, CompileOptions(emit=("o", "exe")))


def test_build_outputs_aarch64(tmp_path):
    ok, why = have_tools("aarch64-linux-gnu-gcc")
    if not ok:
        pytest.skip(why)
    t = resolve_target("aarch64", target_features="+dotprod")
    out = build_outputs(TINY_C, tmp_path / "libtiny", t, CompileOptions(emit=("o", "so", "a")))
    assert cc.binary_arch(out["o"]) == "aarch64" and cc.binary_arch(out["so"]) == "aarch64"
    assert os.path.getsize(out["a"]) > 0


@pytest.mark.slow
def test_build_outputs_darwin_with_zig(tmp_path):
    ok, why = zig_works()
    if not ok:
        pytest.skip(why)
    t = resolve_target("aarch64-apple-darwin")
    tc = cc.find_toolchain(t)
    assert tc.kind == "zig" or tc.found_by == "$CC"
    out = build_outputs(TINY_C, tmp_path / "libtiny", t, CompileOptions(emit=("o", "so", "a")),
                        toolchain=tc)
    assert out["so"].endswith(".dylib")
    assert cc.binary_arch(out["o"]) == "aarch64" and cc.binary_arch(out["so"]) == "aarch64"
    with open(out["a"], "rb") as f:
        assert f.read(8) == b"!<arch>\n"


# ---------------------------------------------------------------------------- cache

def test_cache_dir_location(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "aotc"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "aotc"


def test_cached_build_builds_once_per_key(tmp_path):
    built = []

    def builder(d):
        built.append(d)
        (d / "out.txt").write_text("x")

    a = cached_build(b"key one", builder, root=tmp_path)
    assert (a / "out.txt").read_text() == "x" and len(built) == 1
    assert cached_build(b"key one", builder, root=tmp_path) == a and len(built) == 1
    b = cached_build(b"key two", builder, root=tmp_path)
    assert b != a and len(built) == 2


def test_cached_build_failure_leaves_nothing(tmp_path):
    def failing(d):
        (d / "half").write_text("x")
        raise AotcError("compiler exploded")

    with pytest.raises(AotcError, match="exploded"):
        cached_build(b"k", failing, root=tmp_path)
    leftovers = [p for p in (tmp_path / "builds").rglob("*") if p.is_file()]
    assert leftovers == []
    entry = cached_build(b"k", lambda d: (d / "ok").write_text("1"), root=tmp_path)
    assert (entry / "ok").exists()
