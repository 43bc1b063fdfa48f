"""Mutants of the corpus' configs (`cfg.yaml` of every case in tests/data/corpus, and the
seeds in tests/fuzz/corpus), each compiled with its case's model: a token deleted or doubled,
a number, dtype or name changed (into keywords, runtime names and collisions), the file cut
short, bytes flipped. Each compiles or fails with exit code 1 and one error (`FILE:LINE:COL:`,
or a YAML key path), never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from aotc.cli import main
from tests.fuzz.mutate import YAML, mutants
from tests.fuzz.test_fuzz_hlo import check_outcome

ROOT = Path(__file__).resolve().parents[1]
SEEDS = Path(__file__).parent / "corpus"
CONFIGS = sorted([*(ROOT / "data" / "corpus").glob("*/cfg.yaml"), *SEEDS.glob("*.yaml")])
PER_FILE = 3  # about 80 mutants


def model_of(cfg: Path) -> Path:
    """The model a config belongs to: its case's model.hlo, or the seed of the same stem."""
    return cfg.with_name("model.hlo") if cfg.name == "cfg.yaml" else cfg.with_suffix(".hlo")


def test_corpus_and_count():
    assert len(CONFIGS) * PER_FILE >= 75
    assert all(model_of(c).is_file() for c in CONFIGS)


@pytest.mark.parametrize("path,data,kind", [pytest.param(p, d, k, id=i)
                                             for p, d, k, i in mutants(CONFIGS, PER_FILE, YAML)])
def test_config_mutant_compiles_or_is_one_error(path, data, kind, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_bytes(data)
    r = CliRunner().invoke(main, ["compile", str(model_of(path)), "--config", str(cfg), "--emit", "none",
                                  "-o", str(tmp_path / "libm")])
    check_outcome(r, f"{path} ({kind})")
