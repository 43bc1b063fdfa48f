"""`aotc.keras.compile`: a Keras 3 model (JAX backend) through `stateless_call` with its
variables, compared with the model's own jitted call; MobileNetV2 at random weights is slow."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import aotc
from aotc.errors import AotcError

jax = pytest.importorskip("jax")
if "keras" not in __import__("sys").modules:
    os.environ.setdefault("KERAS_BACKEND", "jax")  # only for this test process, before keras loads
keras = pytest.importorskip("keras")
pytestmark = [pytest.mark.jax,
              pytest.mark.skipif(keras.backend.backend() != "jax", reason="keras is not on the JAX backend")]


def _reference(model, x):
    tv = [v.value for v in model.trainable_variables]
    ntv = [v.value for v in model.non_trainable_variables]
    return np.asarray(jax.jit(lambda t, n, a: model.stateless_call(t, n, a, training=False)[0])(tv, ntv, x))


def _small_cnn():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((16, 16, 3)),
        keras.layers.Conv2D(8, 3, padding="same", name="conv"),
        keras.layers.BatchNormalization(name="bn"),
        keras.layers.ReLU(),
        keras.layers.DepthwiseConv2D(3, strides=2, padding="same", name="dw"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(5, activation="softmax", name="head"),
    ], name="small")
    bn = model.get_layer("bn")  # non-trivial moving statistics, so inference BN is exercised
    bn.moving_mean.assign(np.linspace(-0.5, 0.5, 8).astype(np.float32))
    bn.moving_variance.assign(np.linspace(0.5, 2.0, 8).astype(np.float32))
    return model


@pytest.mark.parametrize("weights", [pytest.param("bound", marks=pytest.mark.slow), "fed"])
def test_small_cnn_matches_keras(weights, tmp_path):
    model = _small_cnn()
    x = np.random.default_rng(0).standard_normal((2, 16, 16, 3)).astype(np.float32)
    lib = aotc.keras.compile(model, jax.ShapeDtypeStruct(x.shape, "float32"), weights=weights,
                             name="small", out=str(tmp_path / "libsmall"))
    m = aotc.load(lib)
    if weights == "bound":
        (y,) = m(x)
    else:
        assert "conv_kernel" in m.feed_names and "bn_moving_variance" in m.feed_names
        feeds = {n: v.numpy() for n, v in zip(
            ["conv_kernel", "conv_bias", "bn_gamma", "bn_beta", "dw_kernel", "dw_bias", "head_kernel",
             "head_bias", "bn_moving_mean", "bn_moving_variance"],
            list(model.trainable_variables) + list(model.non_trainable_variables))}
        (y,) = m(x=x, **feeds)
    np.testing.assert_allclose(y, _reference(model, x), rtol=1e-5, atol=1e-6)


def test_not_a_keras_model():
    with pytest.raises(AotcError, match="takes a Keras 3 model"):
        aotc.keras.compile(lambda x: x, np.ones(3, np.float32))


@pytest.mark.slow  # emulated
@pytest.mark.aarch64
@pytest.mark.skipif(not (shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64")),
                    reason="needs aarch64-linux-gnu-gcc and qemu-aarch64")
def test_small_cnn_on_aarch64_under_qemu(tmp_path):
    model = _small_cnn()
    x = np.random.default_rng(1).standard_normal((1, 16, 16, 3)).astype(np.float32)
    lib = aotc.keras.compile(model, x, target="aarch64", out=str(tmp_path / "libsmall"))
    assert lib.target.startswith("aarch64")
    files = aotc.keras.export(model, x, str(tmp_path / "files"))
    outs = aotc.run(files.model, config=files.config, inputs={"x": x}, target="aarch64")
    np.testing.assert_allclose(outs["y"], _reference(model, x), rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_mobilenet_v2_random_weights(tmp_path):
    keras.utils.set_random_seed(0)
    model = keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    x = np.random.default_rng(0).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    lib = aotc.keras.compile(model, jax.ShapeDtypeStruct(x.shape, "float32"), name="mobilenet",
                             out=str(tmp_path / "libmobilenet"))
    (y,) = aotc.load(lib)(x)
    np.testing.assert_allclose(y, _reference(model, x), rtol=1e-4, atol=1e-6)
