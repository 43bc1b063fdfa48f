"""`aotc.keras`: a Keras 3 model to a C library in one call, through JAX.

    lib = aotc.keras.compile(model, jax.ShapeDtypeStruct((1, 224, 224, 3), "float32"),
                             out="build/libnet")

The model runs as `model.stateless_call(trainable, non_trainable, x, training=False)` with
its current variables, named after their paths (`dense/kernel` is `dense_kernel`). Keras
must use the JAX backend (`KERAS_BACKEND=jax` before keras is imported).
"""
from __future__ import annotations

import sys

import numpy as np

from .api import CompileResult
from .errors import AotcError
from .integrations.lowering import ModelFiles
from .integrations.names import c_identifier, unique_names
from .jax import compile as compile_jax
from .jax import export as export_jax
from .options import CompileOptions


def _function(model):
    """(fn(x, params), params) for a built Keras model: params maps C names to arrays."""
    keras = sys.modules.get("keras")
    if keras is None or not hasattr(model, "stateless_call"):
        raise AotcError("aotc.keras.compile takes a Keras 3 model (keras.Model)")
    if keras.backend.backend() != "jax":
        raise AotcError(f"Keras uses the {keras.backend.backend()!r} backend; aotc lowers through JAX: "
                        "set KERAS_BACKEND=jax before importing keras")
    variables = list(model.trainable_variables) + list(model.non_trainable_variables)
    paths = [v.path.split("/") for v in variables]
    if paths and all(len(p) > 1 and p[0] == paths[0][0] for p in paths):  # the model's own name
        paths = [p[1:] for p in paths]
    names = unique_names([(c_identifier(p, "w"), f"variable '{v.path}'") for p, v in zip(paths, variables)])
    n_train = len(model.trainable_variables)
    params = {n: np.asarray(v.value) for n, v in zip(names, variables)}

    def fn(x, p):
        values = [p[n] for n in names]
        y, _ = model.stateless_call(values[:n_train], values[n_train:], x, training=False)
        return y

    return fn, params


def export(model, input_spec, out_dir: str = "export", *, weights: str = "bound", name: str | None = None,
           dialect: str = "stablehlo") -> ModelFiles:
    """Write the model's `model.mlir`, `cfg.yaml` and `weights.npz` into `out_dir`."""
    fn, params = _function(model)
    return export_jax(fn, input_spec, params, out_dir, weights=weights, name=name, dialect=dialect,
                      input_names=["x"])


def compile(model, input_spec, *, weights: str = "bound", name: str = "model", out: str | None = None,
            target: str | None = None, dialect: str = "stablehlo", options: CompileOptions | None = None,
            **kw) -> CompileResult:
    """Compile a Keras 3 model at `input_spec` (a jax.ShapeDtypeStruct or an array)."""
    fn, params = _function(model)
    return compile_jax(fn, input_spec, params, weights=weights, name=name, out=out, target=target,
                       dialect=dialect, input_names=["x"], options=options, **kw)
