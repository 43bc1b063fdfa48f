"""The runner program: native runs and C-timed benchmarks, aarch64 under qemu,
and other Linux targets through zig cc (musl, static) under qemu."""
from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import subprocess

import numpy as np
import pytest

from aotc.errors import AotcError
from aotc.options import CompileOptions
from aotc.toolchain import cc
from aotc.toolchain.loader import ModelInputError, ModelRunError
from aotc.toolchain.runner import (bench_runner, build_runner, run_runner, runner_command,
                                   runner_signature)
from aotc.toolchain.targets import resolve_target

from . import TINY_C, TINY_H, assert_tiny, have_tools, tiny_inputs, zig_works

HOST = resolve_target("host")
BENCH_KEYS = {"median_us", "min_us", "mean_us", "iters", "threads"}


@pytest.fixture(scope="module")
def host_runner(tmp_path_factory):
    return build_runner(TINY_C, "tiny", HOST, CompileOptions(), tmp_path_factory.mktemp("runner"))


def check_bench(res: dict, iters: int, threads: int) -> None:
    assert BENCH_KEYS <= set(res)
    assert res["iters"] == iters and res["threads"] == threads
    assert 0 < res["min_us"] <= res["median_us"] <= res["max_us"]
    assert res["min_us"] <= res["mean_us"] <= res["max_us"]


def test_native_run(host_runner):
    x, y, h = tiny_inputs()
    outs = run_runner(host_runner, HOST, [x, y, h])  # the variable starts at zero
    assert_tiny(outs, x, y, h, step_before=0)
    outs = run_runner(host_runner, HOST, [x, y, h, np.int32(41)], threads=2)
    assert_tiny(outs, x, y, h, step_before=41)
    outs = run_runner(host_runner, HOST, {"x": x, "y": y, "h": h.view(np.uint16)})
    assert_tiny(outs, x, y, h, step_before=0)


def test_signature_from_the_runner(host_runner):
    args, results = runner_signature(host_runner, HOST)
    assert [(s.name, s.type, s.dims, s.is_variable) for s in args] == [
        ("x", "f32", (3,), False), ("y", "f32", (3,), False), ("h", "bf16", (2, 2), False),
        ("step", "s32", (), True)]
    assert [(s.name, s.type, s.nbytes) for s in results] == [
        ("sum", "f32", 12), ("h2", "bf16", 8), ("pos", "pred", 3), ("count", "s32", 4),
        ("norm", "f32", 4)]


def test_specs_can_be_given(host_runner):
    args, results = runner_signature(host_runner, HOST)
    x, y, h = tiny_inputs()
    assert_tiny(run_runner(host_runner, HOST, [x, y, h], args, results), x, y, h, step_before=0)


def test_native_bench_json(host_runner):
    check_bench(bench_runner(host_runner, HOST, iters=30, threads=2, warmup=3), 30, 2)
    x, y, h = tiny_inputs()
    res = bench_runner(host_runner, HOST, iters=5, threads=1, warmup=0, inputs=[x, y, h])
    check_bench(res, 5, 1)
    assert res["emulated"] is False and res["target"] == HOST.triple


def test_bench_prints_one_json_object(host_runner):
    out = subprocess.run([str(host_runner), "bench", "7", "1", "1"], capture_output=True,
                         text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("{\"median_us\":")


def test_model_errors_and_bad_inputs(host_runner):
    x, y, h = tiny_inputs()
    with pytest.raises(ModelRunError, match="at most 8"):
        run_runner(host_runner, HOST, [x, y, h], threads=9)
    with pytest.raises(ModelInputError, match="argument 0 'x'.*float64"):
        run_runner(host_runner, HOST, [x.astype(np.float64), y, h])
    with pytest.raises(AotcError, match="2 inputs given; the model takes 4 arguments"):
        run_runner(host_runner, HOST, [x, y])
    with pytest.raises(AotcError, match="missing input: h"):
        run_runner(host_runner, HOST, {"x": x, "y": y})
    with pytest.raises(AotcError):
        bench_runner(host_runner, HOST, iters=0)


def test_runner_cli_errors(host_runner, tmp_path):
    r = subprocess.run([str(host_runner)], capture_output=True, text=True)
    assert r.returncode == 1 and "usage: runner" in r.stderr
    (tmp_path / "arg0.bin").write_bytes(b"\0" * 5)
    r = subprocess.run([str(host_runner), "run", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1 and "arg0.bin: wrong size, expected exactly 12 bytes" in r.stderr
    r = subprocess.run([str(host_runner), "bench", "x", "1", "1"], capture_output=True, text=True)
    assert r.returncode == 1 and "ITERS must be an integer" in r.stderr


def test_build_is_reused(host_runner, tmp_path):
    again = build_runner(TINY_C, "tiny", HOST, CompileOptions(), host_runner.parent)
    assert again == host_runner
    other = build_runner(TINY_C, "tiny", HOST, CompileOptions(cflags=("-O1",)), host_runner.parent)
    assert other != host_runner


def test_without_a_header_and_for_generic(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(TINY_C, src / "tiny.c")  # the .c includes "tiny.h": give it one under another name
    (src / "tiny.c").write_text((src / "tiny.c").read_text().replace('"tiny.h"', '"api.h"'))
    shutil.copy(TINY_H, src / "api.h")
    generic = resolve_target("generic")
    exe = build_runner(src / "tiny.c", "tiny", generic, CompileOptions(), tmp_path / "w")
    x, y, h = tiny_inputs()
    assert_tiny(run_runner(exe, generic, [x, y, h]), x, y, h, step_before=0)
    with pytest.raises(AotcError, match="is not the header of model 'tiny'"):
        build_runner(src / "tiny.c", "tiny", generic, CompileOptions(), tmp_path / "w",
                     header_path=src / "tiny.c")
    with pytest.raises(AotcError, match="not a C identifier"):
        build_runner(src / "tiny.c", "my-model", generic, CompileOptions(), tmp_path / "w")


def test_targets_that_cannot_run_here(tmp_path):
    mac = resolve_target("aarch64-apple-darwin")
    if not mac.runs_on_host:
        with pytest.raises(AotcError, match="cannot run aarch64-apple-darwin programs"):
            runner_command(tmp_path / "runner", mac)
    other = resolve_target("aarch64" if HOST.arch != "aarch64" else "x86_64")
    missing = dataclasses.replace(other, emulator=("qemu-not-installed-here",))
    with pytest.raises(AotcError, match="needs qemu-not-installed-here.*apt-get install qemu-user"):
        runner_command(tmp_path / "runner", missing)


# ----------------------------------------------------------------------- cross targets

def run_cross(target, tmp_path, cc_cmd=None):
    exe = build_runner(TINY_C, "tiny", target, CompileOptions(cc=cc_cmd), tmp_path)
    assert cc.binary_arch(exe) == target.machine_arch
    x, y, h = tiny_inputs()
    assert_tiny(run_runner(exe, target, [x, y, h], threads=2), x, y, h, step_before=0)
    assert_tiny(run_runner(exe, target, [x, y, h, np.int32(-5)]), x, y, h, step_before=-5)
    check_bench(bench_runner(exe, target, iters=5, threads=2, warmup=1), 5, 2)
    return exe


@pytest.mark.aarch64
def test_aarch64_under_qemu(tmp_path):
    if HOST.arch == "aarch64":
        pytest.skip("this machine is aarch64: covered by the native tests")
    ok, why = have_tools("aarch64-linux-gnu-gcc", "qemu-aarch64")
    if not ok:
        pytest.skip(why)
    t = resolve_target("aarch64", target_features="+dotprod")
    exe = run_cross(t, tmp_path)
    desc = subprocess.run(["file", str(exe)], capture_output=True, text=True).stdout
    if desc:
        assert "statically linked" in desc


@pytest.mark.slow  # emulated; gcc's build runs in the fast step
@pytest.mark.aarch64
def test_aarch64_with_clang_under_qemu(tmp_path):
    if HOST.arch == "aarch64":
        pytest.skip("this machine is aarch64")
    ok, why = have_tools("clang", "qemu-aarch64")
    if not ok:
        pytest.skip(why)
    t = resolve_target("aarch64")
    try:
        tc = cc.find_toolchain(t, "clang")
    except AotcError as e:
        pytest.skip(f"clang cannot build for aarch64 here: {e}")
    if tc.kind != "clang":
        pytest.skip("clang cannot link for aarch64 here")
    run_cross(t, tmp_path, "clang")


ZIG_OK, ZIG_WHY = zig_works()


@pytest.mark.slow
@pytest.mark.skipif(not ZIG_OK, reason=ZIG_WHY)
@pytest.mark.parametrize("name,features", [("riscv64", None), ("arm", "+neon"),
                                           ("aarch64", None)])
def test_zig_targets_under_qemu(name, features, tmp_path):
    t = resolve_target(name, target_features=features)
    if t.runs_on_host:
        pytest.skip(f"{name} is this machine")
    ok, why = have_tools(t.emulator[0] if t.emulator else "qemu-missing")
    if not ok:
        pytest.skip(why)
    zig = shlex.join(cc.zig_cc_argv())  # explicit, so an installed cross gcc does not win
    run_cross(t, tmp_path, zig)
    assert os.listdir(tmp_path)
