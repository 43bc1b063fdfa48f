"""Two different models in one program, for the build-system tests: tfcompile's matmul
(`tests/data/corpus/tf_matmul`, its `y` bound from an .npz so the compile reads one) and
the f32 unary-op table (`op_unary_f32`, the embedded runtime's math helpers), each with a
C++ class in its own namespace. The C and C++ programs read every argument of both models
from stdin (raw bytes, in argument order), run both, and write every result to stdout;
`check_outputs` compares those bytes with XLA's outputs from the fixtures."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"

# (corpus case, C prefix, C++ class, bound parameter id and name) of each model
MODELS = (("tf_matmul", "mm", "ns_a::MatMul", (1, "y")), ("op_unary_f32", "unary", "ns_b::detail::Unary", None))

C_MAIN = r"""/* both models through their C APIs: stdin -> arguments, results -> stdout */
#include <stdio.h>
#include "mm.h"
#include "unary.h"

#define RUN(P, U, ok) do {                                                                  \
    P##_instance* m = P##_create(P##_ALLOC_ALL);                                         \
    ok = m != NULL;                                                                      \
    for (int i = 0; ok && i < U##_NUM_ARGS;  i++)                                         \
        ok = fread(P##_arg_data(m, i), 1, P##_arg_bytes(i), stdin) == P##_arg_bytes(i);  \
    ok = ok && P##_set_num_threads(m, 2) == P##_OK && P##_run(m) == P##_OK;              \
    for (int i = 0; ok && i < U##_NUM_RESULTS;  i++)                                      \
        ok = fwrite(P##_result_data(m, i), 1, P##_result_bytes(i), stdout) == P##_result_bytes(i); \
    P##_destroy(m);                                                                      \
} while (0)

int main(void) {
    int ok_mm, ok_unary;
    RUN(mm, MM, ok_mm);
    RUN(unary, UNARY, ok_unary);
    return ok_mm && ok_unary ? 0 : 1;
}
"""

CXX_MAIN = r"""// both models through their generated classes, in two namespaces
#include <cstdio>
#include "mm.h"
#include "unary.h"

template <class Model>
static bool run(Model& m) {
  if (!m.valid()) return false;
  for (size_t i = 0; i < Model::kNumArgs; i++)
    if (std::fread(m.arg_data(i), 1, Model::arg_size(i), stdin) != Model::arg_size(i)) return false;
  if (!m.set_num_threads(2) || !m.Run()) return false;
  for (size_t i = 0; i < Model::kNumResults; i++)
    if (std::fwrite(m.result_data(i), 1, Model::result_size(i), stdout) != Model::result_size(i)) return false;
  return true;
}

int main() {
  ns_a::MatMul mm;
  ns_b::detail::Unary unary;
  bool ok = run(mm);
  ok = run(unary) && ok;
  return ok ? 0 : 1;
}
"""


def write_models(root: Path) -> dict[str, tuple[Path, Path]]:
    """Copy both models into `root` with configs naming their C prefix and C++ class
    (matmul's `y` bound from `root/y.npz`): {prefix: (model, config)}."""
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for case, prefix, cls, bound in MODELS:
        src = CORPUS / case
        model = root / f"{prefix}.hlo"
        shutil.copyfile(src / "model.hlo", model)
        cfg = {"name": prefix, "cpp_class": cls, **yaml.safe_load((src / "cfg.yaml").read_text())}
        if bound is not None:
            number, name = bound
            cfg["feeds"] = [f for f in cfg["feeds"] if f["id"] != number]
            cfg["bound"] = {"file": f"{name}.npz", "params": [{"id": number, "key": name}]}
            with np.load(src / "inputs.npz") as z:
                np.savez(root / f"{name}.npz", **{name: z[name]})
        (root / f"{prefix}.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        out[prefix] = (model, root / f"{prefix}.yaml")
    return out


def _feeds(src: Path) -> list[str]:
    """The feed names of a corpus case, in parameter order."""
    return [f["name"] for f in yaml.safe_load((src / "cfg.yaml").read_text())["feeds"]]


def write_sources(root: Path) -> tuple[Path, Path]:
    c, cc = root / "main.c", root / "main.cc"
    c.write_text(C_MAIN)
    cc.write_text(CXX_MAIN)
    return c, cc


def stdin_bytes() -> bytes:
    """Every fed argument of both models, in argument order (matmul's `y` is bound)."""
    out = b""
    for case, _, _, bound in MODELS:
        names = [n for n in _feeds(CORPUS / case) if bound is None or n != bound[1]]
        with np.load(CORPUS / case / "inputs.npz") as z:
            out += b"".join(np.ascontiguousarray(z[n]).tobytes() for n in names)
    return out


def check_outputs(stdout: bytes, what: str) -> None:
    """`stdout` is XLA's outputs of both models (the fixtures' expected.npz, in fetch order),
    within each case's documented tolerance."""
    pos = 0
    for case, _, _, _ in MODELS:
        meta = json.loads((CORPUS / case / "meta.json").read_text())
        with np.load(CORPUS / case / "expected.npz") as z:
            for f in meta["fetches"]:
                want = z[f["name"]]
                n = want.nbytes
                assert pos + n <= len(stdout), f"{what}: output ends before {case}.{f['name']}"
                got = np.frombuffer(stdout[pos:pos + n], want.dtype).reshape(want.shape)
                pos += n
                if want.dtype.kind == "f":
                    np.testing.assert_allclose(got, want, rtol=meta["rtol"], atol=meta["atol"], equal_nan=True,
                                               err_msg=f"{what}: {case}.{f['name']}")
                else:
                    np.testing.assert_array_equal(got, want, err_msg=f"{what}: {case}.{f['name']}")
    assert pos == len(stdout), f"{what}: {len(stdout) - pos} bytes more than both models' results"


def aotc_wrapper(directory: Path) -> Path:
    """A program running `python -m aotc` from this tree (for AOTC_EXECUTABLE and AOTC)."""
    repo = Path(__file__).resolve().parents[2]
    path = directory / "aotc"
    path.write_text(f'#!/bin/sh\nPYTHONPATH="{repo}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" -m aotc "$@"\n')
    path.chmod(0o755)
    return path


def run_program(argv: list[str], what: str) -> None:
    """Run a built program on both models' inputs and check its outputs against XLA's."""
    r = subprocess.run(argv, input=stdin_bytes(), capture_output=True, timeout=120)
    assert r.returncode == 0, f"{what} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-2000:]}"
    check_outputs(r.stdout, what)
