"""Mutants of the corpus' StableHLO files (`tests/data/corpus/*/model.mlir`): a token deleted
or doubled, a number, type or name changed, the file cut short, bytes flipped; seeds fixed.
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

CORPUS = sorted((Path(__file__).resolve().parents[2] / "data" / "corpus").glob("*/model.mlir"))
PER_FILE = 10  # 24 files: 240 mutants

_TOKEN = re.compile(r'%[\w#.:]+|@[\w.]+|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][\w.]*|\S')
_NUMBERS = ["[1]", '"s"', "true", "0", "-1", "1", "2", "7", "2147483648", "99999999999999999999", "1.5", "-0.0",
            "1e400", "0x7FC00000"]
_TYPES = ["f32", "i32", "i1", "f16", "bf16", "ui8", "i64", "f64", "complex<f32>", "tensor<f32>", "tuple<>", "?"]
_NAMES = ["%0", "%99", "%arg0", "%arg7", "@main", "@nope", "stablehlo.add", "stablehlo.frob", "func.func", "return",
          "tensor", "dense", "x", "loc", "#loc3"]
KINDS = ["delete", "duplicate", "number", "type", "name", "truncate", "flip"]


def mutate(data: bytes, rng: random.Random, kind: str) -> bytes:
    """One mutant of `data` of the given kind."""
    if kind == "truncate":
        return data[:rng.randrange(len(data))]
    if kind == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    text = data.decode("utf-8")
    tokens = list(_TOKEN.finditer(text))
    wanted = {"number": r"-?\d.*", "type": r"[a-z]+\d+|\d+x\w+|x\w*",
              "name": r"[%@].*|stablehlo\..*"}.get(kind)
    m = rng.choice([t for t in tokens if wanted and re.fullmatch(wanted, t.group())] or tokens)
    replacement = {"delete": "", "duplicate": m.group() + " " + m.group(), "number": rng.choice(_NUMBERS),
                   "type": rng.choice(_TYPES), "name": rng.choice(_NAMES)}[kind]
    return (text[:m.start()] + replacement + text[m.end():]).encode()


def _mutants():
    for i, path in enumerate(CORPUS):
        for j in range(PER_FILE):
            rng = random.Random(i * 1000 + j)
            kind = KINDS[(i + j) % len(KINDS)]
            yield pytest.param(path, rng, kind, id=f"{path.parent.name}-{j}-{kind}")


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
