/* The same example in plain C, through the generated C API. */
#include <stdio.h>
#include <string.h>

#include "libmatmul.h"

int main(void) {
    matmul_instance* m = matmul_create(matmul_ALLOC_ALL);
    if (!m) return 1;
    const float x[6] = {1, 2, 3, 4, 5, 6};
    const float y[6] = {7, 8, 9, 10, 11, 12};
    memcpy(matmul_arg_x_hold_data(m), x, sizeof x);
    memcpy(matmul_arg_y_hold_data(m), y, sizeof y);
    if (matmul_run(m) != matmul_OK) {
        fprintf(stderr, "run failed: %s\n", matmul_error_msg(m));
        matmul_destroy(m);
        return 1;
    }
    const float* prod = matmul_result_x_y_prod_data(m);
    int ok = prod[0] == 58.0f;
    printf("%s: [[%g, %g], [%g, %g]]\n", ok ? "Success" : "Failed", prod[0], prod[1], prod[2], prod[3]);
    matmul_destroy(m);
    return ok ? 0 : 1;
}
