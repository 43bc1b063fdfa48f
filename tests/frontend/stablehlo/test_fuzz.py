"""Mutants of the corpus' StableHLO files (`tests/data/corpus/*/model.mlir`): a token deleted
or doubled, a number, type or name changed, the file cut short, bytes flipped; seeds fixed
(the mutations are shared with the HLO and config fuzz tests: tests/fuzz/mutate.py).
Each mutant either compiles to C or fails with exit code 1 and one located error
(`FILE:LINE:COL: error: ...`, its source line, a caret), never a traceback or another
exit code."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from aotc.cli import main
from tests.fuzz.mutate import KINDS, MLIR
from tests.fuzz.mutate import mutate as _mutate

CORPUS = sorted((Path(__file__).resolve().parents[2] / "data" / "corpus").glob("*/model.mlir"))
PER_FILE = 10  # 24 files: 240 mutants


def _mutants():
    for i, path in enumerate(CORPUS):
        for j in range(PER_FILE):
            rng = random.Random(i * 1000 + j)
            kind = KINDS[(i + j) % len(KINDS)]
            yield pytest.param(path, rng, kind, id=f"{path.parent.name}-{j}-{kind}")


def mutate(data: bytes, rng: random.Random, kind: str) -> bytes:
    return _mutate(data, rng, kind, MLIR)


def test_corpus_and_count():
    assert len(CORPUS) * PER_FILE >= 200


_LOCATED = re.compile(r"^.+:\d+:\d+: error: .+$")


@pytest.mark.parametrize("path,rng,kind", _mutants())
def test_mutant_compiles_or_is_one_located_error(path, rng, kind, tmp_path):
    model = tmp_path / "model.mlir"
    model.write_bytes(mutate(path.read_bytes(), rng, kind))
    r = CliRunner().invoke(main, ["compile", str(model), "--emit", "none", "-o", str(tmp_path / "libm")])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code in (0, 1), r.output
    if r.exit_code == 1:
        lines = r.output.rstrip("\n").split("\n")
        assert _LOCATED.match(lines[0]), r.output
        assert len(lines) == 3 and lines[2].strip() == "^", r.output
        assert "Traceback" not in r.output and "internal error" not in r.output
