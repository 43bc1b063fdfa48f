"""`aotc.jax`: a JAX function to a C library in one call.

    lib = aotc.jax.compile(predict, x_spec, params, weights="bound", name="predict",
                           out="build/libpredict", target="aarch64")
    m = aotc.load(lib); (y,) = m(x)

`predict` is called as `predict(x, params)` (`predict(*inputs, params)` for a tuple of
inputs). Feed, fetch and weight names come from the argument names and pytree paths
(`params['dense']['kernel']` is `dense_kernel`). jax is imported only when this is used
(`pip install 'aotc[jax]'`).
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace

from .api import CompileResult
from .api import compile as compile_files
from .integrations.lowering import ModelFiles, write_model_files
from .options import CompileOptions


def export(fn, inputs, params=None, out_dir: str = "export", *, weights: str = "bound", name: str | None = None,
           dialect: str = "stablehlo", input_names: list[str] | None = None) -> ModelFiles:
    """Write `model.mlir` (or `model.hlo` with dialect='hlo'), `cfg.yaml` and, for bound weights,
    `weights.npz` into `out_dir`: the files `aotc compile` reads."""
    return write_model_files(fn, inputs, params, out_dir, weights=weights, name=name, dialect=dialect,
                             input_names=input_names)


def compile(fn, inputs, params=None, *, weights: str = "bound", name: str = "model", out: str | None = None,
            target: str | None = None, dialect: str = "stablehlo", input_names: list[str] | None = None,
            options: CompileOptions | None = None, **kw) -> CompileResult:
    """Lower `fn` with jax and compile it: `<out>.c`, `<out>.h`, `<out>.o` (default out: lib<name>).
    weights='bound' freezes `params` into the library; 'fed' makes them arguments; 'file' writes
    them to `<out>.weights`, which `aotc.load` reads (docs/weights.md)."""
    options = options or CompileOptions()
    if weights == "file":
        options = replace(options, weights="file")
    if target is not None:
        options = replace(options, target=target)
    work = tempfile.mkdtemp(prefix="aotc-jax-")
    try:
        files = export(fn, inputs, params, work, weights=weights, name=name, dialect=dialect,
                       input_names=input_names)
        return compile_files(files.model, config=files.config, out=out or f"lib{name}",
                             options=replace(options, source_name=options.source_name or f"{name} (jax)"), **kw)
    finally:
        shutil.rmtree(work, ignore_errors=True)
