"""A longer fuzz run than the suite's (`make fuzz`): rounds of new mutants of every HLO,
StableHLO and config seed (tests/data/corpus and tests/fuzz/corpus), each compiled in process;
a mutant that gives a traceback, an internal error, another exit code or a malformed message
is written to --crashes with the output, and the run exits 1.

    python -m tests.fuzz.run --rounds 20 [--build] [--crashes DIR]
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from aotc.cli import main
from tests.fuzz.mutate import HLO, MLIR, YAML, mutants
from tests.fuzz.test_fuzz_config import CONFIGS, model_of
from tests.fuzz.test_fuzz_hlo import CORPUS as HLO_FILES
from tests.fuzz.test_fuzz_hlo import check_outcome

ROOT = Path(__file__).resolve().parents[1]
MLIR_FILES = sorted((ROOT / "data" / "corpus").glob("*/model.mlir"))


def _cases(seed: int):
    """(kind of file, original path, mutant bytes, label) for one round."""
    for path, data, kind, label in mutants(HLO_FILES, 1, HLO, seed=seed):
        yield "model.hlo", path, data, label
    for path, data, kind, label in mutants(MLIR_FILES, 1, MLIR, seed=seed):
        yield "model.mlir", path, data, label
    for path, data, kind, label in mutants(CONFIGS, 1, YAML, seed=seed):
        yield "cfg.yaml", path, data, label


def fuzz(rounds: int, first: int, build: bool, crashes: Path, verbose: bool = False) -> int:
    failures = 0
    runner = CliRunner()
    for seed in range(first, first + rounds):
        for name, path, data, label in _cases(seed):
            if verbose:
                print(label, flush=True)
            with tempfile.TemporaryDirectory(prefix="aotc-fuzz-") as d:
                f = Path(d) / name
                f.write_bytes(data)
                args = ["compile", str(model_of(path)), "--config", str(f)] if name == "cfg.yaml" else ["compile", str(f)]
                args += ["--emit", "o" if build else "none", "-o", str(Path(d) / "libm")]
                r = runner.invoke(main, args)
                try:
                    check_outcome(r, label)
                except AssertionError as e:
                    failures += 1
                    crashes.mkdir(parents=True, exist_ok=True)
                    (crashes / f"{label}.{name}").write_bytes(data)
                    (crashes / f"{label}.txt").write_text(f"{path}\n{e}\n")
                    print(f"FAIL {label}: {str(e).splitlines()[0][:200]}", flush=True)
        print(f"round {seed}: {failures} failure(s) so far", flush=True)
    return 1 if failures else 0


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="mutants per seed file (default 20)")
    ap.add_argument("--first", type=int, default=100, help="first round's seed (the suite uses 0 and 1)")
    ap.add_argument("--build", action="store_true", help="also build the C of mutants that compile")
    ap.add_argument("--crashes", type=Path, default=Path("build/fuzz-crashes"), help="where failing inputs go")
    ap.add_argument("--memory", type=int, default=4, help="address-space limit in GiB (a mutant that needs more "
                    "is a failure: out of memory is exit 3)")
    ap.add_argument("--verbose", action="store_true", help="print each mutant's label before compiling it")
    a = ap.parse_args()
    limit = a.memory << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    return fuzz(a.rounds, a.first, a.build, a.crashes, a.verbose)


if __name__ == "__main__":
    sys.exit(main_())
