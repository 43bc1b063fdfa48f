"""The public corpus gives XLA's results whatever flags build the generated C: gcc and
clang at -O1, -O2, -O3, -Os and the user-style `-O2 -march=native`, with aotc's own
relaxations undone (-ftrapping-math -fmath-errno). The generated file carries its own
numeric contract (no contraction, fast-math refused, no guard a compiler may
speculate past); this checks it on every corpus case, pre-optimization text."""
from __future__ import annotations

import shutil

import pytest

from .conftest import FLAG_MATRIX, FLAG_MATRIX_IDS, require_aotc, user_flag_label, user_flag_options


@pytest.mark.slow
@pytest.mark.parametrize("cc,flags", FLAG_MATRIX, ids=FLAG_MATRIX_IDS)
def test_corpus_case_under_user_flags(corpus_case, cc, flags):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    aotc = require_aotc("run")
    outs = aotc.run(str(corpus_case.dir / "model.hlo"), config=str(corpus_case.cfg_path),
                    inputs=corpus_case.input_dict(), options=user_flag_options(cc, flags))
    corpus_case.check(outs, label=user_flag_label(cc, flags))
