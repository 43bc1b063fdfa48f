"""Model files by content: MLIR bytecode, serialized jax.export artifacts and HLO protos are
detected by their bytes and read through jaxlib; a binary file is never echoed; a
shape-polymorphic export names its symbolic dimension and `--shape` refines it. Results are
compared with `jax.jit(f)` on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import aotc
from aotc.cli import main
from aotc.errors import AotcError
from aotc.frontend import formats, read_model

jax = pytest.importorskip("jax")
jnp = jax.numpy
pytest.importorskip("flatbuffers")  # jax serializes Exported with it
pytestmark = pytest.mark.jax


def f(x, w):
    return jnp.tanh(x @ w) + 1.0


X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
W = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
SPECS = (jax.ShapeDtypeStruct((4, 8), jnp.float32), jax.ShapeDtypeStruct((8, 3), jnp.float32))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("formats")
    exp = jax.export.export(jax.jit(f))(*SPECS)
    (b,) = jax.export.symbolic_shape("b")
    poly = jax.export.export(jax.jit(f))(jax.ShapeDtypeStruct((b, 8), jnp.float32), SPECS[1])
    out = {
        "exported": exp.serialize(),
        "mlirbc": exp.mlir_module_serialized,
        "mlir": exp.mlir_module().encode(),
        "pb": jax.jit(f).lower(*SPECS).compiler_ir("hlo").as_serialized_hlo_module_proto(),
        "poly.exported": poly.serialize(),
        "poly.mlir": poly.mlir_module().encode(),
        "poly.mlirbc": poly.mlir_module_serialized,
    }
    paths = {}
    for k, data in out.items():
        paths[k] = d / f"model.{k}"
        paths[k].write_bytes(bytes(data))
    return paths


@pytest.mark.parametrize("kind,expected", [("exported", formats.JAX_EXPORTED), ("mlirbc", formats.MLIR_BYTECODE),
                                           ("pb", formats.HLO_PROTO), ("mlir", formats.TEXT)])
def test_detected_by_content(files, kind, expected):
    assert formats.detect(files[kind].read_bytes()) == expected


def test_hlo_proto_wrappers_are_detected():
    module = jax.jit(f).lower(*SPECS).compiler_ir("hlo").as_serialized_hlo_module_proto()

    def wrap(payload: bytes) -> bytes:  # field 1, length-delimited
        n, size = len(payload), b""
        while True:
            size += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
            n >>= 7
            if not n:
                break
        return b"\x0a" + size + payload

    assert formats._proto_module(wrap(module)) == (module, "HloProto")
    assert formats._proto_module(wrap(wrap(module))) == (module, "HloSnapshot")


@pytest.mark.parametrize("kind", ["exported", "mlirbc", "mlir", "pb"])
def test_each_format_compiles_and_matches_jax(files, kind, tmp_path):
    lib = aotc.compile(str(files[kind]), out=str(tmp_path / "libm"))
    (y,) = aotc.load(lib)(X, W)
    np.testing.assert_allclose(y, np.asarray(jax.jit(f)(X, W)), rtol=1e-6, atol=1e-6)


def test_converted_text_keeps_argument_names(files):
    text, shown = read_model(files["exported"])
    assert 'loc("x")' in text and shown.endswith("(as StableHLO text)")


@pytest.mark.parametrize("kind", ["poly.exported", "poly.mlir", "poly.mlirbc"])
def test_polymorphic_export_names_the_dimension_and_the_flag(files, kind):
    r = CliRunner().invoke(main, ["info", str(files[kind])])
    assert r.exit_code == 1, r.output
    assert "'b'" in r.output and "--shape b=N" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("kind", ["poly.exported", "poly.mlir", "poly.mlirbc"])
def test_shape_flag_refines_a_polymorphic_export(files, kind):
    x = X[:2]
    out = aotc.run(str(files[kind]), inputs={"x": x, "w": W}, shapes=(("b", 2),))
    np.testing.assert_allclose(out[next(iter(out))], np.asarray(jax.jit(f)(x, W)), rtol=1e-6, atol=1e-6)


def test_shape_flag_on_the_cli(files, tmp_path):
    r = CliRunner().invoke(main, ["compile", str(files["poly.exported"]), "--shape", "b=3", "-o",
                                  str(tmp_path / "libp")])
    assert r.exit_code == 0, r.output
    assert "signature: (x: f32[3,8], w: f32[8,3])" in (tmp_path / "libp.h").read_text()


@pytest.mark.parametrize("args,message", [
    (["--shape", "c=2"], "no symbolic dimension 'c' (its symbolic dimensions: 'b')"),
    (["--shape", "b"], "--shape: expected NAME=SIZE such as b=1, not 'b'"),
    (["--shape", "b=x"], "expected NAME=SIZE"),
    (["--shape", "b=1", "--shape", "b=2"], "'b' is given twice"),
])
def test_bad_shape_flags(files, args, message):
    r = CliRunner().invoke(main, ["info", str(files["poly.exported"]), *args])
    assert r.exit_code == 1 and message in r.output, r.output


def test_shape_flag_on_hlo_text(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(jax.jit(f).lower(*SPECS).as_text(dialect="hlo"))
    r = CliRunner().invoke(main, ["info", str(path), "--shape", "b=1"])
    assert r.exit_code == 1 and "this is HLO text" in r.output


def test_unknown_binary_is_described_not_echoed(tmp_path):
    path = tmp_path / "noise.bin"
    data = bytes(range(256)) * 4
    path.write_bytes(data)
    r = CliRunner().invoke(main, ["info", str(path)])
    assert r.exit_code == 1
    assert r.output == (f"{path}: error: not a model: {len(data)} bytes of binary data in no format aotc reads "
                        "(HLO or StableHLO text, MLIR bytecode, a serialized jax.export artifact, an HLO proto)\n")


def test_corrupt_bytecode_is_one_clean_error(tmp_path, files):
    path = tmp_path / "cut.mlirbc"
    data = files["mlirbc"].read_bytes()
    path.write_bytes(data[:len(data) // 2])
    r = CliRunner().invoke(main, ["info", str(path)])
    assert r.exit_code == 1 and "MLIR bytecode" in r.output and "Traceback" not in r.output
    assert len(r.output.splitlines()) == 1 and "\ufffd" not in r.output


def test_without_jax_the_error_names_the_format_and_the_install(files, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_jax(name, *a, **k):
        if name == "jax" or name.startswith("jax."):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_jax)
    for kind, what in [("exported", "a serialized jax.export artifact"), ("mlirbc", "MLIR bytecode"),
                       ("pb", "an HLO proto (HloModuleProto)")]:
        with pytest.raises(AotcError) as info:
            read_model(files[kind])
        msg = info.value.format()
        assert msg.startswith(f"{files[kind]}: error: {what} (") and "pip install 'aotc[jax]'" in msg, msg


def test_a_dimension_expression_is_refined_from_the_serialized_export(tmp_path):
    (b,) = jax.export.symbolic_shape("b")
    exp = jax.export.export(jax.jit(lambda x: x.reshape(-1) * 2.0))(jax.ShapeDtypeStruct((2 * b, 3), jnp.float32))
    blob, text = tmp_path / "e.exported", tmp_path / "e.mlir"
    blob.write_bytes(bytes(exp.serialize()))
    text.write_text(exp.mlir_module())
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    (y,) = aotc.run(str(blob), inputs={"x": x}, shapes=(("b", 5),)).values()
    np.testing.assert_array_equal(y, x.reshape(-1) * 2.0)
    r = CliRunner().invoke(main, ["info", str(text), "--shape", "b=5"])  # the text says less than in_avals
    assert r.exit_code == 1 and "compile the serialized jax.export artifact instead" in r.output, r.output


def test_text_with_a_stray_control_byte_is_a_located_error(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(jax.jit(f).lower(*SPECS).as_text().replace("stablehlo.tanh", "stablehlo.tanh\x01", 1))
    r = CliRunner().invoke(main, ["info", str(path)])
    assert r.exit_code == 1 and "error: unexpected character U+0001" in r.output, r.output
    assert r.output.splitlines()[0].startswith(f"{path}:")
