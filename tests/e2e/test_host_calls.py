"""Calls into the application, from C: custom calls through the C ABI of
docs/custom_calls.md, infeed/outfeed in a streaming while loop, send/recv, and tokens
(after-all, add-dependency, token parameters and results, through tuples, while and
conditional). Each model of host_models.py is compiled, linked with a C application that
implements its custom calls or callbacks, and run. The expected values are XLA:CPU's
outputs for the *equivalent* module -- the same computation with each custom call replaced
by the HLO computing it, and feeds replaced by parameters and results -- recorded in
data/host_calls.npz by gen_host_expected.py (never computed by aotc)."""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import aotc
from tests.e2e import host_models as H

DATA = np.load(os.path.join(os.path.dirname(__file__), "data", "host_calls.npz"))
CC = shutil.which("gcc") or shutil.which("cc")
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
pytestmark = pytest.mark.skipif(CC is None, reason="needs a C compiler")


def c_array(ctype: str, name: str, a: np.ndarray) -> str:
    """A C array holding `a` exactly (floats as hex literals)."""
    flat = np.asarray(a).ravel()
    if flat.dtype == np.float32:
        vals = [float(v).hex() + "f" for v in flat]
    else:
        vals = [str(int(v)) for v in flat]
    return f"static const {ctype} {name}[{len(vals)}] = {{{', '.join(vals)}}};\n"


def build(tmp_path, model: str, name: str, app: str, *, custom_calls=(), extra=(), san=False) -> str:
    """Compile `model` (C prefix `name`) and link it with the application `app`; the executable."""
    hlo = tmp_path / f"{name}.hlo"
    hlo.write_text(model)
    res = aotc.compile(str(hlo), out=str(tmp_path / f"lib{name}"),
                       options=aotc.CompileOptions(name=name, emit=(), custom_calls=tuple(custom_calls)))
    (tmp_path / "app.c").write_text(app)
    exe = str(tmp_path / "app")
    cmd = [CC, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O1", *(SAN if san else ()),
           *extra, "-I", str(tmp_path), str(tmp_path / "app.c"), res.c_path, "-lm", "-lpthread", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return exe


def run_ok(exe: str) -> None:
    r = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-3000:] + r.stderr[-3000:]


CHECK = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); exit(1); } } while (0)
static inline int close_to(const float* got, const float* want, int n, double rtol, double atol) {
    for (int i = 0; i < n; ++i)
        if (!(fabs((double)got[i] - (double)want[i]) <= atol + rtol * fabs((double)want[i]))) {
            fprintf(stderr, "element %d: %.9g, expected %.9g\n", i, (double)got[i], (double)want[i]);
            return 0;
        }
    return 1;
}
"""

# ---------------------------------------------------------------- custom calls

CUSTOM_APP = r"""
#include "libcc.h"
/* y = x * scale + shift, the attributes read from the typed FFI table */
int cc_cc_my_affine(const cc_call* call) {
    double scale = 0; int64_t shift = 0; const char* note = "";
    for (int i = 0; i < call->num_attrs; ++i) {
        const cc_attr* a = &call->attrs[i];
        if (!strcmp(a->name, "scale") && a->kind == cc_ATTR_F64 && !strcmp(a->type, "f32")) scale = a->f;
        else if (!strcmp(a->name, "shift") && a->kind == cc_ATTR_I64 && !strcmp(a->type, "i32")) shift = a->i;
        else if (!strcmp(a->name, "note") && a->kind == cc_ATTR_STR) note = a->s;
        else { snprintf(call->error, call->error_size, "unexpected attribute %s", a->name); return 2; }
    }
    if (call->num_args != 1 || call->num_results != 1 || call->args[0].type != cc_TYPE_F32
        || call->args[0].rank != 2 || strcmp(note, "affine") != 0 || call->backend_config[0] != 0) {
        snprintf(call->error, call->error_size, "unexpected call of %s", call->target);
        return 3;
    }
    if (fail_affine) { snprintf(call->error, call->error_size, "scale %g refused", scale); return 42; }
    calls++;
    const float* x = (const float*)call->args[0].data;
    float* y = (float*)call->results[0].data;
    int64_t n = call->args[0].dims[0] * call->args[0].dims[1];
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * (float)scale + (float)shift;
    return 0;
}
/* s[i] = sum over the row of y*y (backend_config "sumsq") */
int cc_cc_row_sumsq(const cc_call* call) {
    if (strcmp(call->backend_config, "sumsq") != 0 || call->num_attrs != 0 || call->results[0].rank != 1)
        return 5;
    calls++;
    CHECK(call->user == expect_user);  /* set_custom_call_user's pointer; run_with has none */
    const float* y = (const float*)call->args[0].data;
    float* s = (float*)call->results[0].data;
    int64_t rows = call->args[0].dims[0], cols = call->args[0].dims[1];
    CHECK(call->results[0].dims[0] == rows && call->results[0].bytes == (size_t)rows * 4u);
    for (int64_t r = 0; r < rows; ++r) {
        double acc = 0;
        for (int64_t c = 0; c < cols; ++c) acc += (double)y[r * cols + c] * (double)y[r * cols + c];
        s[r] = (float)acc;
    }
    return 0;
}
int main(void) {
    cc_instance* m = cc_create(cc_ALLOC_ALL);
    CHECK(m != NULL);
    CHECK(cc_set_custom_call_user(m, &calls) == cc_OK);
    expect_user = &calls;
    memcpy(cc_arg_x_data(m), X, sizeof X);
    CHECK(cc_run(m) == cc_OK && calls == 2);
    CHECK(close_to(cc_result_yx_data(m), YX, (int)(sizeof YX / sizeof YX[0]), 1e-6, 1e-6));
    CHECK(close_to(cc_result_s_data(m), S, (int)(sizeof S / sizeof S[0]), 1e-5, 1e-4));
    /* a failing implementation: the run returns ERR_CUSTOM_CALL with its message, and the
       custom call after it does not run */
    fail_affine = 1; calls = 0;
    CHECK(cc_run(m) == cc_ERR_CUSTOM_CALL);
    CHECK(strstr(cc_error_msg(m), "custom-call y (target my_affine) failed (42): scale 1.5 refused") != NULL);
    CHECK(calls == 0);
    fail_affine = 0;
    CHECK(cc_run(m) == cc_OK && cc_error_msg(m)[0] == 0 && calls == 2);
    /* the stateless entry runs custom calls too */
    static float yx[64 * 256], s[64];
    void* args[1] = {(void*)X};
    void* results[2] = {yx, s};
    static unsigned char arena[1 << 20] __attribute__((aligned(64)));
    CHECK(CC_ARENA_BYTES <= sizeof arena);
    expect_user = 0;
    CHECK(cc_run_with(args, results, arena, sizeof arena) == cc_OK);
    CHECK(close_to(yx, YX, 64 * 256, 1e-6, 1e-6));
    cc_destroy(m);
    puts("ok");
    return 0;
}
"""


def custom_app() -> str:
    return (CHECK + "static int calls, fail_affine;\nstatic void* expect_user;\n" + c_array("float", "X", DATA["custom_x"])
            + c_array("float", "YX", DATA["custom_yx"]) + c_array("float", "S", DATA["custom_s"]) + CUSTOM_APP)


def test_custom_calls_match_xla(tmp_path):
    run_ok(build(tmp_path, H.CUSTOM, "cc", custom_app(), custom_calls=("my_affine", "row_sumsq")))


def test_missing_custom_call_definition_is_a_link_error(tmp_path):
    app = "#include \"libcc.h\"\nint cc_cc_my_affine(const cc_call* c) { (void)c; return 0; }\n" \
          "int main(void) { cc_instance* m = cc_create(cc_ALLOC_ALL); int rc = cc_run(m); cc_destroy(m); return rc; }\n"
    with pytest.raises(AssertionError) as e:
        build(tmp_path, H.CUSTOM, "cc", app, custom_calls=("my_affine", "row_sumsq"))
    assert "cc_cc_row_sumsq" in str(e.value)


def test_header_declares_the_abi_and_compiles_as_cpp(tmp_path):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(H.CUSTOM)
    res = aotc.compile(str(hlo), out=str(tmp_path / "libcc"),
                       options=aotc.CompileOptions(name="cc", emit=(), custom_calls=("my_affine", "row_sumsq")))
    h = open(res.h_path).read()
    assert 'extern int cc_cc_my_affine(const cc_call* call);  /* custom_call_target "my_affine" */' in h
    assert "cc_ERR_CUSTOM_CALL = 11" in h and "cc_TYPE_F32 = 11" in h
    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx:
        (tmp_path / "t.cpp").write_text('#include "libcc.h"\nint main() { return 0; }\n')
        r = subprocess.run([cxx, "-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", str(tmp_path),
                            str(tmp_path / "t.cpp")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    # deterministic: the same input gives the same bytes
    os.makedirs(tmp_path / "again")
    res2 = aotc.compile(str(hlo), out=str(tmp_path / "again" / "libcc"),
                        options=aotc.CompileOptions(name="cc", emit=(), custom_calls=("my_affine", "row_sumsq")))
    assert open(res.c_path).read() == open(res2.c_path).read()
    assert open(res.h_path).read() == open(res2.h_path).read()


# ---------------------------------------------------------------- infeed / outfeed

STREAM_APP = r"""
#include "libst.h"
typedef struct { int next; int drained; float ys[10][256]; int limit; } queue;
static int feed(void* user, int64_t channel, st_buffer* b, int count, char* error, size_t size) {
    queue* q = (queue*)user;
    CHECK(channel == 0 && count == 2 && b[0].type == st_TYPE_F32 && b[0].rank == 1 && b[0].dims[0] == 256);
    CHECK(b[1].type == st_TYPE_S32 && b[1].rank == 0 && b[1].bytes == 4);
    if (q->next >= 10) { snprintf(error, size, "the infeed is empty"); return 3; }
    memcpy(b[0].data, XS + q->next * 256, 256 * sizeof(float));
    memcpy(b[1].data, &KS[q->next], sizeof(int32_t));
    q->next++;
    return 0;
}
static int drain(void* user, int64_t channel, st_buffer* b, int count, char* error, size_t size) {
    queue* q = (queue*)user;
    CHECK(channel == 0 && count == 1 && b[0].bytes == 256 * sizeof(float));
    if (q->drained >= q->limit) { snprintf(error, size, "outfeed full at %d", q->drained); return 9; }
    CHECK(q->drained == q->next - 1);  /* program order: each outfeed after its infeed */
    memcpy(q->ys[q->drained++], b[0].data, b[0].bytes);
    return 0;
}
int main(void) {
    st_instance* m = st_create(st_ALLOC_ALL);
    CHECK(m != NULL);
    memcpy(st_arg_a_data(m), A, sizeof A);
    *st_arg_n_data(m) = 10;
    /* no callbacks: an error code and a message, not a crash */
    CHECK(st_run(m) == st_ERR_CALLBACK);
    CHECK(strstr(st_error_msg(m), "infeed") && strstr(st_error_msg(m), "st_set_infeed"));
    static queue q;
    q.limit = 10;
    CHECK(st_set_infeed(m, feed, &q) == st_OK && st_set_outfeed(m, drain, &q) == st_OK);
    CHECK(st_run(m) == st_OK);
    CHECK(q.next == 10 && q.drained == 10);
    CHECK(close_to(st_result_acc_data(m), ACC, 256, 1e-6, 1e-6));
    CHECK(close_to(&q.ys[0][0], YS, 10 * 256, 1e-6, 1e-6));
    /* a callback failing: its code and message; nothing runs after it */
    q.next = 0; q.drained = 0; q.limit = 4;
    CHECK(st_run(m) == st_ERR_CALLBACK);
    CHECK(strstr(st_error_msg(m), "outfeed") && strstr(st_error_msg(m), "failed (9): outfeed full at 4"));
    CHECK(q.next == 5 && q.drained == 4);
    /* with threads: the same */
    CHECK(st_set_num_threads(m, 3) == st_OK);
    q.next = 0; q.drained = 0; q.limit = 10;
    CHECK(st_run(m) == st_OK && q.drained == 10);
    CHECK(close_to(st_result_acc_data(m), ACC, 256, 1e-6, 1e-6));
    st_destroy(m);
    puts("ok");
    return 0;
}
"""


def stream_app() -> str:
    return (CHECK + c_array("float", "A", DATA["stream_a"]) + c_array("float", "XS", DATA["stream_xs"])
            + c_array("int32_t", "KS", DATA["stream_ks"]) + c_array("float", "ACC", DATA["stream_acc"])
            + c_array("float", "YS", DATA["stream_ys"]) + STREAM_APP)


def test_streaming_infeed_outfeed_match_xla(tmp_path):
    run_ok(build(tmp_path, H.STREAM, "st", stream_app()))


# ---------------------------------------------------------------- send / recv, tokens

SENDRECV_APP = r"""
#include "libsr.h"
static float sent[128];
static int order;
static int recv5(void* user, int64_t channel, sr_buffer* b, int count, char* error, size_t size) {
    (void)user; (void)error; (void)size;
    CHECK(channel == 5 && count == 1 && b[0].dims[0] == 128 && order == 0);
    memcpy(b[0].data, R, sizeof R);
    order = 1;
    return 0;
}
static int send7(void* user, int64_t channel, sr_buffer* b, int count, char* error, size_t size) {
    (void)user; (void)error; (void)size;
    CHECK(channel == 7 && count == 1 && order == 1);
    memcpy(sent, b[0].data, sizeof sent);
    order = 2;
    return 0;
}
int main(void) {
    sr_instance* m = sr_create(sr_ALLOC_ALL);
    CHECK(SR_NUM_ARGS == 2 && SR_NUM_RESULTS == 1);  /* tokens: no argument, no result */
    CHECK(sr_set_recv(m, 6, recv5, 0) == sr_ERR_INDEX);
    CHECK(sr_set_recv(m, 5, recv5, 0) == sr_OK && sr_set_send(m, 7, send7, 0) == sr_OK);
    memcpy(sr_arg_x_data(m), X, sizeof X);
    for (int flag = 0; flag < 2; ++flag) {
        *sr_arg_p_data(m) = (uint8_t)flag;
        order = 0;
        CHECK(sr_run(m) == sr_OK && order == 2);
        CHECK(close_to(sr_result_v_data(m), flag ? V1 : V0, 128, 1e-6, 1e-6));
        CHECK(close_to(sent, flag ? SENT1 : SENT0, 128, 1e-6, 1e-6));
    }
    sr_destroy(m);
    puts("ok");
    return 0;
}
"""


def sendrecv_app() -> str:
    return (CHECK + "".join(c_array("float", n.upper(), DATA[f"sendrecv_{n.lower()}"]) for n in ("x", "r"))
            + c_array("float", "V0", DATA["sendrecv_v_0"]) + c_array("float", "V1", DATA["sendrecv_v_1"])
            + c_array("float", "SENT0", DATA["sendrecv_sent_0"]) + c_array("float", "SENT1", DATA["sendrecv_sent_1"])
            + SENDRECV_APP)


def test_send_recv_and_tokens_match_xla(tmp_path):
    run_ok(build(tmp_path, H.SENDRECV, "sr", sendrecv_app()))


@pytest.mark.slow
@pytest.mark.parametrize("which", ["custom", "stream", "sendrecv"])
def test_under_sanitizers_and_clang(tmp_path, which):
    model, name, app, ccs = {"custom": (H.CUSTOM, "cc", custom_app(), ("my_affine", "row_sumsq")),
                             "stream": (H.STREAM, "st", stream_app(), ()),
                             "sendrecv": (H.SENDRECV, "sr", sendrecv_app(), ())}[which]
    run_ok(build(tmp_path, model, name, app, custom_calls=ccs, san=True))
    clang = shutil.which("clang")
    if clang:
        r = subprocess.run([clang, "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", str(tmp_path / f"lib{name}.c"),
                            "-o", str(tmp_path / "x.o")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


LOOP_APP = r"""
#include "libcl.h"
static int logs;
int cl_cc_split(const cl_call* c) {
    CHECK(c->num_args == 2 && c->num_results == 2 && c->results[1].rank == 0 && c->args[1].type == cl_TYPE_S32);
    CHECK(c->num_attrs == 1 && c->attrs[0].f == (double)0.1f);  /* an f32 attribute: its f32 value */
    memcpy(c->results[0].data, c->args[0].data, c->args[0].bytes);
    memcpy(c->results[1].data, c->args[1].data, 4);
    return 0;
}
int cl_cc_log(const cl_call* c) { CHECK(c->num_results == 0 && c->num_args == 1); logs++; return 0; }
int cl_cc_split2(const cl_call* c) {
    CHECK(c->num_args == 2 && c->args[0].bytes == 64);  /* a constant operand */
    memcpy(c->results[0].data, c->args[1].data, 64);
    return 0;
}
int main(void) {
    cl_instance* m = cl_create(cl_ALLOC_ALL);
    CHECK(cl_run(m) == cl_OK && logs == 3);  /* the side-effecting call runs once a trip */
    cl_destroy(m);
    puts("ok");
    return 0;
}
"""


def test_custom_calls_in_a_loop_with_tuple_and_empty_results(tmp_path):
    """Custom calls inside a while body: a tuple result, a side-effecting call with no result
    (called every trip though nothing reads it), a constant operand."""
    model = open(os.path.join(os.path.dirname(__file__), "data", "custom_calls_in_loop.hlo")).read()
    run_ok(build(tmp_path, model, "cl", CHECK + LOOP_APP, custom_calls=("split", "log", "split2")))


# ---------------------------------------------------------------- sub-byte integers

SUBBYTE = """HloModule subbyte

ENTRY main {
  t0 = token[] after-all()
  f = ((s4[64], u2[8]), token[]) infeed(t0)
  d = (s4[64], u2[8]) get-tuple-element(f), index=0
  x = s4[64] get-tuple-element(d), index=0
  t1 = token[] get-tuple-element(f), index=1
  t2 = token[] outfeed(d, t1), outfeed_shape=(s4[64], u2[8])
  ROOT r = s4[64] copy(x)
}
"""

SUBBYTE_APP = r"""
#include "libsb.h"
static uint8_t xs[64], us[8], got_x[64], got_u[8];
static int feed(void* user, int64_t channel, sb_buffer* b, int count, char* error, size_t size) {
    (void)user; (void)error; (void)size;
    CHECK(channel == 0 && count == 2 && b[0].type == sb_TYPE_S4 && b[0].type == 21 && b[0].bytes == 64);
    CHECK(b[1].type == sb_TYPE_U2 && b[1].type == 27 && b[1].rank == 1 && b[1].dims[0] == 8 && b[1].bytes == 8);
    memcpy(b[0].data, xs, 64);
    memcpy(b[1].data, us, 8);
    return 0;
}
static int drain(void* user, int64_t channel, sb_buffer* b, int count, char* error, size_t size) {
    (void)user; (void)channel; (void)error; (void)size;
    CHECK(count == 2 && b[0].type == sb_TYPE_S4 && b[1].type == sb_TYPE_U2 && b[0].bytes == 64 && b[1].bytes == 8);
    memcpy(got_x, b[0].data, 64);
    memcpy(got_u, b[1].data, 8);
    return 0;
}
int main(void) {
    for (int i = 0; i < 64; ++i) xs[i] = (uint8_t)((i * 7 - 30) & 0xF);  /* s4 -8..7: its 4 bits */
    for (int i = 0; i < 8; ++i) us[i] = (uint8_t)(i & 3);
    sb_instance* m = sb_create(sb_ALLOC_ALL);
    CHECK(m != NULL);
    CHECK(sb_set_infeed(m, feed, 0) == sb_OK && sb_set_outfeed(m, drain, 0) == sb_OK);
    CHECK(sb_run(m) == sb_OK);
    CHECK(memcmp(got_x, xs, 64) == 0 && memcmp(got_u, us, 8) == 0);
    CHECK(memcmp(sb_result_r_data(m), xs, 64) == 0);
    sb_destroy(m);
    puts("ok");
    return 0;
}
"""


def test_subbyte_integers_pass_one_value_a_byte(tmp_path):
    """s4/u2 values reach the application and come back as one value a byte in the low bits,
    typed by XLA's PrimitiveType numbers."""
    run_ok(build(tmp_path, SUBBYTE, "sb", CHECK + SUBBYTE_APP, san=True))
