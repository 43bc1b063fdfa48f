"""The run budget of the generated API: a model whose while loop never ends stops with
P_ERR_CANCELLED when its deadline passes (P_set_deadline) or another thread cancels it
(P_cancel), checked on every trip of the loop; the instance runs again afterwards. Built
with AddressSanitizer and UndefinedBehaviorSanitizer, and the cancel also under
ThreadSanitizer."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import aotc

ENDLESS = Path(__file__).resolve().parents[1] / "fuzz" / "corpus" / "endless.hlo"

DRIVER = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "libendless.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); exit(1); } } while (0)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void* canceller(void* arg) {
    struct timespec d = {0, 50 * 1000 * 1000};
    nanosleep(&d, NULL);
    CHECK(endless_cancel((endless_instance*)arg) == endless_OK);
    return NULL;
}

int main(void) {
    CHECK(endless_set_deadline(NULL, 1) == endless_ERR_NULL_INSTANCE);
    CHECK(endless_cancel(NULL) == endless_ERR_NULL_INSTANCE);
    endless_instance* m = endless_create(endless_ALLOC_ALL);
    CHECK(m != NULL);
    float* x = endless_arg_x_data(m);
    for (int i = 0; i < 4; ++i) x[i] = (float)i;

    /* a deadline of 30 ms stops the endless loop */
    CHECK(endless_set_deadline(m, 30u * 1000u * 1000u) == endless_OK);
    double t0 = now_s();
    CHECK(endless_run(m) == endless_ERR_CANCELLED);
    double spent = now_s() - t0;
    CHECK(spent >= 0.029 && spent < 5.0);
    CHECK(strstr(endless_error_msg(m), "deadline") != NULL);

    /* another thread cancels the run in progress */
    CHECK(endless_set_deadline(m, 0) == endless_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, canceller, m) == 0);
    CHECK(endless_run(m) == endless_ERR_CANCELLED);
    CHECK(strstr(endless_error_msg(m), "cancelled") != NULL);
    CHECK(pthread_join(t, NULL) == 0);

    /* a cancel with no run in progress stops the next run; then the flag is clear */
    CHECK(endless_cancel(m) == endless_OK);
    CHECK(endless_run(m) == endless_ERR_CANCELLED && strstr(endless_error_msg(m), "cancelled") != NULL);
    CHECK(endless_set_deadline(m, 10u * 1000u * 1000u) == endless_OK);
    CHECK(endless_run(m) == endless_ERR_CANCELLED && strstr(endless_error_msg(m), "deadline") != NULL);

    /* with threads, too; and an absurd deadline does not overflow */
    CHECK(endless_set_num_threads(m, 2) == endless_OK);
    CHECK(endless_run(m) == endless_ERR_CANCELLED);
    CHECK(endless_set_deadline(m, UINT64_MAX) == endless_OK);
    CHECK(pthread_create(&t, NULL, canceller, m) == 0);
    CHECK(endless_run(m) == endless_ERR_CANCELLED && strstr(endless_error_msg(m), "cancelled") != NULL);
    CHECK(pthread_join(t, NULL) == 0);
    endless_destroy(m);
    puts("ok");
    return 0;
}
"""

SANITIZERS = {
    "address": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"],
    "thread": ["-fsanitize=thread", "-fno-omit-frame-pointer"],
}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc with sanitizer runtimes")
@pytest.mark.parametrize("sanitizer", ["address", pytest.param("thread", marks=pytest.mark.slow)])
def test_an_endless_loop_stops_at_its_deadline_or_when_cancelled(tmp_path, sanitizer):
    res = aotc.compile(str(ENDLESS), out=str(tmp_path / "libendless"),
                       options=aotc.CompileOptions(name="endless", emit=()))
    drv = tmp_path / "driver.c"
    drv.write_text(DRIVER)
    exe = str(tmp_path / "driver")
    cmd = ["gcc", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
           *SANITIZERS[sanitizer], "-I", str(tmp_path), str(drv), res.c_path, "-lm", "-lpthread", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
