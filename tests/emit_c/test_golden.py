"""Golden snapshots of generated .c/.h (runtime section elided), so a refactor
of lowering or emission shows as a diff. `pytest --update-golden` rewrites them."""
import os
import re

import pytest

from aotc.driver import frontend, generate
from aotc.options import CompileOptions

HERE = os.path.dirname(__file__)
DATA = os.path.join(HERE, "..", "data")
CASES = {
    "matmul_and_add": "corpus/tf_matmul_and_add/model.hlo",
    "reduce": "corpus/op_reduce/model.hlo",
    "shape_ops_opt": "corpus/op_shape_ops/model.opt.hlo",
    "variable": "corpus/tf_variable/model.hlo",
}
RUNTIME = re.compile(r"(/\* -+ runtime \*/\n).*?(\n/\* -+ constants \*/)", re.S)


def _generate(rel: str):
    path = os.path.join(DATA, rel)
    cfg = os.path.join(os.path.dirname(path), "cfg.yaml")
    fe = frontend(path, cfg, CompileOptions())
    gen = generate(fe, "libgolden", CompileOptions(source_name=os.path.basename(path)))
    return RUNTIME.sub(r"\1/* (embedded runtime elided in this snapshot) */\2", gen.c_text), gen.h_text


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name, request):
    c_text, h_text = _generate(CASES[name])
    for ext, text in (("c", c_text), ("h", h_text)):
        golden = os.path.join(HERE, "golden", f"{name}.{ext}")
        if request.config.getoption("--update-golden") or not os.path.exists(golden):
            with open(golden, "w") as f:
                f.write(text)
        with open(golden) as f:
            assert text == f.read(), f"{golden} differs; rerun with --update-golden if intended"


@pytest.mark.parametrize("name", sorted(CASES))
def test_deterministic(name):
    assert _generate(CASES[name]) == _generate(CASES[name])
