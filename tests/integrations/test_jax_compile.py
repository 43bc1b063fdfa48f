"""`aotc.jax.compile` and `aotc export` end to end: an MLP, a small CNN and a transformer
block lowered with jax, compiled, loaded, and compared with `jax.jit(f)` on the same inputs;
bound and fed weights; names from pytree paths; and one aarch64 run under qemu."""
from __future__ import annotations

import shutil
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

import aotc
from aotc.cli import main
from aotc.errors import AotcError

jax = pytest.importorskip("jax")
jnp = jax.numpy
pytestmark = pytest.mark.jax

RTOL = ATOL = 2e-5  # f32 sums in another order than XLA's


def _normal(key, shape, scale=1.0):
    return np.asarray(jax.random.normal(jax.random.PRNGKey(key), shape) * scale, np.float32)


def mlp(x, params):
    h = jax.nn.relu(x @ params["dense"]["kernel"] + params["dense"]["bias"])
    return h @ params["out"]["kernel"] + params["out"]["bias"]


MLP_PARAMS = {"dense": {"kernel": _normal(1, (16, 32), 0.3), "bias": _normal(2, (32,))},
              "out": {"kernel": _normal(3, (32, 4), 0.3), "bias": _normal(4, (4,))}}


def cnn(x, params):
    dn = ("NHWC", "HWIO", "NHWC")
    h = jax.lax.conv_general_dilated(x, params["conv1"]["w"], (1, 1), "SAME", dimension_numbers=dn)
    h = jax.nn.relu(h + params["conv1"]["b"])
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.lax.conv_general_dilated(h, params["conv2"]["w"], (2, 2), "SAME", dimension_numbers=dn)
    h = jax.nn.relu(h + params["conv2"]["b"]).mean(axis=(1, 2))
    return jax.nn.softmax(h @ params["head"]["w"])


CNN_PARAMS = {"conv1": {"w": _normal(5, (3, 3, 3, 8), 0.3), "b": _normal(6, (8,), 0.1)},
              "conv2": {"w": _normal(7, (3, 3, 8, 16), 0.2), "b": _normal(8, (16,), 0.1)},
              "head": {"w": _normal(9, (16, 10), 0.3)}}


def _layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def transformer(x, p):
    s, d, heads = x.shape[0], x.shape[1], 4
    h = _layernorm(x, p["ln1"]["g"], p["ln1"]["b"])
    q, k, v = (h @ p["attn"][n] for n in ("wq", "wk", "wv"))
    split = lambda t: t.reshape(s, heads, d // heads).transpose(1, 0, 2)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    a = jax.nn.softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d // heads), axis=-1) @ v
    x = x + a.transpose(1, 0, 2).reshape(s, d) @ p["attn"]["wo"]
    h = _layernorm(x, p["ln2"]["g"], p["ln2"]["b"])
    return x + jax.nn.gelu(h @ p["mlp"]["w1"] + p["mlp"]["b1"]) @ p["mlp"]["w2"]


D = 32
TF_PARAMS = {"ln1": {"g": 1 + _normal(10, (D,), 0.1), "b": _normal(11, (D,), 0.1)},
             "attn": {n: _normal(12 + i, (D, D), D ** -0.5) for i, n in enumerate(("wq", "wk", "wv", "wo"))},
             "ln2": {"g": 1 + _normal(16, (D,), 0.1), "b": _normal(17, (D,), 0.1)},
             "mlp": {"w1": _normal(18, (D, 64), D ** -0.5), "b1": _normal(19, (64,), 0.1),
                     "w2": _normal(20, (64, D), 64 ** -0.5)}}

MODELS = {
    "mlp": (mlp, MLP_PARAMS, _normal(30, (8, 16))),
    "cnn": (cnn, CNN_PARAMS, _normal(31, (2, 12, 12, 3))),
    "transformer": (transformer, TF_PARAMS, _normal(32, (16, D))),
}


def _leaves(params):
    return {"_".join(str(k.key) for k in path): v for path, v in jax.tree_util.tree_flatten_with_path(params)[0]}


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("weights", ["fed", pytest.param("bound", marks=pytest.mark.slow)])
def test_compile_matches_jax(model, weights, tmp_path):
    fn, params, x = MODELS[model]
    lib = aotc.jax.compile(fn, jax.ShapeDtypeStruct(x.shape, jnp.float32), params, weights=weights,
                           name=model, out=str(tmp_path / f"lib{model}"))
    m = aotc.load(lib)
    expected = np.asarray(jax.jit(fn)(x, params))
    if weights == "bound":
        assert m.feed_names == ["x"]
        (y,) = m(x)
    else:
        assert sorted(m.feed_names) == sorted(["x", *_leaves(params)])
        (y,) = m(x=x, **_leaves(params))
    assert m.result_names == ["y"]
    np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)


def test_hlo_dialect_and_several_inputs_and_outputs(tmp_path):
    def f(a, b, params):
        return {"sum": a + b @ params["w"], "prod": (a * 2.0, b)}

    a, b = _normal(40, (4, 3)), _normal(41, (4, 5))
    lib = aotc.jax.compile(f, (a, b), {"w": _normal(42, (5, 3))}, dialect="hlo", out=str(tmp_path / "libf"))
    m = aotc.load(lib)
    assert m.feed_names == ["a", "b"] and m.result_names == ["prod_0", "prod_1", "sum"]
    out = m(a, b)
    ref = jax.jit(f)(a, b, {"w": _normal(42, (5, 3))})
    for got, want in zip(out, [ref["prod"][0], ref["prod"][1], ref["sum"]]):
        np.testing.assert_allclose(got, np.asarray(want), rtol=RTOL, atol=ATOL)


def test_two_paths_with_one_c_name_are_an_error_naming_both(tmp_path):
    params = {"a_b": np.ones(3, np.float32), "a": {"b": np.ones(3, np.float32)}}
    with pytest.raises(AotcError) as info:
        aotc.jax.compile(lambda x, p: x + p["a_b"] + p["a"]["b"], np.ones(3, np.float32), params,
                         weights="fed", out=str(tmp_path / "libd"))
    assert "params['a']['b'] and params['a_b'] both give the C name 'a_b'" in str(info.value)


def test_weights_file_is_read_at_load(tmp_path):
    x = np.random.default_rng(2).standard_normal((8, 16), np.float32)
    res = aotc.jax.compile(mlp, x, MLP_PARAMS, weights="file", out=str(tmp_path / "libm"), opt_level="-O1",
                           emit=("so",))
    assert res.weights_path == str(tmp_path / "libm.weights")
    (y,) = aotc.load(res)(x)
    np.testing.assert_allclose(y, np.asarray(jax.jit(mlp)(x, MLP_PARAMS)), rtol=1e-5, atol=1e-5)


def test_unknown_weights_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="weights='frozen'"):
        aotc.jax.compile(mlp, np.ones((8, 16), np.float32), MLP_PARAMS, weights="frozen")


def test_export_verb_writes_the_three_files(tmp_path, monkeypatch):
    (tmp_path / "mymodel.py").write_text(textwrap.dedent("""
        import numpy as np
        import jax

        def predict(x, params):
            return jax.nn.relu(x @ params["dense"]["kernel"] + params["dense"]["bias"])

        def weights():
            rng = np.random.default_rng(0)
            return {"dense": {"kernel": rng.standard_normal((16, 4)).astype(np.float32),
                              "bias": rng.standard_normal(4).astype(np.float32)}}
    """))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["export", "mymodel:predict", "--shapes", "x=f32[8,16]", "--params",
                                  "mymodel:weights", "--name", "predict", "-o", "out"])
    assert r.exit_code == 0, r.output
    assert r.output.split() == ["out/model.mlir", "out/cfg.yaml", "out/weights.npz"]
    x = _normal(50, (8, 16))
    outs = aotc.run("out/model.mlir", config="out/cfg.yaml", inputs={"x": x})
    import mymodel  # noqa: E402  (the module the verb imported, from tmp_path)
    np.testing.assert_allclose(outs["y"], np.asarray(mymodel.predict(x, mymodel.weights())), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("args,message", [
    (["nomodule:f", "--shapes", "f32[2]"], "cannot import module 'nomodule'"),
    (["json:nothing", "--shapes", "f32[2]"], "module 'json' has no attribute 'nothing'"),
    (["json", "--shapes", "f32[2]"], "expected MODULE:NAME"),
    (["json:dumps", "--shapes", "q32[2]"], "unknown element type 'q32'"),
    (["json:dumps", "--shapes", "f32[2] f32[3]"], "expected ',' between inputs"),
])
def test_export_verb_errors(args, message, tmp_path):
    r = CliRunner().invoke(main, ["export", *args, "-o", str(tmp_path / "o")])
    assert r.exit_code == 1 and message in r.output and "Traceback" not in r.output, r.output


@pytest.mark.slow  # emulated
@pytest.mark.aarch64
@pytest.mark.skipif(not (shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64")),
                    reason="needs aarch64-linux-gnu-gcc and qemu-aarch64")
def test_aarch64_under_qemu(tmp_path):
    fn, params, x = MODELS["transformer"]
    lib = aotc.jax.compile(fn, x, params, target="aarch64", out=str(tmp_path / "libt"))
    assert lib.target.startswith("aarch64")
    files = aotc.jax.export(fn, x, params, str(tmp_path / "files"))
    outs = aotc.run(files.model, config=files.config, inputs={"x": x}, target="aarch64")
    np.testing.assert_allclose(outs["y"], np.asarray(jax.jit(fn)(x, params)), rtol=RTOL, atol=ATOL)


_ONE_EACH = {("mlp", "serialized"), ("cnn", "bytecode"), ("transformer", "text")}


# each form with one model here, every pair with the heavy tests (`make test-slow`)
@pytest.mark.parametrize("model,form", [(m, f) if (m, f) in _ONE_EACH else pytest.param(m, f, marks=pytest.mark.slow)
                                        for m in sorted(MODELS) for f in ("serialized", "bytecode", "text")])
def test_jax_export_artifacts_compile_and_match(model, form, tmp_path):
    """`jax.export` of each model (weights as arguments), as the serialized Exported blob, its
    VHLO bytecode and its StableHLO text, compiled from the file."""
    pytest.importorskip("flatbuffers")
    fn, params, x = MODELS[model]
    exp = jax.export.export(jax.jit(fn))(x, params)
    data = {"serialized": exp.serialize(), "bytecode": exp.mlir_module_serialized,
            "text": exp.mlir_module().encode()}[form]
    path = tmp_path / f"{model}.{form}"
    path.write_bytes(bytes(data))
    m = aotc.load(aotc.compile(str(path), out=str(tmp_path / "libm")))
    leaves = jax.tree_util.tree_leaves((x, params))
    (y,) = m(*leaves)
    np.testing.assert_allclose(y, np.asarray(jax.jit(fn)(x, params)), rtol=RTOL, atol=ATOL)
