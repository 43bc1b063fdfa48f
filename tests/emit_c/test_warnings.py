"""Every generated file builds warning-free with gcc and clang; the header is
valid C99 and C++11 on its own; two models link into one program."""
import os
import shutil
import subprocess

import pytest

from aotc.driver import frontend, generate
from aotc.options import CompileOptions

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "corpus")
CASES = ["tf_matmul_and_add", "op_reduce", "op_shape_ops", "op_convert_matrix", "op_binary_f32", "tf_variable",
         "op_int_bitwise", "op_pad"]
COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]
WARN = ["-Wall", "-Wextra", "-Werror"]


def _emit(tmp_path, case, kind="model.hlo", name=None):
    d = os.path.join(DATA, case)
    fe = frontend(os.path.join(d, kind), os.path.join(d, "cfg.yaml"))
    out = str(tmp_path / f"lib{case}")
    gen = generate(fe, out, CompileOptions(name=name))
    with open(out + ".c", "w") as f:
        f.write(gen.c_text)
    with open(out + ".h", "w") as f:
        f.write(gen.h_text)
    return out, gen


def _cc(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 0, " ".join(argv) + "\n" + r.stderr[-3000:]


@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", ["model.hlo", "model.opt.hlo"])
def test_source_builds_warning_free(tmp_path, cc, case, kind):
    out, _ = _emit(tmp_path, case, kind)
    _cc([cc, "-std=c11", *WARN, "-O2", "-c", out + ".c", "-o", out + ".o"])


@pytest.mark.parametrize("cc", COMPILERS)
def test_header_is_c99_and_cxx11(tmp_path, cc):
    out, gen = _emit(tmp_path, "tf_matmul_and_add")
    src = tmp_path / "use.c"
    src.write_text(f'#include "{os.path.basename(out)}.h"\nint main(void) {{ return {gen.name.upper()}_NUM_ARGS - 2; }}\n')
    _cc([cc, "-std=c99", "-pedantic", *WARN, "-I", str(tmp_path), "-c", str(src), "-o", str(tmp_path / "use.o")])
    cxx = {"gcc": "g++", "clang": "clang++"}[cc]
    if shutil.which(cxx):
        src2 = tmp_path / "use.cc"
        src2.write_text(f'#include "{os.path.basename(out)}.h"\nint main() {{ return {gen.name.upper()}_NUM_ARGS - 2; }}\n')
        _cc([cxx, "-std=c++11", "-pedantic", *WARN, "-I", str(tmp_path), "-c", str(src2), "-o",
             str(tmp_path / "use_cc.o")])


def test_header_includes_only_the_standard_library(tmp_path):
    _, gen = _emit(tmp_path, "tf_matmul_and_add")
    includes = [line for line in gen.h_text.splitlines() if line.startswith("#include")]
    assert includes == ["#include <stddef.h>", "#include <stdint.h>"]


def test_two_models_link_into_one_program(tmp_path):
    a, ga = _emit(tmp_path, "tf_matmul_and_add", name="first")
    b, gb = _emit(tmp_path, "op_reduce", name="second")
    main = tmp_path / "main.c"
    main.write_text(f'#include "{os.path.basename(a)}.h"\n#include "{os.path.basename(b)}.h"\n'
                    "int main(void) {\n"
                    "  first_instance* x = first_create(first_ALLOC_ALL);\n"
                    "  second_instance* y = second_create(second_ALLOC_ALL);\n"
                    "  int rc = first_run(x) | second_run(y);\n"
                    "  first_destroy(x); second_destroy(y);\n  return rc;\n}\n")
    for src in (a, b):
        _cc(["gcc", "-std=c11", *WARN, "-O1", "-c", src + ".c", "-o", src + ".o"])
    exe = str(tmp_path / "both")
    _cc(["gcc", "-std=c11", *WARN, "-I", str(tmp_path), str(main), a + ".o", b + ".o", "-lm", "-lpthread", "-o", exe])
    assert subprocess.run([exe]).returncode == 0
    nm = subprocess.run(["nm", "-g", "--defined-only", a + ".o"], capture_output=True, text=True).stdout
    public = [line.split()[-1] for line in nm.splitlines() if line.strip()]
    assert public and all(s.startswith("first_") for s in public), public


@pytest.mark.parametrize("cc", COMPILERS)
def test_reducers_folded_inline_are_not_printed(tmp_path, cc):
    """Softmax's row max and sum fold with inline f32 arithmetic: their reducer functions
    are called by nothing and left out (clang warns on an unused static function)."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")
    fe = frontend(os.path.join(root, "softmax.hlo"), os.path.join(root, "softmax.yaml"))
    out = str(tmp_path / "libsoftmax")
    gen = generate(fe, out, CompileOptions())
    assert "r_region_0_1" not in gen.c_text
    with open(out + ".c", "w") as f:
        f.write(gen.c_text)
    with open(out + ".h", "w") as f:
        f.write(gen.h_text)
    _cc([cc, "-std=c11", *WARN, "-O2", "-c", out + ".c", "-o", out + ".o"])


@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("opt", ["-O3", "-O3 -march=native", "-Os"])
def test_vector_tails_build_warning_free_at_every_level(tmp_path, cc, opt):
    """A wide vector loop's scalar tail starts at a constant expression: gcc -O3 bounded a
    tail starting wherever the vector loop stopped by address overflow and warned
    (-Waggressive-loop-optimizations) on the 10-op chain over 1,000 elements."""
    d = os.path.join(os.path.dirname(__file__), "..", "data", "fixtures", "chain10_f32")
    fe = frontend(os.path.join(d, "model.hlo"), os.path.join(d, "cfg.yaml"))
    out = str(tmp_path / "libchain")
    gen = generate(fe, out, CompileOptions())
    with open(out + ".c", "w") as f:
        f.write(gen.c_text)
    with open(out + ".h", "w") as f:
        f.write(gen.h_text)
    _cc([cc, "-std=c11", *WARN, *opt.split(), "-c", out + ".c", "-o", out + ".o"])


_RANGED = {  # kernels threads split: the vector loop runs over [lo, hi), bounds known only when inlined
    "map": "m = f32[65536] multiply(x, x)\n  ROOT y = f32[65536] add(m, x)",
    "interleaved": "e = f32[65536] exponential(x)\n  ROOT y = f32[65536] tanh(e)",
}


@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("kernel", sorted(_RANGED))
@pytest.mark.parametrize("stream", [0, pytest.param(4096, marks=pytest.mark.slow)])
def test_ranged_vector_tails_build_warning_free(tmp_path, cc, kernel, stream):
    """A threaded kernel's vector loops end at an index computed before them and its tail
    starts there: gcc 12 -O3 warned (-Waggressive-loop-optimizations) on every threaded 1-D
    map of a multiple of 8 elements once the serial call, with constant bounds, was inlined;
    the same with streamed stores (kernel/stream.py)."""
    text = f"HloModule m\nENTRY main {{\n  x = f32[65536] parameter(0)\n  {_RANGED[kernel]}\n}}\n"
    opts = CompileOptions(stream_min_bytes=stream)
    out = str(tmp_path / "libranged")
    gen = generate(frontend("ranged.hlo", None, opts, text=text), out, opts)
    assert "lo, int64_t hi" in gen.c_text and ("aotc_vf_stream(&" in gen.c_text) == bool(stream)
    with open(out + ".c", "w") as f:
        f.write(gen.c_text)
    with open(out + ".h", "w") as f:
        f.write(gen.h_text)
    _cc([cc, "-std=c11", *WARN, "-O3", "-march=native", "-c", out + ".c", "-o", out + ".o"])
