// tfcompile's documented example, against the aotc-generated class.
#include <algorithm>
#include <cstdio>

#include "libmatmul.h"

int main() {
  foo::bar::MatMulComp matmul;
  // Set up args and run the computation.
  const float args[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::copy(args + 0, args + 6, matmul.arg0_data());
  std::copy(args + 6, args + 12, matmul.arg1_data());
  if (!matmul.Run()) {
    std::fprintf(stderr, "run failed: %s\n", matmul.error_msg());
    return 1;
  }
  // Check result
  if (matmul.result0(0, 0) == 58) {
    std::printf("Success\n");
  } else {
    std::printf("Failed. Expected value 58 at 0,0. Got: %f\n", matmul.result0(0, 0));
    return 1;
  }
  return 0;
}
