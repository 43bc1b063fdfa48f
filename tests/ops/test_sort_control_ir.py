"""Sort, top-k, while and conditional kernels are built as kernel IR: no C text, and the
per-slice sort state stays inside its slice loop after the kernel passes."""
from __future__ import annotations

import os

import pytest

from aotc import driver
from aotc.kernel import ir as K
from aotc.options import CompileOptions

CORPUS = os.path.join(os.path.dirname(__file__), "..", "data", "corpus")
_LEGACY = (K.LegacyC, K.LegacyBlock)


def _program(case: str):
    d = os.path.join(CORPUS, case)
    fe = driver.frontend(os.path.join(d, "model.hlo"), os.path.join(d, "cfg.yaml"), CompileOptions())
    return driver.generate(fe, None, CompileOptions()).lowered.program


def _kernels(p):
    yield from p.kernels
    for q in p.subprograms:
        yield from _kernels(q)


def _legacy_exprs(body) -> list[K.Expr]:
    out = []
    for s in K.walk(body):
        for e in K.stmt_exprs(s):
            stack = [e]
            while stack:
                x = stack.pop()
                if isinstance(x, K.LegacyExpr):
                    out.append(x)
                stack.extend(K.children(x))
    return out


@pytest.mark.parametrize("case,ops", [("op_sort", ("sort",)), ("tf_topk", ("top_k",)),
                                      ("op_while", ("while",)), ("tf_cond", ("cond",))])
def test_kernels_hold_no_c_text(case, ops):
    kernels = [k for k in _kernels(_program(case)) if any(o in k.cname for o in ops)]
    assert kernels
    for k in kernels:
        assert not [s for s in K.walk(k.body) if isinstance(s, _LEGACY)], k.cname
        assert not _legacy_exprs(k.body), k.cname


def test_the_permutation_of_each_slice_is_built_inside_its_slice_loop():
    (k,) = [k for k in _program("op_sort").kernels if k.cname.endswith("sort_41")]
    (outer,) = [s for s in k.body if isinstance(s, K.Loop)]
    inside = {s.var.name for s in outer.body if isinstance(s, K.Decl)}
    assert {"perm", "tmp", "width"} <= inside
