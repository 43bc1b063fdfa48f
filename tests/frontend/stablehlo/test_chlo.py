"""CHLO ops without an HLO opcode, read as a map of XLA's decomposition (chlo.py), run
against XLA:CPU's outputs (data/chlo_<op>.npz, from gen_chlo_expected.py).

One module per element type holds every op. NaNs and infinities must be where XLA has
them; finite values within a few units in the last place. Not bit for bit: XLA:CPU fuses
a multiply into the add that uses it (an FMA) where aotc rounds twice, so the long
polynomials of lgamma, polygamma or erfc differ from XLA's in the last bit or two.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aotc
from aotc.errors import AotcError
from aotc.frontend import parse_stablehlo
from aotc.frontend.stablehlo.chlo import decompositions
from aotc.hlo.opcodes import Op
from tests.oracle import xla as oracle

DATA = Path(__file__).resolve().parent / "data"
OPS = sorted(p.stem[len("chlo_"):] for p in DATA.glob("chlo_*.npz"))
MLIR_TYPE = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}
# units in the last place allowed: f16/bf16 results are rounded from f32 work, so 1
ULPS = {"f16": 1, "bf16": 1, "f32": 8, "f64": 8}
# where the function is near a zero, ulps say little: an absolute bound too
ATOL = {"f16": 1e-3, "bf16": 1e-2, "f32": 1e-6, "f64": 1e-14}


def _case(op: str, ty: str):
    d = np.load(DATA / f"chlo_{op}.npz")
    ins = [oracle.from_npz_array(d[f"{ty}_in{k}"], ty) for k in range(2) if f"{ty}_in{k}" in d]
    return ins, oracle.from_npz_array(d[f"{ty}_out"], ty)


def _module(ty: str, ops: list[str]) -> tuple[str, str, dict, dict]:
    """(MLIR text, config, inputs, expected) of one module computing every op on `ty`."""
    params, body, results, feeds, fetches, inputs, expected = [], [], [], [], [], {}, {}
    for k, op in enumerate(ops):
        ins, out = _case(op, ty)
        t = f"tensor<{len(out)}x{MLIR_TYPE[ty]}>"
        names = []
        for j, a in enumerate(ins):
            name = f"{op}_{j}"
            feeds.append(f"  - {{id: {len(params)}, name: {name}}}")
            params.append(f"%{name}: {t}")
            names.append(f"%{name}")
            inputs[name] = a
        body.append(f"    %r{k} = chlo.{op} {', '.join(names)} : {', '.join([t] * len(names))} -> {t}")
        results.append((f"%r{k}", t))
        fetches.append(f"  - {{id: {k}, name: {op}}}")
        expected[op] = out
    text = ("module @chlo {\n  func.func public @main(" + ", ".join(params) + ") -> ("
            + ", ".join(t for _, t in results) + ") {\n" + "\n".join(body) + "\n    return "
            + ", ".join(r for r, _ in results) + " : " + ", ".join(t for _, t in results) + "\n  }\n}\n")
    cfg = "feeds:\n" + "\n".join(feeds) + "\nfetches:\n" + "\n".join(fetches) + "\n"
    return text, cfg, inputs, expected


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable values between same-typed finite arrays."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    def ordered(x):
        i = x.view(bits).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(bits).min) - i, i)
    return np.abs(ordered(a) - ordered(b))


def _check(op: str, ty: str, got: np.ndarray, want: np.ndarray) -> None:
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(w)), f"chlo.{op} {ty}: NaNs differ"
    fin = np.isfinite(w)
    assert np.array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)]), f"chlo.{op} {ty}: infinities differ"
    assert np.isfinite(g[fin]).all(), f"chlo.{op} {ty}: a finite value became inf"
    far = (_ulps(got[fin], want[fin]) > ULPS[ty]) & (np.abs(g[fin] - w[fin]) > ATOL[ty])
    assert not far.any(), (f"chlo.{op} {ty}: {far.sum()} values off, e.g. got {g[fin][far][:3]} "
                           f"want {w[fin][far][:3]}")


def _run(tmp_path: Path, ty: str, ops: list[str]) -> None:
    text, cfg, inputs, expected = _module(ty, ops)
    (tmp_path / "m.mlir").write_text(text)
    (tmp_path / "cfg.yaml").write_text(cfg)
    outs = aotc.run(str(tmp_path / "m.mlir"), config=str(tmp_path / "cfg.yaml"), inputs=inputs, target="host")
    for op in ops:
        _check(op, ty, outs[op], expected[op])


def test_every_op_on_f32_matches_xla(tmp_path):
    _run(tmp_path, "f32", OPS)


@pytest.mark.slow
@pytest.mark.parametrize("ty", ["f16", "bf16", "f64"])
def test_every_op_on_other_types_matches_xla(tmp_path, ty):
    _run(tmp_path, ty, OPS)


def test_every_decomposition_is_a_scalar_computation_of_elementwise_ops():
    found = decompositions()
    assert {op for op, _ in found} >= {f"chlo.{op}" for op in OPS}
    for (op, ty), (_, text) in found.items():
        assert f"= {ty}[] parameter(0)" in text, (op, ty)


def test_a_chlo_op_becomes_a_map_shared_by_its_uses():
    m = parse_stablehlo("module @m {\n  func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                        "    %0 = chlo.lgamma %a : tensor<4xf32> -> tensor<4xf32>\n"
                        "    %1 = chlo.lgamma %0 : tensor<4xf32> -> tensor<4xf32>\n"
                        "    return %1 : tensor<4xf32>\n  }\n}\n", "m.mlir")
    maps = [i for _, i in m.instructions() if i.opcode is Op.MAP]
    assert len(maps) == 2 and maps[0].attr("to_apply") == maps[1].attr("to_apply")
    assert maps[0].attr("dimensions") == (0,)


def test_a_type_xla_does_not_define_is_a_located_error():
    with pytest.raises(AotcError) as e:
        parse_stablehlo("module @m {\n  func.func public @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
                        "    %0 = chlo.asinh %a : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>\n"
                        "    return %0 : tensor<4xcomplex<f32>>\n  }\n}\n", "m.mlir")
    assert e.value.loc.line == 3 and "chlo.asinh is not defined on c64" in e.value.message


def test_implicit_broadcasting_is_refused_with_its_location():
    with pytest.raises(AotcError) as e:
        parse_stablehlo("module @m {\n  func.func public @main(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {\n"
                        "    %0 = chlo.next_after %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>\n"
                        "    return %0 : tensor<4xf32>\n  }\n}\n", "m.mlir")
    assert e.value.loc.line == 3 and "no implicit broadcasting" in e.value.message
