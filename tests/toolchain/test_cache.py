"""The cache that `aotc run` and `bench` (and `cached_build`) keep: a private directory (0700,
files 0600 or 0700 even under umask 000), every file checked against its recorded digest
before use; an edited or truncated generated .c, an edited, truncated or replaced runner, a
damaged entry are built again, and a replaced runner is never executed."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

import aotc
from aotc.api import _runner
from aotc.errors import AotcError
from aotc.toolchain import cache
from aotc.toolchain.build import cached_build

CASE = Path(__file__).resolve().parents[1] / "data" / "corpus" / "tf_add"
INPUTS = {"x": np.int32(3), "y": np.int32(4)}


@pytest.fixture(scope="module")
def private_cache(tmp_path_factory):
    """One cache for the module (the first test fills it under umask 000; the others damage
    and repair it), so the runner is built once, plus once per repair."""
    root = tmp_path_factory.mktemp("xdg")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(root))
        yield root / "aotc"


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "aotc"


def _run():
    return aotc.run(str(CASE / "model.hlo"), config=str(CASE / "cfg.yaml"), inputs=INPUTS)["sum"]


def _paths():
    _, gen, runner, _, _ = _runner(str(CASE / "model.hlo"), str(CASE / "cfg.yaml"), None, None, {})
    return runner.parent / "src" / "libmodel.c", runner


def test_everything_is_private_even_under_umask_000(private_cache):
    old = os.umask(0)
    try:
        assert _run() == 7
        built = cached_build(b"k", lambda d: (d / "f.txt").write_text("x"), root=private_cache)
    finally:
        os.umask(old)
    assert built.is_relative_to(private_cache)
    for p in [private_cache, *private_cache.rglob("*")]:
        mode = stat.S_IMODE(os.lstat(p).st_mode)
        assert mode & 0o077 == 0, f"{p}: {oct(mode)}"
        assert mode in ((0o700,) if p.is_dir() or os.access(p, os.X_OK) and p.name.startswith("runner") else (0o600,)), \
            f"{p}: {oct(mode)}"


def test_an_edited_or_truncated_source_is_written_again(private_cache):
    assert _run() == 7
    c_path, _ = _paths()
    good = c_path.read_bytes()
    c_path.write_bytes(good.replace(b"x_1", b"x_1 + 1", 1) if b"x_1" in good else good + b"\n#error edited\n")
    assert _run() == 7 and c_path.read_bytes() == good
    with open(c_path, "r+b") as f:
        f.truncate(100)
    assert _run() == 7 and c_path.read_bytes() == good


@pytest.mark.parametrize("damage", ["replaced", pytest.param("truncated", marks=pytest.mark.slow),
                                    pytest.param("sidecar", marks=pytest.mark.slow)])
def test_a_damaged_runner_is_never_executed_and_is_built_again(private_cache, tmp_path, damage):
    assert _run() == 7
    _, runner = _paths()
    marker = tmp_path / "executed"
    if damage == "replaced":
        runner.write_text(f"#!/bin/sh\ntouch {marker}\n")
    elif damage == "truncated":
        with open(runner, "r+b") as f:
            f.truncate(64)
    else:  # the recorded digest no longer names these bytes
        Path(str(runner) + cache.SIDECAR).write_text("0" * 64 + " 1\n")
    assert _run() == 7
    assert not marker.exists()
    assert cache.verified(runner)


def test_a_damaged_cached_build_is_built_again(tmp_path):
    calls = []

    def builder(d):
        calls.append(d)
        (d / "a.o").write_bytes(b"object bytes")

    entry = cached_build(b"key", builder, root=tmp_path)
    assert cached_build(b"key", builder, root=tmp_path) == entry and len(calls) == 1
    with open(entry / "a.o", "r+b") as f:
        f.truncate(3)
    assert cached_build(b"key", builder, root=tmp_path) == entry and len(calls) == 2
    assert (entry / "a.o").read_bytes() == b"object bytes"
    (entry / "extra").write_text("planted")
    assert cached_build(b"key", builder, root=tmp_path) == entry and len(calls) == 3
    assert not (entry / "extra").exists()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a directory to another user needs root")
def test_a_cache_directory_of_another_user_is_refused(fresh_cache):
    fresh_cache.mkdir(parents=True)
    os.chown(fresh_cache, 65534, 65534)
    with pytest.raises(AotcError, match="is not a directory of this user"):
        _run()


def test_a_symlink_as_cache_directory_is_refused(fresh_cache, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fresh_cache.parent.mkdir(parents=True)
    fresh_cache.symlink_to(elsewhere)
    with pytest.raises(AotcError, match="is not a directory of this user"):
        _run()


def test_compile_reuses_verified_objects_and_rebuilds_damaged_ones(fresh_cache, tmp_path):
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "cc"
    wrapper.write_text(f'#!/bin/sh\ncase " $* " in *" -c "*) echo compile >> {log};; esac\nexec gcc "$@"\n')
    wrapper.chmod(0o755)
    opts = aotc.CompileOptions(cc=str(wrapper), emit=("o", "a"))

    def build() -> bytes:
        res = aotc.compile(str(CASE / "model.hlo"), config=str(CASE / "cfg.yaml"), out=str(tmp_path / "libm"),
                           options=opts)
        return Path(res.obj_path).read_bytes()

    first = build()
    compiles = log.read_text().count("compile")
    assert compiles >= 1
    assert build() == first and log.read_text().count("compile") == compiles  # from the cache
    (obj,) = fresh_cache.rglob("libm.o")
    with open(obj, "r+b") as f:
        f.truncate(10)
    assert build() == first and log.read_text().count("compile") > compiles  # damaged: compiled again
    assert stat.S_IMODE(os.stat(tmp_path / "libm.o").st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old
