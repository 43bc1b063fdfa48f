"""The public corpus gives XLA's results whatever flags build the generated C: gcc and
clang at -O1, -O2, -O3, -Os and the user-style `-O2 -march=native`, with aotc's own
relaxations undone (-ftrapping-math -fmath-errno). The generated file carries its own
numeric contract (no contraction, fast-math refused, no guard a compiler may
speculate past); this checks it on the corpus cases, pre-optimization text: each case
under two flag sets of gcc and two of clang, the sets rotating over the cases so that
each of the ten builds an equal share of them (`pytest --flag-matrix=full`: all ten a
case)."""
from __future__ import annotations

import shutil

import pytest

from .conftest import (corpus_all_cases, flag_matrix_params, require_aotc, user_flag_label,
                       user_flag_options)


def pytest_generate_tests(metafunc):
    if metafunc.function is not test_corpus_case_under_user_flags:
        return
    params, ids = flag_matrix_params(metafunc.config, corpus_all_cases(), 2)
    metafunc.parametrize("flag_case,cc,flags", params, ids=ids)


@pytest.mark.slow
def test_corpus_case_under_user_flags(flag_case, cc, flags):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    aotc = require_aotc("run")
    outs = aotc.run(str(flag_case.dir / "model.hlo"), config=str(flag_case.cfg_path),
                    inputs=flag_case.input_dict(), options=user_flag_options(cc, flags))
    flag_case.check(outs, label=user_flag_label(cc, flags))
