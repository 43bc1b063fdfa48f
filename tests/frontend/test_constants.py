"""Elided constants: refused by default with one helpful error, filled with
zeros, deterministic pseudo-random values, or arrays bound from an .npz."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from aotc.errors import AotcError
from aotc.frontend import parse_hlo_file
from aotc.frontend.constants import elided_constants, resolve_constants

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
GRAPHSAGE = str(MODELS / "graphsage_tf.hlo")
SSD = str(MODELS / "ssd_mobilenet_tf.hlo")


@pytest.fixture(scope="module")
def graphsage():
    return parse_hlo_file(GRAPHSAGE)


def constants(module) -> dict[str, np.ndarray]:
    return {i.name: i.literal.values for _, i in module.instructions() if i.opcode == "constant"}


def test_models_have_elided_constants(graphsage):
    assert len(elided_constants(graphsage)) == 11
    assert len(elided_constants(parse_hlo_file(SSD))) == 100


def test_default_refuses_with_one_located_error(graphsage):
    text = Path(GRAPHSAGE).read_text()
    with pytest.raises(AotcError) as info:
        resolve_constants(graphsage, "error", None, text)
    lines = info.value.format().splitlines()
    assert lines[0] == (
        f"{GRAPHSAGE}:54:3: error: 11 elided constants (constant({{...}}) has no values): "
        "embedding_lookup.2 bf16[56945,50], MatMul_1.9 bf16[50,128], embedding_lookup_1.2 bf16[56945,50] "
        "and 8 more; pass --elided-constants=zeros or --elided-constants=random to fill them (for benchmarking), "
        "or --bind-constants FILE.npz with arrays named after the instructions")
    assert lines[1].startswith("  %embedding_lookup.2 = bf16[56945,50]{1,0} constant({...})")
    assert lines[2] == "  ^"


@pytest.mark.parametrize("path", [GRAPHSAGE, SSD])
def test_zeros(path):
    module = parse_hlo_file(path)
    before = constants(module)
    filled = resolve_constants(module, "zeros")
    assert elided_constants(filled) == []
    after = constants(filled)
    for instr in elided_constants(module):
        a = after[instr.name]
        assert a.shape == instr.shape.dims and a.dtype == instr.shape.dtype.numpy
        assert not a.astype(np.float32).any()
    for name, values in before.items():  # literals that were there stay untouched
        if values is not None:
            assert after[name] is values


@pytest.mark.parametrize("path", [GRAPHSAGE, SSD])
def test_random_is_deterministic(path):
    a = constants(resolve_constants(parse_hlo_file(path), "random"))
    b = constants(resolve_constants(parse_hlo_file(path), "random"))
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == b[name].dtype and a[name].tobytes() == b[name].tobytes()


def test_random_values(graphsage):
    filled = constants(resolve_constants(graphsage, "random"))
    emb, emb1 = filled["embedding_lookup.2"], filled["embedding_lookup_1.2"]
    assert emb.dtype == ml_dtypes.bfloat16
    as_f32 = emb.astype(np.float32)
    assert as_f32.min() >= -1.0 and as_f32.max() <= 1.0 and as_f32.std() > 0.3
    assert emb.tobytes() != emb1.tobytes()  # seeded by the instruction name: same shape, other values


def test_random_integer_and_pred_constants():
    from aotc.frontend import parse_hlo

    m = parse_hlo("HloModule r\n\nENTRY e {\n  i.1 = s32[64] constant({...})\n  p.2 = pred[64] constant({...})\n"
                  "  ROOT t.3 = (s32[64], pred[64]) tuple(i.1, p.2)\n}\n", "r.hlo")
    filled = constants(resolve_constants(m, "random"))
    assert filled["i.1"].dtype == np.int32 and 0 <= filled["i.1"].min() and filled["i.1"].max() < 4
    assert filled["p.2"].dtype == np.bool_ and filled["p.2"].any() and not filled["p.2"].all()


def test_bind_then_mode(graphsage, tmp_path):
    w = np.arange(50 * 128, dtype=np.float32).reshape(50, 128).astype(ml_dtypes.bfloat16)
    np.savez(tmp_path / "c.npz", **{"MatMul_1.9": w})
    filled = resolve_constants(graphsage, "zeros", str(tmp_path / "c.npz"))
    values = constants(filled)
    assert values["MatMul_1.9"].tobytes() == w.tobytes()
    assert not values["MatMul.12"].astype(np.float32).any()


def test_bind_bf16_as_uint16_bits(graphsage, tmp_path):
    w = np.full((50, 128), 0.5, ml_dtypes.bfloat16)
    np.savez(tmp_path / "c.npz", **{"MatMul_1.9": w.view(np.uint16)})
    values = constants(resolve_constants(graphsage, "zeros", str(tmp_path / "c.npz")))
    assert values["MatMul_1.9"].dtype == ml_dtypes.bfloat16 and values["MatMul_1.9"].tobytes() == w.tobytes()


def test_bind_errors(graphsage, tmp_path):
    npz = tmp_path / "c.npz"
    np.savez(npz, **{"MatMul_1.8": np.zeros((50, 128), ml_dtypes.bfloat16)})
    with pytest.raises(AotcError) as info:
        resolve_constants(graphsage, "zeros", str(npz))
    assert info.value.format() == f"{npz}: error: array 'MatMul_1.8' names no elided constant (did you mean MatMul_1.9?)"

    np.savez(npz, **{"MatMul_1.9": np.zeros((128, 50), np.float32)})
    with pytest.raises(AotcError) as info:
        resolve_constants(graphsage, "zeros", str(npz))
    assert info.value.format() == f"{npz}: error: array 'MatMul_1.9' is f32[128,50], constant MatMul_1.9 is bf16[50,128]"

    with pytest.raises(AotcError) as info:
        resolve_constants(graphsage, "zeros", str(tmp_path / "none.npz"))
    assert info.value.format() == f"{tmp_path / 'none.npz'}: error: cannot read: No such file or directory"


def test_bind_leaves_the_rest_to_the_mode(graphsage, tmp_path):
    np.savez(tmp_path / "c.npz", **{"MatMul_1.9": np.zeros((50, 128), ml_dtypes.bfloat16)})
    with pytest.raises(AotcError) as info:
        resolve_constants(graphsage, "error", str(tmp_path / "c.npz"))
    assert info.value.message.startswith("10 elided constants (constant({...}) has no values): "
                                         "embedding_lookup.2 bf16[56945,50], embedding_lookup_1.2 bf16[56945,50],")


def test_unknown_mode_and_nothing_to_do(graphsage):
    with pytest.raises(AotcError) as info:
        resolve_constants(graphsage, "ones")
    assert info.value.format() == "error: unknown elided-constants mode 'ones' (expected one of: error, zeros, random)"
    filled = resolve_constants(graphsage, "zeros")
    assert resolve_constants(filled, "error") is filled
