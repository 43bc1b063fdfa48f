"""The op table: every fixture case compiled by aotc, run with 1 and 2 threads,
and compared with XLA:CPU's outputs (tests/data/fixtures, made by
tests/fixtures/gen_fixtures.py). A `jax`-marked variant re-runs a sample of the
HLO files on XLA now, so a stale fixture cannot hide a difference."""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import FIXTURES, OP_TABLE_THREADS, assert_close, list_cases, require_jax

FETCH_FILES = ("model.hlo", "cfg.yaml", "inputs.npz", "expected.npz", "meta.json")


@pytest.mark.parametrize("threads", OP_TABLE_THREADS)
def test_op_case(op_case, threads, models):
    model = models.get(op_case)
    model.set_num_threads(threads)
    outs = model(*op_case.inputs())
    op_case.check(outs, label=f"threads={threads}")


@pytest.mark.jax
def test_op_case_live_xla(op_case, models):
    require_jax()
    from tests.oracle.xla import run_hlo

    inputs = op_case.inputs()
    live = run_hlo(op_case.model_path.read_text(), inputs)
    names = [f["name"] for f in op_case.fetches]
    assert len(live) == len(names)
    expected = op_case.expected()
    for n, got in zip(names, live):  # the stored fixture is still what XLA computes
        assert_close(got, expected[n], op_case.rtol, op_case.atol,
                     f"{op_case.name}/{n} (stored fixture vs live XLA)", op_case.signed_zeros)
    model = models.get(op_case)
    model.set_num_threads(1)
    outs = model(*inputs)
    assert len(outs) == len(live)
    for n, got, want in zip(names, outs, live):
        assert_close(got, want, op_case.rtol, op_case.atol, f"{op_case.name}/{n} (live XLA)",
                     op_case.signed_zeros)


def test_fixture_files(fixture_case):
    """Each fixture is complete and self-consistent (needs neither aotc nor jax)."""
    for f in FETCH_FILES:
        assert (fixture_case.dir / f).is_file(), f"{fixture_case.name}: missing {f}"
    meta = fixture_case.meta
    for key in ("description", "ops", "rtol", "atol", "reason", "dtypes"):
        assert key in meta, f"{fixture_case.name}: meta.json lacks {key}"
    assert meta["reason"].strip(), f"{fixture_case.name}: tolerance without a reason"
    assert meta["rtol"] >= 0 and meta["atol"] >= 0
    feeds = fixture_case.feeds
    assert [int(f["id"]) for f in feeds] == list(range(len(feeds)))
    for f, a in zip(feeds, fixture_case.inputs()):
        assert list(a.shape) == list(f["shape"]), (fixture_case.name, f["name"])
    fetches = fixture_case.fetches
    expected = fixture_case.expected()
    assert [int(f["id"]) for f in fetches] == list(range(len(fetches)))
    for f, m in zip(fetches, meta["fetches"]):
        assert list(expected[f["name"]].shape) == m["shape"], (fixture_case.name, f["name"])
    text = fixture_case.model_path.read_text()
    assert text.startswith("HloModule ")
    assert text.count("parameter(") >= len(feeds)


def test_fixture_table_is_complete():
    """Every case of the op table has a fixture and no stale fixture remains."""
    require_jax()
    from tests.fixtures import cases

    names = {c.name for c in cases.CASES}
    dirs = {c.name for c in list_cases(FIXTURES)}
    assert names - dirs == set(), "regenerate: python tests/fixtures/gen_fixtures.py"
    assert dirs - names == set(), "stale fixtures: python tests/fixtures/gen_fixtures.py"
    assert all(c.tol.reason for c in cases.CASES)


def test_assert_close_semantics():
    """The comparison helper itself: exact ints, NaN/inf positions, tolerance, -0."""
    import ml_dtypes

    f = np.array([1.0, np.nan, np.inf, -0.0], np.float32)
    assert_close(f.copy(), f, 0, 0, "same")
    with pytest.raises(AssertionError, match="NaN positions"):
        assert_close(np.array([1.0, 0.0, np.inf, 0.0], np.float32), f, 1, 1, "nan")
    with pytest.raises(AssertionError, match="inf"):
        assert_close(np.array([1.0, np.nan, 3e38, 0.0], np.float32), f, 1, 1, "inf")
    with pytest.raises(AssertionError, match="sign of zero"):
        assert_close(np.array([1.0, np.nan, np.inf, 0.0], np.float32), f, 0, 0, "sz",
                     signed_zeros=True)
    assert_close(np.array([1.0, np.nan, np.inf, 0.0], np.float32), f, 0, 0, "no sz")
    assert_close(np.float32([1.00001]), np.float32([1.0]), 2e-5, 0, "rtol")
    with pytest.raises(AssertionError, match="outside"):
        assert_close(np.float32([1.001]), np.float32([1.0]), 2e-5, 1e-6, "rtol")
    with pytest.raises(AssertionError, match="differ"):
        assert_close(np.int32([1, 2]), np.int32([1, 3]), 1, 1, "ints are exact")
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(np.int64([1]), np.int32([1]), 0, 0, "dtype")
    bits = np.array([0x3F80, 0x7FC0], np.uint16)  # bf16 1.0, NaN as stored in npz
    assert_close(bits.view(ml_dtypes.bfloat16), bits, 0, 0, "bf16 bits")
    c = np.array([1 + 2j, complex(np.nan, 1)], np.complex64)
    assert_close(c.copy(), c, 0, 0, "complex")
