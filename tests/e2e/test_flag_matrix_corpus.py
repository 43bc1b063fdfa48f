"""The public corpus gives XLA's results whatever flags build the generated C: gcc and
clang at -O1, -O2, -O3, -Os and the user-style `-O2 -march=native`, with aotc's own
relaxations undone (-ftrapping-math -fmath-errno). The generated file carries its own
numeric contract (no contraction, fast-math refused, no guard a compiler may
speculate past); this checks it on every corpus case, pre-optimization text."""
from __future__ import annotations

import shutil

import pytest

from aotc.options import CompileOptions

from .conftest import require_aotc

FLAGS = {"O1": ("-O1", ()), "O2": ("-O2", ()), "O3": ("-O3", ()), "Os": ("-Os", ()),
         "O2-native": ("-O2", ("-march=native",))}
MATRIX = [(cc, f) for cc in ("gcc", "clang") for f in FLAGS]


@pytest.mark.slow
@pytest.mark.parametrize("cc,flags", MATRIX, ids=[f"{c}-{f}" for c, f in MATRIX])
def test_corpus_case_under_user_flags(corpus_case, cc, flags):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    aotc = require_aotc("run")
    opt, extra = FLAGS[flags]
    options = CompileOptions(cc=cc, opt_level=opt, cflags=("-ftrapping-math", "-fmath-errno", *extra))
    outs = aotc.run(str(corpus_case.dir / "model.hlo"), config=str(corpus_case.cfg_path),
                    inputs=corpus_case.input_dict(), options=options)
    corpus_case.check(outs, label=f"{cc} {opt} {' '.join(extra)}")
