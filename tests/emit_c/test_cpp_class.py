"""The C++ class follows tfcompile's generated class: tfcompile's documented example
(tensorflow.org/xla/tfcompile, step 3) builds and runs against it with only its include of the
generated header changed, and the buffer sizes (bytes), counts (elements), named accessors and
`AllocMode` names are tfcompile's."""
import os
import shutil
import subprocess

import pytest

import aotc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MATMUL = os.path.join(ROOT, "examples", "matmul")
EIGEN = "/usr/include/eigen3"
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")

# tfcompile's documented example, as the tfcompile page prints it (Apache-2.0, the TensorFlow
# authors). The test changes only the include of the generated header.
TFCOMPILE_EXAMPLE = """\
#define EIGEN_USE_THREADS
#define EIGEN_USE_CUSTOM_THREAD_POOL

#include <iostream>
#include "third_party/eigen3/unsupported/Eigen/CXX11/Tensor"
#include "tensorflow/compiler/aot/tests/test_graph_tfmatmul.h" // generated

int main(int argc, char** argv) {
  Eigen::ThreadPool tp(2);  // Size the thread pool as appropriate.
  Eigen::ThreadPoolDevice device(&tp, tp.NumThreads());


  foo::bar::MatMulComp matmul;
  matmul.set_thread_pool(&device);

  // Set up args and run the computation.
  const float args[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::copy(args + 0, args + 6, matmul.arg0_data());
  std::copy(args + 6, args + 12, matmul.arg1_data());
  matmul.Run();

  // Check result
  if (matmul.result0(0, 0) == 58) {
    std::cout << "Success" << std::endl;
  } else {
    std::cout << "Failed. Expected value 58 at 0,0. Got:"
              << matmul.result0(0, 0) << std::endl;
  }

  return 0;
}
"""


def _matmul(tmp_path):
    return aotc.compile(os.path.join(MATMUL, "matmul.hlo"), config=os.path.join(MATMUL, "matmul.yaml"),
                        out=str(tmp_path / "libmatmul"))


def _build_and_run(tmp_path, source: str, flags: list[str]) -> str:
    (tmp_path / "main.cc").write_text(source)
    cmd = [CXX, *flags, "-I", str(tmp_path), "main.cc", "libmatmul.o", "-lm", "-lpthread", "-o", "main"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, " ".join(cmd) + "\n" + r.stderr[-3000:]
    r = subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


@pytest.mark.slow  # Eigen's Tensor module takes ~5 s to compile
@pytest.mark.skipif(CXX is None, reason="needs a C++ compiler")
@pytest.mark.skipif(not os.path.isfile(os.path.join(EIGEN, "unsupported", "Eigen", "CXX11", "Tensor")),
                    reason="tfcompile's example includes Eigen's Tensor module for Eigen::ThreadPoolDevice: "
                           "needs /usr/include/eigen3 (apt-get install libeigen3-dev)")
def test_tfcompile_documented_example_runs_unchanged(tmp_path):
    _matmul(tmp_path)
    generated = '#include "tensorflow/compiler/aot/tests/test_graph_tfmatmul.h" // generated\n'
    assert generated in TFCOMPILE_EXAMPLE
    source = TFCOMPILE_EXAMPLE.replace(generated, '#include "libmatmul.h" // generated\n')
    # the example's Eigen include path, as a TensorFlow checkout has it
    os.makedirs(tmp_path / "third_party")
    os.symlink(EIGEN, tmp_path / "third_party" / "eigen3")
    out = _build_and_run(tmp_path, source, ["-std=c++14", "-O0"])
    assert out == "Success\n"


CLASS_FACTS = """\
#include <cstdio>
#include <cstring>
#include "libmatmul.h"

using foo::bar::MatMulComp;

// the shape of Eigen::ThreadPoolDevice's parallelFor, run inline
struct Cost { Cost(double, double, double) {} };
struct InlineDevice {
  template <typename F> void parallelFor(long n, const Cost&, F f) const { f(0, n); }
};
// tfcompile: _size() in bytes, _count() in elements, positional and named
static_assert(MatMulComp::arg0_size() == 2 * 3 * sizeof(float), "arg0_size");
static_assert(MatMulComp::arg0_count() == 6, "arg0_count");
static_assert(MatMulComp::arg_y_hold_size() == 3 * 2 * sizeof(float), "arg_y_hold_size");
static_assert(MatMulComp::arg_y_hold_count() == 6, "arg_y_hold_count");
static_assert(MatMulComp::result0_size() == 4 * sizeof(float), "result0_size");
static_assert(MatMulComp::result_x_y_prod_count() == 4, "result_x_y_prod_count");
static_assert(MatMulComp::kNumArgs == 2 && MatMulComp::kNumResults == 1, "counts");

int main() {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {7, 8, 9, 10, 11, 12};
  MatMulComp own(MatMulComp::AllocMode::RESULTS_PROFILES_AND_TEMPS_ONLY);
  if (own.Run()) return 1;                                     // no argument buffers yet
  if (std::strstr(own.error_msg(), "x_hold") == nullptr) return 2;
  own.set_arg_x_hold_data(x);
  own.set_arg1_data(y);
  if (!own.Run() || own.result_x_y_prod(1, 1) != 154 || own.result0_data()[1] != 64) return 3;
  MatMulComp all(MatMulComp::AllocMode::ARGS_VARIABLES_RESULTS_PROFILES_AND_TEMPS);
  MatMulComp old_name(MatMulComp::AllocMode::ARGS_VARIABLES_RESULTS_AND_TEMPS);
  std::memcpy(all.arg0_data(), x, all.arg0_size());
  std::memcpy(all.arg_y_hold_data(), y, all.arg_y_hold_size());
  if (!all.Run() || all.result0(1, 0) != 139 || !old_name.valid()) return 4;
  if (MatMulComp::arg_size(1) != MatMulComp::arg1_size()) return 5;
  InlineDevice device;
  if (!all.set_thread_pool(&device) || !all.Run() || all.result0(1, 0) != 139) return 6;
  if (!all.set_thread_pool(static_cast<const InlineDevice*>(nullptr)) || !all.Run()) return 7;
  std::printf("ok\\n");
  return 0;
}
"""


@pytest.mark.skipif(CXX is None, reason="needs a C++ compiler")
def test_sizes_counts_and_alloc_modes_are_tfcompiles(tmp_path):
    _matmul(tmp_path)
    out = _build_and_run(tmp_path, CLASS_FACTS, ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
    assert out == "ok\n"
