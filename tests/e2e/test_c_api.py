"""The generated C API from C: allocation modes, real error messages, the
stateless entry, introspection, and two instances running in two threads --
built with AddressSanitizer and UndefinedBehaviorSanitizer."""
import os
import shutil
import subprocess

import pytest

import aotc

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "corpus", "tf_matmul_and_add")
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]

DRIVER = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libmm.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); exit(1); } } while (0)

static void fill(mm_instance* m, float s) {
    float* x = mm_arg_x_data(m); float* y = mm_arg_y_data(m);
    for (int i = 0; i < 4; ++i) { x[i] = s * (float)(i + 1); y[i] = (float)(i + 5); }
}

static void* worker(void* arg) {
    float s = *(float*)arg;
    mm_instance* m = mm_create(mm_ALLOC_ALL);
    CHECK(m != NULL);
    for (int it = 0; it < 2000; ++it) {
        fill(m, s);
        CHECK(mm_run(m) == mm_OK);
        const float* p = mm_result_x_y_prod_data(m);
        /* [[1 2][3 4]]*s @ [[5 6][7 8]] = s*[[19 22][43 50]] */
        CHECK(p[0] == 19 * s && p[1] == 22 * s && p[2] == 43 * s && p[3] == 50 * s);
    }
    mm_destroy(m);
    return NULL;
}

int main(void) {
    /* introspection */
    CHECK(MM_NUM_ARGS == 2 && MM_NUM_RESULTS == 2);
    CHECK(strcmp(mm_arg_name(0), "x") == 0 && strcmp(mm_arg_type(1), "f32") == 0);
    CHECK(mm_arg_rank(0) == 2 && mm_arg_dims(0)[0] == 2 && mm_arg_dims(0)[1] == 2 && mm_arg_bytes(0) == 16);
    CHECK(mm_lookup_arg_index("y") == 1 && mm_lookup_arg_index("nope") == -1);
    CHECK(mm_lookup_result_index("x_y_sum") == 1 && mm_result_name(7) == NULL);

    /* the caller supplies argument buffers; a missing one is reported by name */
    mm_instance* m = mm_create(mm_ALLOC_RESULTS_AND_TEMPS);
    CHECK(m != NULL);
    CHECK(mm_run(m) == mm_ERR_NULL_ARG);
    CHECK(strstr(mm_error_msg(m), "argument 0 (x) has no buffer") != NULL);
    float x[4] = {1, 2, 3, 4}, y[4] = {5, 6, 7, 8};
    CHECK(mm_set_arg_data(m, 0, x) == mm_OK && mm_set_arg_data(m, 1, y) == mm_OK);
    CHECK(mm_set_arg_data(m, 2, y) == mm_ERR_INDEX);
    CHECK(mm_run(m) == mm_OK && mm_error_msg(m)[0] == 0);
    CHECK(((float*)mm_result_data(m, 1))[3] == 12);
    char* bytes = (char*)malloc(64);
    CHECK(mm_set_arg_data(m, 0, bytes + 1) == mm_OK);
    CHECK(mm_run(m) == mm_ERR_MISALIGNED && strstr(mm_error_msg(m), "not aligned") != NULL);
    free(bytes);
    CHECK(mm_set_num_threads(m, 0) == mm_ERR_THREADS && mm_set_num_threads(m, 2) == mm_OK);
    mm_destroy(m);

    /* the caller supplies everything, including the arena */
    m = mm_create(mm_ALLOC_NONE);
    float r0[4], r1[4];
    CHECK(mm_set_arg_data(m, 0, x) == mm_OK && mm_set_arg_data(m, 1, y) == mm_OK);
    CHECK(mm_run(m) == mm_ERR_NULL_RESULT);
    mm_set_result_data(m, 0, r0);
    mm_set_result_data(m, 1, r1);
    void* arena = NULL;
    if (MM_ARENA_BYTES) {
        CHECK(mm_run(m) == mm_ERR_NO_ARENA);
        CHECK(posix_memalign(&arena, 64, MM_ARENA_BYTES) == 0);
        CHECK(mm_set_arena(m, arena, MM_ARENA_BYTES) == mm_OK);
    }
    CHECK(mm_run(m) == mm_OK && r0[0] == 19 && r1[0] == 6);
    mm_destroy(m);

    /* stateless entry */
    void* args[2] = {x, y};
    void* results[2] = {r0, r1};
    memset(r0, 0, sizeof r0);
    CHECK(mm_run_with(args, results, arena, MM_ARENA_BYTES) == mm_OK && r0[3] == 50);
    free(arena);

    /* two instances, two threads */
    pthread_t t1, t2;
    float s1 = 1.0f, s2 = 3.0f;
    pthread_create(&t1, NULL, worker, &s1);
    pthread_create(&t2, NULL, worker, &s2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    puts("ok");
    return 0;
}
"""


def _run_driver(tmp_path, c_path: str, driver: str) -> None:
    """Build a C driver with the generated source under ASan/UBSan; it must print `ok`."""
    drv = tmp_path / "driver.c"
    drv.write_text(driver)
    exe = str(tmp_path / "driver")
    cmd = ["gcc", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O1", "-g", *SAN,
           "-I", str(tmp_path), str(drv), c_path, "-lm", "-lpthread", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_c_api_under_sanitizers(tmp_path):
    res = aotc.compile(os.path.join(DATA, "model.hlo"), config=os.path.join(DATA, "cfg.yaml"),
                       out=str(tmp_path / "libmm"), options=aotc.CompileOptions(name="mm", emit=()))
    _run_driver(tmp_path, res.c_path, DRIVER)


def test_compile_writes_nothing_on_error(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY main {\n  ROOT x = f32[2] parameter(0)\n  y = f32[3] negate(x)\n}\n")
    with pytest.raises(aotc.AotcError) as e:
        aotc.compile(str(bad), out=str(tmp_path / "out" / "libbad"))
    assert "bad.hlo:5:" in e.value.format()
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")


DOT = """HloModule dd
ENTRY main {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  ROOT c = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""

DEFENSIVE = r"""
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libdd.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); exit(1); } } while (0)
#define N 64

static float a[N * N], b[N * N], c[N * N], want[N * N];

static void* aligned(size_t bytes) {
    void* p = NULL;
    CHECK(posix_memalign(&p, 64, bytes) == 0);
    return p;
}

int main(void) {
    for (int i = 0; i < N * N; ++i) { a[i] = (float)(i % 7 - 3); b[i] = (float)(i % 5 - 2); }
    for (int i = 0; i < N; ++i)  /* small integers: every order of summation is exact */
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < N; ++k) s += a[i * N + k] * b[k * N + j];
            want[i * N + j] = s;
        }
    CHECK(DD_ARENA_BYTES > 0);  /* the GEMM packs into the arena: the size checks below are real */

    /* a NULL instance: an error code from every int function, NULL from the pointer ones */
    CHECK(dd_run(NULL) == dd_ERR_NULL_INSTANCE);
    CHECK(dd_set_arg_data(NULL, 0, a) == dd_ERR_NULL_INSTANCE);
    CHECK(dd_set_result_data(NULL, 0, c) == dd_ERR_NULL_INSTANCE);
    CHECK(dd_set_arena(NULL, NULL, 0) == dd_ERR_NULL_INSTANCE);
    CHECK(dd_set_num_threads(NULL, 2) == dd_ERR_NULL_INSTANCE);
    CHECK(dd_set_parallel_for(NULL, NULL, NULL) == dd_ERR_NULL_INSTANCE);
    CHECK(dd_arg_data(NULL, 0) == NULL && dd_result_data(NULL, 0) == NULL);
    CHECK(strcmp(dd_error_msg(NULL), "no instance") == 0);
    dd_destroy(NULL);

    /* modes are checked */
    CHECK(dd_create((dd_alloc_mode)3) == NULL && dd_create((dd_alloc_mode)-1) == NULL);

    /* the stateless entry: NULL arrays, a missing, small or misaligned arena */
    unsigned char* arena = (unsigned char*)aligned(DD_ARENA_BYTES + 64);
    void* args[2] = {a, b};
    void* results[1] = {c};
    CHECK(dd_run_with(NULL, NULL, NULL, 0) == dd_ERR_NULL_ARG);
    CHECK(dd_run_with(args, NULL, arena, DD_ARENA_BYTES) == dd_ERR_NULL_RESULT);
    CHECK(dd_run_with(args, results, NULL, 0) == dd_ERR_NO_ARENA);
    CHECK(dd_run_with(args, results, arena, DD_ARENA_BYTES - 1) == dd_ERR_ARENA_SIZE);
    CHECK(dd_run_with(args, results, arena + 8, DD_ARENA_BYTES) == dd_ERR_MISALIGNED);
    CHECK(dd_run_with(args, results, arena, DD_ARENA_BYTES) == dd_OK);
    CHECK(memcmp(c, want, sizeof c) == 0);

    /* an instance with the caller's arena: one too small is refused, never written */
    dd_instance* m = dd_create(dd_ALLOC_NONE);
    CHECK(m != NULL);
    CHECK(dd_set_arg_data(m, 0, a) == dd_OK && dd_set_arg_data(m, 1, b) == dd_OK);
    CHECK(dd_set_result_data(m, 0, c) == dd_OK);
    void* small = aligned(DD_ARENA_BYTES - 64 > 0 ? DD_ARENA_BYTES - 64 : 64);
    CHECK(dd_set_arena(m, small, DD_ARENA_BYTES - 64) == dd_ERR_ARENA_SIZE);
    CHECK(strstr(dd_error_msg(m), "smaller") != NULL);
    CHECK(dd_run(m) == dd_ERR_NO_ARENA);
    CHECK(dd_set_arena(m, arena + 8, DD_ARENA_BYTES) == dd_ERR_MISALIGNED);
    memset(c, 0, sizeof c);
    CHECK(dd_set_arena(m, arena, DD_ARENA_BYTES) == dd_OK && dd_run(m) == dd_OK);
    CHECK(memcmp(c, want, sizeof c) == 0);

    /* the thread count is bounded: nothing is started for an absurd one */
    CHECK(dd_set_num_threads(m, 0) == dd_ERR_THREADS);
    CHECK(dd_set_num_threads(m, DD_MAX_THREADS + 1) == dd_ERR_THREADS);
    CHECK(dd_set_num_threads(m, INT_MAX) == dd_ERR_THREADS);
    CHECK(strstr(dd_error_msg(m), "must be in [1, ") != NULL);
    memset(c, 0, sizeof c);
    CHECK(dd_set_num_threads(m, 2) == dd_OK && dd_run(m) == dd_OK);
    CHECK(memcmp(c, want, sizeof c) == 0);
    CHECK(dd_set_arena(m, NULL, 0) == dd_OK && dd_run(m) == dd_ERR_NO_ARENA);
    dd_destroy(m);
    free(small);
    free(arena);
    puts("ok");
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_defensive_api_under_sanitizers(tmp_path):
    """NULL anything, unknown modes, small or misaligned arenas and absurd thread counts get
    error codes; ASan sees no access through them."""
    model = tmp_path / "dd.hlo"
    model.write_text(DOT)
    res = aotc.compile(str(model), out=str(tmp_path / "libdd"), options=aotc.CompileOptions(name="dd", emit=()))
    _run_driver(tmp_path, res.c_path, DEFENSIVE)


BIG = """HloModule big
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2097152] parameter(0)
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=add
  n = f32[2097152] negate(x)
  ROOT t = (f32[], f32[2097152]) tuple(s, n)
}
"""

HUGE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libbig.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); exit(1); } } while (0)
#define N 2097152

#if HUGE_PAGES
/* The VmFlags line of the mapping holding p ("" when /proc/self/smaps has none). */
static void vm_flags(const void* p, char* out, size_t n) {
    out[0] = 0;
    FILE* f = fopen("/proc/self/smaps", "r");
    if (!f) return;
    char line[512];
    int inside = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char dash;
        if (sscanf(line, "%llx%c%llx ", &lo, &dash, &hi) == 3 && dash == '-')
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            size_t k = strlen(line + 8) < n ? strlen(line + 8) : n - 1;
            memcpy(out, line + 8, k);
            out[k] = 0;
            break;
        }
    }
    fclose(f);
}
#endif

int main(void) {
    big_instance* m = big_create(big_ALLOC_ALL);
    CHECK(m != NULL);
    float* x = (float*)big_arg_data(m, 0);
    float* n = (float*)big_result_data(m, 1);
    float* s = (float*)big_result_data(m, 0);
    CHECK((uintptr_t)s % 64 == 0 && *s == 0);
    for (size_t i = 0; i < N; ++i) CHECK(x[i] == 0 && n[i] == 0);  /* zeroed */
#if HUGE_PAGES
    /* 8 MiB blocks: whole 2 MiB pages, advised for huge pages */
    char flags[256];
    CHECK((uintptr_t)x % (2u << 20) == 0 && (uintptr_t)n % (2u << 20) == 0);
    vm_flags(x, flags, sizeof flags);
    CHECK(strstr(flags, " hg") != NULL);
    vm_flags(n, flags, sizeof flags);
    CHECK(strstr(flags, " hg") != NULL);
#endif
    for (size_t i = 0; i < N; ++i) x[i] = (float)(i % 3);  /* a sum exact in any order */
    CHECK(big_run(m) == big_OK);
    CHECK(*s == 2097151.0f && n[N - 1] == -(float)((N - 1) % 3) && n[2] == -2.0f);
    big_destroy(m);
    puts("ok");
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("build", ["sanitizers", "huge_pages"])
def test_large_buffers_are_huge_page_blocks(tmp_path, build):
    """Blocks an instance allocates are zeroed and 64-byte aligned (under ASan/UBSan, whose
    allocator places them); on Linux with transparent huge pages, blocks of 2 MiB or more are
    2 MiB aligned and advised MADV_HUGEPAGE: their mapping's VmFlags say `hg`."""
    model = tmp_path / "big.hlo"
    model.write_text(BIG)
    res = aotc.compile(str(model), out=str(tmp_path / "libbig"), options=aotc.CompileOptions(name="big", emit=()))
    if build == "sanitizers":
        _run_driver(tmp_path, res.c_path, HUGE.replace("#if HUGE_PAGES", "#if 0"))
        return
    if not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"):
        pytest.skip("this kernel has no transparent huge pages")
    drv, exe = tmp_path / "driver.c", str(tmp_path / "driver")
    drv.write_text(HUGE.replace("#if HUGE_PAGES", "#if 1"))
    r = subprocess.run(["gcc", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O2",
                        "-I", str(tmp_path), str(drv), res.c_path, "-lm", "-lpthread", "-o", exe],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
