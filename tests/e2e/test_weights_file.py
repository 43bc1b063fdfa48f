"""`--weights file`: PREFIX.weights written beside the library, loaded by
`P_load_weights` or mapped by `P_set_weights`, against XLA's outputs for two weight sets
in one process (tests/data/weights/mlp); a wrong, truncated, corrupt or misaligned file
is an error code with a message; the C harness runs under ASan and UBSan."""
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

import aotc
from aotc.emit_c.weights_file import HEADER_BYTES, MAGIC, VERSION, read_weights_header
from aotc.errors import AotcError

from .conftest import from_npz

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "weights", "mlp")
MODEL = os.path.join(DATA, "model.hlo")
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libmlp.h"

static void* slurp(const char* path, size_t* size, size_t shift) {
    FILE* f = fopen(path, "rb");
    if (!f) exit(3);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char* p = (unsigned char*)aligned_alloc(64, (*size + shift + 63) / 64 * 64);
    if (!p || fread(p + shift, 1, *size, f) != *size) exit(4);
    fclose(f);
    return p;
}

static int run_x(mlp_instance* m, const char* xin, const char* yout) {
    size_t n;
    float* x = (float*)slurp(xin, &n, 0);
    memcpy(mlp_arg_x_data(m), x, MLP_ARG0_BYTES);
    free(x);
    int rc = mlp_run(m);
    if (rc == mlp_OK && yout) {
        FILE* f = fopen(yout, "wb");
        fwrite(mlp_result_y_data(m), 1, MLP_RESULT0_BYTES, f);
        fclose(f);
    }
    return rc;
}

int main(int argc, char** argv) {
    /* argv: weights_a weights_b x.bin y_a.bin y_b.bin bad files... */
    mlp_instance* a = mlp_create(mlp_ALLOC_ALL);
    mlp_instance* b = mlp_create(mlp_ALLOC_ALL);
    printf("unset %d %s\n", run_x(a, argv[3], 0), mlp_error_msg(a));
    printf("run_with %d\n", mlp_run_with(0, 0, 0, 0));
    printf("load_a %d %s\n", mlp_load_weights(a, argv[1]), mlp_error_msg(a));
    size_t size;
    void* wb = slurp(argv[2], &size, 0);             /* zero copy: b points into wb */
    printf("set_b %d %s\n", mlp_set_weights(b, wb, size), mlp_error_msg(b));
    printf("run_a %d\n", run_x(a, argv[3], argv[4]));
    printf("run_b %d\n", run_x(b, argv[3], argv[5]));
    void* shifted = slurp(argv[2], &size, 1);
    printf("misaligned %d %s\n", mlp_set_weights(b, (unsigned char*)shifted + 1, size), mlp_error_msg(b));
    free(shifted);
    printf("null %d %s\n", mlp_set_weights(b, 0, 0), mlp_error_msg(b));
    printf("short %d %s\n", mlp_set_weights(b, wb, size - 1), mlp_error_msg(b));
    printf("missing %d %s\n", mlp_load_weights(a, "no/such/file.weights"), mlp_error_msg(a));
    for (int i = 6; i < argc; ++i)
        printf("bad%d %d %s\n", i - 6, mlp_load_weights(a, argv[i]), mlp_error_msg(a));
    /* failed loads changed nothing: each instance still runs with its own weights */
    printf("rerun_a %d\n", run_x(a, argv[3], argv[4]));
    printf("rerun_b %d\n", run_x(b, argv[3], argv[5]));
    printf("null_instance %d\n", mlp_load_weights(0, argv[1]));
    mlp_destroy(a);
    mlp_destroy(b);
    free(wb);
    return 0;
}
"""


def _compile(tmp_path, key: str, emit=(), **kw):
    return aotc.compile(MODEL, config=os.path.join(DATA, f"cfg_{key}.yaml"), out=str(tmp_path / key / "libmlp"),
                        weights="file", emit=emit, **kw)


def _bad_files(tmp_path, good: bytes) -> list[tuple[str, bytes]]:
    def patched(offset: int, data: bytes) -> bytes:
        return good[:offset] + data + good[offset + len(data):]

    table_offset = struct.unpack_from("<Q", good, HEADER_BYTES)[0]
    return [("magic", patched(0, b"NOTAOTC\0")),
            ("version", patched(8, struct.pack("<I", VERSION + 1))),
            ("hash", patched(16, bytes([good[16] ^ 1]))),
            ("count", patched(12, struct.pack("<I", 3))),
            ("truncated", good[:len(good) // 2]),
            ("header_only", good[:40]),
            ("empty", b""),
            ("table_misaligned", patched(HEADER_BYTES, struct.pack("<Q", table_offset + 4))),
            ("table_past_end", patched(HEADER_BYTES, struct.pack("<Q", len(good) - 64))),
            ("size_field", patched(48, struct.pack("<Q", 1 << 62)))]


EXPECTED_ERRORS = {"magic": "bad magic", "version": "version", "hash": "another model",
                   "count": "another model", "truncated": "truncated", "header_only": "truncated",
                   "empty": "truncated", "table_misaligned": "corrupt", "table_past_end": "corrupt",
                   "size_field": "truncated"}


def test_weights_file_round_trip_two_sets_and_errors(tmp_path):
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("needs gcc (with AddressSanitizer) to build the C harness")
    ra, rb = _compile(tmp_path, "a"), _compile(tmp_path, "b")
    # one library for every weight set: the C text does not depend on the weights
    assert (tmp_path / "a" / "libmlp.c").read_bytes() == (tmp_path / "b" / "libmlp.c").read_bytes()
    assert ra.weights_path and os.path.exists(ra.weights_path) and not os.path.exists(ra.c_path + ".bin")
    good = (tmp_path / "a" / "libmlp.weights").read_bytes()
    assert good[:8] == MAGIC
    head = read_weights_header(good)
    assert head.version == VERSION
    assert [t[0] for t in head.tensors] == ["w1 f32[64,32]", "b1 f32[32]", "w2 f32[32,10]", "scale bf16[10]"]
    assert all(off % 64 == 0 for _, off, _ in head.tensors) and len(good) % 64 == 0
    with np.load(os.path.join(DATA, "weights_a.npz")) as z:
        _, off, n = head.tensors[0]
        assert good[off:off + n] == z["w1"].tobytes()
        _, off, n = head.tensors[3]
        assert good[off:off + n] == z["scale"].tobytes()  # bf16 as its bits
    bad = _bad_files(tmp_path, good)
    other = aotc.compile(MODEL, config=_other_config(tmp_path), out=str(tmp_path / "other" / "libmlp"),
                         weights="file", emit=())
    bad.append(("other_model", open(other.weights_path, "rb").read()))
    for name, data in bad:
        (tmp_path / f"{name}.weights").write_bytes(data)

    with np.load(os.path.join(DATA, "inputs.npz")) as z:
        z["x"].tofile(tmp_path / "x.bin")
    (tmp_path / "main.c").write_text(HARNESS)
    exe = tmp_path / "harness"
    subprocess.run([cc, "-std=c11", "-O0", "-Wall", "-Wextra", "-Werror", *SAN, f"-I{tmp_path / 'a'}",
                    str(tmp_path / "main.c"), ra.c_path, "-o", str(exe), "-lm", "-lpthread"], check=True)
    files = [str(tmp_path / n) for n in ("a/libmlp.weights", "b/libmlp.weights", "x.bin", "y_a.bin", "y_b.bin")]
    proc = subprocess.run([str(exe), *files, *(str(tmp_path / f"{n}.weights") for n, _ in bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in proc.stdout.splitlines()}
    err_weights, err_misaligned = "16", "4"
    assert lines["unset"].startswith(err_weights + " no weights set: call mlp_load_weights")
    assert lines["run_with"] == err_weights
    assert lines["load_a"] == "0 " and lines["set_b"] == "0 "
    assert lines["run_a"] == lines["run_b"] == lines["rerun_a"] == lines["rerun_b"] == "0"
    assert lines["misaligned"] == err_misaligned + " the weights data is not 64-byte aligned"
    assert lines["null"] == err_weights + " no weights data"
    assert lines["short"] == err_weights + " the weights file is truncated"
    assert lines["missing"] == err_weights + " cannot open the weights file no/such/file.weights"
    assert lines["null_instance"] == "8"
    for i, (name, _) in enumerate(bad):
        code, msg = lines[f"bad{i}"].split(" ", 1)
        assert code == err_weights and EXPECTED_ERRORS.get(name, "another model") in msg, (name, msg)

    with np.load(os.path.join(DATA, "expected.npz")) as z:
        for key in ("a", "b"):
            y = np.fromfile(tmp_path / f"y_{key}.bin", np.float32).reshape(8, 10)
            np.testing.assert_allclose(y, from_npz(z[f"y_{key}"], "f32"), rtol=1e-5, atol=1e-5)


def _other_config(tmp_path) -> str:
    """The same model with only w1 and b1 in the weights file: another model's file."""
    path = tmp_path / "other.yaml"
    path.write_text(f"name: mlp\nfeeds:\n  - {{id: 0, name: x}}\n  - {{id: 3, name: w2}}\n  - {{id: 4, name: scale}}\n"
                    f"bound:\n  file: {os.path.abspath(os.path.join(DATA, 'weights_a.npz'))}\n  params:\n"
                    "    - {id: 1, key: w1}\n    - {id: 2, key: b1}\n")
    return str(path)


def test_python_load_reads_the_weights_file(tmp_path):
    res = _compile(tmp_path, "a", emit=("so",), opt_level="-O0")
    model = aotc.load(res)  # loads libmlp.weights, written beside the library
    with np.load(os.path.join(DATA, "inputs.npz")) as z:
        x = z["x"]
    with np.load(os.path.join(DATA, "expected.npz")) as z:
        expected = {k: from_npz(z[k], "f32") for k in z.files}
    (y,) = model(x)
    np.testing.assert_allclose(y, expected["y_a"], rtol=1e-5, atol=1e-5)
    model.load_weights(_compile(tmp_path, "b").weights_path)  # the same library, the other weight set
    (y,) = model(x)
    np.testing.assert_allclose(y, expected["y_b"], rtol=1e-5, atol=1e-5)
    (tmp_path / "bad.weights").write_bytes(b"\0" * 64)
    with pytest.raises(AotcError, match="bad magic"):
        model.load_weights(tmp_path / "bad.weights")


def test_weights_files_are_deterministic(tmp_path):
    _compile(tmp_path / "1", "a")
    _compile(tmp_path / "2", "a")
    for ext in (".c", ".h", ".weights"):
        assert (tmp_path / "1/a" / f"libmlp{ext}").read_bytes() == (tmp_path / "2/a" / f"libmlp{ext}").read_bytes()


def test_weights_file_needs_bound_parameters(tmp_path):
    with pytest.raises(AotcError, match="binds no parameters"):
        aotc.compile(MODEL, out=str(tmp_path / "libmlp"), weights="file", emit=())


def test_header_declares_the_weights_api(tmp_path):
    h = open(_compile(tmp_path, "a").h_path).read()
    for decl in ("#define MLP_NUM_WEIGHTS 4", "#define MLP_WEIGHTS_VERSION 1", "mlp_ERR_WEIGHTS = 16",
                 "int mlp_load_weights(mlp_instance* m, const char* path);",
                 "int mlp_set_weights(mlp_instance* m, const void* data, size_t size);"):
        assert decl in h


def test_cpp_class_loads_weights(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("needs g++ to check the header as C++11")
    cfg = tmp_path / "cpp.yaml"
    cfg.write_text(open(os.path.join(DATA, "cfg_a.yaml")).read().replace("name: mlp\n", "name: mlp\ncpp_class: ns::Mlp\n")
                   .replace("file: weights_a.npz", f"file: {os.path.abspath(os.path.join(DATA, 'weights_a.npz'))}"))
    res = aotc.compile(MODEL, config=str(cfg), out=str(tmp_path / "libmlp"), weights="file", emit=())
    (tmp_path / "use.cc").write_text('#include "libmlp.h"\nbool f(ns::Mlp& m, const void* p, size_t n) {\n'
                                     '  return m.load_weights("libmlp.weights") && m.set_weights(p, n);\n}\n')
    subprocess.run(["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{tmp_path}",
                    str(tmp_path / "use.cc")], check=True)
    assert res.weights_path
