"""Sort kernels after the kernel passes: the per-slice sort state stays inside its slice loop."""
from __future__ import annotations

import os

import pytest

from aotc import driver
from aotc.kernel import ir as K
from aotc.options import CompileOptions

CORPUS = os.path.join(os.path.dirname(__file__), "..", "data", "corpus")


def _program(case: str):
    d = os.path.join(CORPUS, case)
    fe = driver.frontend(os.path.join(d, "model.hlo"), os.path.join(d, "cfg.yaml"), CompileOptions())
    return driver.generate(fe, None, CompileOptions()).lowered.program


def _kernels(p):
    yield from p.kernels
    for q in p.subprograms:
        yield from _kernels(q)


def test_the_permutation_of_each_slice_is_built_inside_its_slice_loop():
    (k,) = [k for k in _program("op_sort").kernels if k.cname.endswith("sort_41")]
    (outer,) = [s for s in k.body if isinstance(s, K.Loop)]
    inside = {s.var.name for s in outer.body if isinstance(s, K.Decl)}
    assert {"perm", "tmp", "width"} <= inside
