"""Mutants of the corpus' HLO text (`model.hlo` and XLA's optimized `model.opt.hlo` of every
case in tests/data/corpus, and the seeds in tests/fuzz/corpus): each compiles to C or fails
with exit code 1 and one error (`FILE:LINE:COL: error: ...` with its source line and caret,
or `FILE: error: ...`), never a traceback, an internal error or another exit code. The slow
variant also builds the C of every mutant that compiles, warning-free."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from aotc.cli import main
from tests.fuzz.mutate import HLO, mutants

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted([*(ROOT / "data" / "corpus").glob("*/model.hlo"), *(ROOT / "data" / "corpus").glob("*/model.opt.hlo"),
                 *(Path(__file__).parent / "corpus").glob("*.hlo")])
FAST_PER_FILE = 2  # about 100 mutants in `make test`
SLOW_PER_FILE = 6  # 300 more, each that compiles also built with -Werror

_ERROR = re.compile(r"^(?:.+: )?error: .+$")


def check_outcome(r, label: str) -> None:
    """Exit 0, or exit 1 with one error message (the first line, then at most its source line
    and caret); never a traceback or an internal error."""
    assert r.exception is None or isinstance(r.exception, SystemExit), f"{label}: {r.exception!r}\n{r.output}"
    assert r.exit_code in (0, 1), f"{label}: exit {r.exit_code}\n{r.output}"
    assert "Traceback" not in r.output and "internal error" not in r.output, f"{label}\n{r.output}"
    if r.exit_code == 1:
        lines = r.output.rstrip("\n").split("\n")
        assert _ERROR.match(lines[0]), f"{label}\n{r.output}"
        assert len(lines) == 1 or (len(lines) == 3 and lines[2].strip() == "^"), f"{label}\n{r.output}"


def compile_mutant(tmp_path: Path, data: bytes, suffix: str, emit: str, extra=()):
    model = tmp_path / f"model{suffix}"
    model.write_bytes(data)
    return CliRunner().invoke(main, ["compile", str(model), "--emit", emit, "-o", str(tmp_path / "libm"), *extra])


def test_corpus_and_count():
    assert len(CORPUS) * FAST_PER_FILE >= 90


@pytest.mark.parametrize("path,data,kind", [pytest.param(p, d, k, id=i)
                                             for p, d, k, i in mutants(CORPUS, FAST_PER_FILE, HLO)])
def test_mutant_compiles_or_is_one_error(path, data, kind, tmp_path):
    check_outcome(compile_mutant(tmp_path, data, ".hlo", "none"), f"{path} ({kind})")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build the mutants that compile")
@pytest.mark.parametrize("path,data,kind", [pytest.param(p, d, k, id=i)
                                             for p, d, k, i in mutants(CORPUS, SLOW_PER_FILE, HLO, seed=1)])
def test_mutant_builds_or_is_one_error(path, data, kind, tmp_path):
    r = compile_mutant(tmp_path, data, ".hlo", "o", ["--cc", "gcc", "--cflags", "-O0 -Wall -Wextra -Werror"])
    check_outcome(r, f"{path} ({kind})")
    if r.exit_code == 0:
        assert (tmp_path / "libm.o").stat().st_size > 0
