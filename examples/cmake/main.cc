// tfcompile's documented matmul example through the class aotc generates (matmul.yaml's
// cpp_class), built by CMake.
#include <algorithm>
#include <cstdio>

#include "matmul.h"

int main() {
  foo::bar::MatMulComp matmul;
  const float args[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::copy(args + 0, args + 6, matmul.arg0_data());
  std::copy(args + 6, args + 12, matmul.arg1_data());
  if (!matmul.Run()) {
    std::fprintf(stderr, "run failed: %s\n", matmul.error_msg());
    return 1;
  }
  std::printf("[[%g, %g], [%g, %g]]\n", matmul.result0(0, 0), matmul.result0(0, 1), matmul.result0(1, 0),
              matmul.result0(1, 1));
  return matmul.result0(0, 0) == 58 ? 0 : 1;
}
