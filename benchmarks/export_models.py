"""Export the whole-model benchmarks of benchmarks/models.py with random, variance-scaled weights.

Models (batch 1, f32): Keras 3 applications MobileNetV2, EfficientNetB0, ResNet50 and
DenseNet121 at 224x224x3 (`weights=None`, then every convolution and dense kernel drawn
again He-normal, std sqrt(2 / fan_in), so activations stay O(1) through the ReLUs where
Keras' Glorot-uniform defaults shrink MobileNetV2's output to 1e-11; BatchNorm at identity
statistics; logits, without the softmax head), and `bert4`, a BERT-style encoder written
with Keras layers: 4 blocks of 4-head self-attention and a GELU MLP, seq 128, d 256, MLP 1024,
post-layernorm, on embedded inputs. Each model goes through `aotc.keras.export` as HLO text
into build/models/<model>/{fed,bound}/ (model.hlo, cfg.yaml, weights.npz), beside
`inputs.npz` (x and every weight by its feed name) and `meta.json` (XLA's flop count and the
weight bytes). The files are large and are not committed: `python benchmarks/export_models.py`
rebuilds them (Keras runs on its JAX backend, set here for this process only).

    python benchmarks/export_models.py [--only resnet50] [--out build/models]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
CACHE = os.path.join(ROOT, "build", "models")

MODELS = {
    "mobilenetv2": "MobileNetV2 224x224x3",
    "efficientnetb0": "EfficientNetB0 224x224x3",
    "resnet50": "ResNet50 224x224x3",
    "densenet121": "DenseNet121 224x224x3",
    "bert4": "BERT-style encoder, 4 layers, seq 128, d 256, 4 heads, MLP 1024",
}
_SEQ, _D, _HEADS, _MLP, _LAYERS = 128, 256, 4, 1024, 4


def _keras():
    if "keras" not in sys.modules:
        os.environ.setdefault("KERAS_BACKEND", "jax")  # this process only, before keras loads
    import keras
    if keras.backend.backend() != "jax":
        raise SystemExit(f"keras was loaded with the {keras.backend.backend()!r} backend; run with KERAS_BACKEND=jax")
    return keras


def _bert(keras):
    """A post-layernorm BERT encoder on embedded tokens (no embedding table: x is f32[1,128,256])."""
    x = inp = keras.Input((_SEQ, _D), batch_size=1, name="x")
    for i in range(_LAYERS):
        a = keras.layers.MultiHeadAttention(_HEADS, _D // _HEADS, name=f"attn{i}")(x, x)
        x = keras.layers.LayerNormalization(epsilon=1e-12, name=f"ln{i}a")(x + a)
        h = keras.layers.Dense(_MLP, activation="gelu", name=f"ffn{i}a")(x)
        h = keras.layers.Dense(_D, name=f"ffn{i}b")(h)
        x = keras.layers.LayerNormalization(epsilon=1e-12, name=f"ln{i}b")(x + h)
    return keras.Model(inp, x, name="bert4")


def he_normal(model, rng) -> None:
    """Every conv / dense kernel drawn N(0, 2 / fan_in) (depthwise: fan_in = kh * kw)."""
    for v in model.weights:
        if not v.path.endswith("kernel") or len(v.shape) < 2:
            continue
        shape = tuple(v.shape)
        fan_in = shape[0] * shape[1] if "depthwise" in v.path else int(np.prod(shape[:-1]))
        v.assign((rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32))


def calibrate_batchnorm(keras, model, x) -> None:
    """Each BatchNormalization's moving statistics := its input's, layer by layer in order."""
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            a = np.asarray(keras.Model(model.input, layer.input)(x), np.float64)
            axes = tuple(range(a.ndim - 1))
            layer.moving_mean.assign(a.mean(axis=axes).astype(np.float32))
            layer.moving_variance.assign(a.var(axis=axes).astype(np.float32))


def build(name: str):
    """(keras model, input array) with the model's random weights (seeded)."""
    keras = _keras()
    keras.utils.set_random_seed(0)
    apps = {"mobilenetv2": "MobileNetV2", "efficientnetb0": "EfficientNetB0", "resnet50": "ResNet50",
            "densenet121": "DenseNet121"}
    rng = np.random.default_rng(1)
    if name in apps:
        # logits (no softmax head): at random weights the probabilities are all near 1/1000,
        # which would hide differences in the comparison with XLA
        model = getattr(keras.applications, apps[name])(weights=None, input_shape=(224, 224, 3),
                                                        classifier_activation=None)
        he_normal(model, np.random.default_rng(0))
        x = rng.uniform(0.0, 255.0, (1, 224, 224, 3)).astype(np.float32)  # an image, before preprocessing
        if name != "efficientnetb0":  # EfficientNet rescales inside the model; the others take [-1, 1]-ish
            x = (x / np.float32(127.5) - np.float32(1.0)).astype(np.float32)
        calibrate_batchnorm(keras, model, x)
        return model, x
    if name == "bert4":
        return _bert(keras), rng.standard_normal((1, _SEQ, _D)).astype(np.float32)
    raise SystemExit(f"unknown model {name!r}")


def export(name: str, out: str = CACHE) -> None:
    import jax

    import aotc.keras
    from aotc.keras import _function

    model, x = build(name)
    d = os.path.join(out, name)
    files = {}
    for mode in ("fed", "bound"):
        files[mode] = aotc.keras.export(model, x, os.path.join(d, mode), weights=mode, name=name, dialect="hlo")
    fn, params = _function(model)
    feeds = {"x": x, **params}
    missing = [f for f in files["fed"].feeds if f not in feeds]
    if missing:
        raise SystemExit(f"{name}: feeds without values: {missing[:5]}")
    np.savez(os.path.join(d, "inputs.npz"), **{f: feeds[f] for f in files["fed"].feeds})
    compiled = jax.jit(fn).lower(x, params).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    y = np.asarray(compiled(x, params))
    meta = {"what": MODELS[name], "flops": float(cost.get("flops", 0.0)), "output_std": float(y.std()),
            "weight_bytes": int(sum(v.nbytes for v in params.values())), "weights": len(params),
            "feeds": list(files["fed"].feeds)}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"{name}: {len(params)} weights, {meta['weight_bytes'] / 1e6:.1f} MB, "
          f"{meta['flops'] / 1e9:.2f} GFLOP, output std {meta['output_std']:.3g} -> {os.path.relpath(d, ROOT)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="export the model benchmarks (Keras on JAX) to HLO text")
    ap.add_argument("--only", action="append", choices=sorted(MODELS))
    ap.add_argument("--out", default=CACHE)
    a = ap.parse_args(argv)
    for name in a.only or list(MODELS):
        export(name, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
