"""The op registry: every op aotc compiles has at least one XLA-oracle fixture (an op-table
fixture, a corpus case or a hand-written case of tests/ops, all with expected outputs from
XLA:CPU; for an op XLA:CPU cannot run, a `SAME_AS` case compared with XLA's outputs for the
plain op it stands for), so no op is registered untested."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from aotc.frontend.hlo_parser import parse_hlo
from aotc.ops.registry import CUSTOM_CALL_TARGETS, rules

ROOT = Path(__file__).resolve().parents[1]


def _fixture_texts():
    for pattern in ("data/fixtures/*/model.hlo", "data/corpus/*/model.hlo", "data/corpus/*/model.opt.hlo"):
        for p in sorted(ROOT.glob(pattern)):
            yield str(p), p.read_text()
    import tests.ops as ops_tests
    for m in pkgutil.iter_modules(ops_tests.__path__):
        if m.name.startswith("test_"):
            mod = importlib.import_module(f"tests.ops.{m.name}")
            for name, case in getattr(mod, "CASES", {}).items():
                yield name, case[0]
            # ops XLA:CPU cannot run, compared with XLA's outputs for the plain op they stand for
            for name, (_, text) in getattr(mod, "SAME_AS", {}).items():
                yield name, text
    from tests.numeric import cases as numeric
    yield "flag_matrix", numeric.hlo_text()
    # ops that call into the application: checked from C against XLA running the equivalent
    # modules (feeds as parameters and results), tests/e2e/test_host_calls.py
    from tests.e2e import host_models
    for name in ("CUSTOM", "STREAM", "SENDRECV"):
        yield f"host_models.{name}", getattr(host_models, name)
    # state across runs: XLA's outputs of several executions, tests/e2e/test_rng_state.py
    from tests.e2e import rng_state_model
    yield "rng_state_model", rng_state_model.MODEL
    import numpy as np  # jnp.linalg exported from JAX (tests/ops/gen_linalg.py)
    for p in sorted((ROOT / "ops" / "data" / "linalg").glob("*.npz")):
        yield p.stem, str(np.load(p)["hlo_pre"])


def _opcodes_with_fixtures() -> set[str]:
    seen: set[str] = set()
    for name, text in _fixture_texts():
        m = parse_hlo(text, name)
        for c in m.computations:
            for i in c.instructions:
                seen.add(i.opcode)
                if i.opcode == "custom-call":
                    seen.add(f"custom-call:{i.attr('custom_call_target')}")
    return seen


def test_every_registered_op_has_an_xla_fixture():
    covered = _opcodes_with_fixtures()
    missing = sorted(op for op in rules() if op not in covered)
    assert not missing, f"registered ops without an XLA-oracle fixture: {', '.join(missing)}"


def test_every_custom_call_target_has_an_xla_fixture():
    covered = _opcodes_with_fixtures()
    missing = sorted(t for t in CUSTOM_CALL_TARGETS if f"custom-call:{t}" not in covered)
    assert not missing, f"custom-call targets without an XLA-oracle fixture: {', '.join(missing)}"
