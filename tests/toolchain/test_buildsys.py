"""aotc.toolchain.buildsys and what builds read from `aotc compile`: the --emit kinds, the
depfile (what the compile read, written with the other outputs or not at all), the
pkg-config file whose flags build and link a C program, `--weights fed`, `aotc cflags`,
and two models in one C and one C++ program (classes in two namespaces) giving XLA's
results."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aotc.cli import main
from aotc.errors import AotcError
from aotc.toolchain.buildsys import depfile_text, split_emit

from .two_models import run_program, write_models, write_sources

REPO = Path(__file__).resolve().parents[2]


def aotc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m aotc ARGS` from this tree."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "aotc", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


@pytest.mark.parametrize("listed, kinds", [
    ([], ("o",)), (["o"], ("o",)), (["so", "a"], ("o", "so", "a")), (["d"], ("o", "d")),
    (["a", "pc", "d"], ("o", "a", "d", "pc")), (["c", "h"], ()), (["c", "h", "d"], ("d",)),
    (["h", "a"], ("o", "a")), (["none"], ()), (["none", "d"], ("d",)),
])
def test_emit_kinds(listed, kinds):
    assert split_emit(listed) == kinds


@pytest.mark.parametrize("listed, message", [
    (["obj"], "unknown kind 'obj'"), (["c", "h", "pc"], "needs o or a"), (["none", "pc"], "needs o or a"),
])
def test_emit_kinds_refused(listed, message):
    with pytest.raises(AotcError, match=message):
        split_emit(listed)


def test_depfile_text_escapes_for_make():
    text = depfile_text(["out/lib m.c", "out/lib m.h"], ("a b/m.hlo", "c#.yaml", "$w.npz", "a b/m.hlo"))
    assert text == ("out/lib\\ m.c out/lib\\ m.h: \\\n  a\\ b/m.hlo \\\n  c\\#.yaml \\\n  $$w.npz\n\n"
                    "a\\ b/m.hlo:\nc\\#.yaml:\n$$w.npz:\n")


def test_cmake_dir_and_make_include_flags():
    r = CliRunner().invoke(main, ["--cmake-dir"])
    assert r.exit_code == 0, r.output
    cmake_dir = Path(r.output.strip())
    assert {"aotcConfig.cmake", "aotcConfigVersion.cmake", "aarch64-linux-gnu.cmake"} <= {
        p.name for p in cmake_dir.iterdir()}
    r = CliRunner().invoke(main, ["--make-include"])
    assert r.exit_code == 0, r.output
    assert Path(r.output.strip()).is_file() and "define aotc_library" in Path(r.output.strip()).read_text()


def test_cmake_package_version_is_aotc_version():
    from aotc import __version__
    text = (Path(CliRunner().invoke(main, ["--cmake-dir"]).output.strip()) / "aotcConfigVersion.cmake").read_text()
    assert f'set(PACKAGE_VERSION "{__version__}")' in text


def test_cflags_per_target():
    r = CliRunner().invoke(main, ["cflags", "--target", "x86_64", "--cflags", "-g"])
    assert r.exit_code == 0, r.output
    assert r.output.split() == ["-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
                                "-march=x86-64-v3", "-g"]
    r = CliRunner().invoke(main, ["cflags", "--target", "aarch64", "--target-cpu", "cortex-a76"])
    assert r.output.split()[-1] == "-mcpu=cortex-a76"
    r = CliRunner().invoke(main, ["cflags", "--target", "vax"])
    assert r.exit_code == 1 and "unknown target 'vax'" in r.output


def test_depfile_names_model_config_and_bound_npz(tmp_path):
    models = write_models(tmp_path / "m")
    model, config = models["mm"]
    out = tmp_path / "out" / "mm"
    r = CliRunner().invoke(main, ["compile", str(model), "-c", str(config), "-o", str(out), "--emit", "c,h,d"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.parent.iterdir()) == ["mm.c", "mm.d", "mm.h"]  # no binary
    assert out.with_suffix(".d").read_text() == depfile_text(
        [f"{out}.c", f"{out}.h"], (str(model), str(config), str(tmp_path / "m" / "y.npz")))


def test_failed_compile_writes_no_depfile(tmp_path):
    models = write_models(tmp_path / "m")
    model, config = models["mm"]
    model.write_text(model.read_text().replace("dot(", "dott("))
    out = tmp_path / "out" / "mm"
    r = CliRunner().invoke(main, ["compile", str(model), "-c", str(config), "-o", str(out), "--emit", "c,h,d"])
    assert r.exit_code == 1 and "dott" in r.output
    assert not out.parent.exists() or not any(out.parent.iterdir())


def test_weights_fed_makes_bound_parameters_feeds(tmp_path):
    models = write_models(tmp_path / "m")
    model, config = models["mm"]
    for weights, args in (("bound", ["x"]), ("fed", ["x", "y"])):
        out = tmp_path / weights / "mm"
        r = CliRunner().invoke(main, ["compile", str(model), "-c", str(config), "-o", str(out), "--emit", "c,h,d",
                                      "--weights", weights])
        assert r.exit_code == 0, r.output
        header = out.with_suffix(".h").read_text()
        assert f"MM_NUM_ARGS {len(args)}" in header
        assert ("y.npz" in out.with_suffix(".d").read_text()) == (weights == "bound")


@pytest.fixture(scope="module")
def two_built(tmp_path_factory):
    """Both models compiled by `python -m aotc compile --emit a,d,pc` into one directory."""
    root = tmp_path_factory.mktemp("two")
    for prefix, (model, config) in write_models(root / "models").items():
        r = aotc("compile", str(model), "--config", str(config), "-o", str(root / "lib" / prefix), "--emit", "a,d,pc")
        assert r.returncode == 0, r.stderr
    write_sources(root)
    return root


def _pkg_config(root: Path, *args: str) -> list[str]:
    env = dict(os.environ, PKG_CONFIG_PATH=str(root / "lib"))
    r = subprocess.run(["pkg-config", *args], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config is not installed (apt install pkg-config)")
def test_pkg_config_flags_build_and_link_a_c_program(two_built):
    root = two_built
    assert _pkg_config(root, "--modversion", "mm") == ["0.1.0"]
    flags = _pkg_config(root, "--cflags", "--libs", "mm", "unary")
    assert f"-I{root / 'lib'}" in flags and str(root / "lib" / "mm.a") in flags and "-lm" in flags
    exe = root / "c_pc"
    r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", str(root / "main.c"), *flags, "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run_program([str(exe)], "C program linked by pkg-config flags")


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_two_models_in_one_cpp_program(two_built, cxx):
    if shutil.which(cxx) is None:
        pytest.skip(f"{cxx} is not installed")
    root = two_built
    exe = root / f"cc_{cxx}"
    lib = root / "lib"
    r = subprocess.run([cxx, "-std=c++11", "-Wall", "-Wextra", "-Werror", f"-I{lib}", str(root / "main.cc"),
                        str(lib / "mm.a"), str(lib / "unary.a"), "-lm", "-lpthread", "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run_program([str(exe)], f"C++ program ({cxx}) with ns_a::MatMul and ns_b::detail::Unary")


def test_wheel_package_data_ships_cmake_and_make_files():
    import fnmatch

    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["aotc"]
    shipped = [p.relative_to(REPO / "aotc").as_posix() for d in ("cmake", "make")
               for p in (REPO / "aotc" / "toolchain" / d).iterdir()]
    assert len(shipped) == 4
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in shipped), shipped
