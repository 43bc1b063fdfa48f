"""A JAX function with its input specs and weights, lowered by jax into the three files
`aotc compile` reads: the module (StableHLO `model.mlir` or HLO `model.hlo`), `cfg.yaml`
naming feeds, fetches and bound weights after their pytree paths, and `weights.npz`.

The function is called as `fn(*inputs, params)` (or `fn(*inputs)` without params). jax is
imported here, inside the functions, so that aotc works without it. Nothing here compiles.
"""
from __future__ import annotations

import inspect
import os
from dataclasses import dataclass

import numpy as np
import yaml

from ..errors import AotcError
from .names import c_identifier, path_parts, path_text, unique_names

WEIGHT_MODES = ("bound", "fed", "file")


class WeightsModeError(AotcError, ValueError):
    """A `weights=` value aotc does not offer."""


@dataclass(frozen=True)
class ModelFiles:
    model: str  # model.mlir or model.hlo
    config: str  # cfg.yaml
    weights: str | None  # weights.npz (bound weights only)
    feeds: tuple[str, ...]
    fetches: tuple[str, ...]
    bound: tuple[str, ...]


def import_jax():
    """The jax module, or an AotcError saying how to install it."""
    try:
        import jax  # optional dependency: pip install 'aotc[jax]'
    except ImportError:
        raise AotcError("compiling from Python needs jax: pip install 'aotc[jax]' (or pip install jax)") from None
    return jax


def check_weights_mode(weights: str) -> None:
    if weights not in WEIGHT_MODES:
        raise WeightsModeError(f"weights={weights!r}: use 'bound' (frozen into the library), 'fed' "
                               "(passed as arguments at each call) or 'file' (read from PREFIX.weights at run time)")


def spec_of(jax, leaf):
    """A ShapeDtypeStruct for an array, a spec, or a bare shape tuple (float32)."""
    if isinstance(leaf, jax.ShapeDtypeStruct):
        return leaf
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        return jax.ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype)
    raise AotcError(f"an input spec must be an array or a jax.ShapeDtypeStruct, not {type(leaf).__name__}")


def argument_names(fn, count: int) -> list[str]:
    """The names of fn's first `count` positional parameters (`x`, `x1`, ... when unknown)."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:count]]
    return names + [f"x{i}" if i else "x" for i in range(len(names), count)]


def write_model_files(fn, inputs, params, out_dir: str, *, weights: str = "bound", name: str | None = None,
                      dialect: str = "stablehlo", input_names: list[str] | None = None,
                      output_name: str = "y") -> ModelFiles:
    """Lower `fn` for `inputs` (a tuple of positional inputs, each a pytree of arrays or
    ShapeDtypeStructs) and `params` (a pytree of arrays or None) and write the files."""
    check_weights_mode(weights)
    if dialect not in ("stablehlo", "hlo"):
        raise AotcError(f"dialect={dialect!r}: use 'stablehlo' or 'hlo'")
    jax = import_jax()
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    roots = input_names or argument_names(fn, len(inputs))
    in_leaves, in_tree = jax.tree_util.tree_flatten_with_path(inputs)
    p_leaves, p_tree = jax.tree_util.tree_flatten_with_path(params) if params is not None else ([], None)
    specs = [spec_of(jax, leaf) for _, leaf in in_leaves]
    values = [np.asarray(leaf) for _, leaf in p_leaves]
    specs += [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in values]
    n_in = len(in_leaves)

    def flat(*leaves):
        xs = jax.tree_util.tree_unflatten(in_tree, leaves[:n_in])
        if p_tree is None:
            return fn(*xs)
        return fn(*xs, jax.tree_util.tree_unflatten(p_tree, leaves[n_in:]))

    flat.__name__ = getattr(fn, "__name__", "model")  # the module's name: jit_<name>

    feeds = [(c_identifier([roots[p[0].idx], *path_parts(p[1:])], "x"), path_text(roots[p[0].idx], p[1:]))
             for p, _ in in_leaves]
    weights_named = [(c_identifier(path_parts(p), "w"), path_text("params", p)) for p, _ in p_leaves]
    try:
        out_shape = jax.eval_shape(flat, *specs)
        lowered = jax.jit(flat, keep_unused=True).lower(*specs)
    except AotcError:
        raise
    except Exception as e:
        raise AotcError(f"jax cannot trace the function for these inputs: {type(e).__name__}: "
                        f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}") from None
    out_leaves = jax.tree_util.tree_flatten_with_path(out_shape)[0]
    fetches = [(c_identifier(path_parts(p), output_name) if p else output_name, path_text("output", p))
               for p, _ in out_leaves]
    fed = feeds + (weights_named if weights == "fed" else [])
    unique_names(fed + fetches)
    if weights != "fed":  # bound or file: the same files (`compile --weights file` decides)
        unique_names(weights_named)
    text = lowered.as_text() if dialect == "stablehlo" else lowered.as_text(dialect="hlo")

    os.makedirs(out_dir, exist_ok=True)
    model = os.path.join(out_dir, "model.mlir" if dialect == "stablehlo" else "model.hlo")
    config = os.path.join(out_dir, "cfg.yaml")
    cfg: dict = {}
    if name:
        cfg["name"] = name
    cfg["feeds"] = [{"id": i, "name": n} for i, (n, _) in enumerate(fed)]
    cfg["fetches"] = [{"id": i, "name": n} for i, (n, _) in enumerate(fetches)]
    npz = None
    if weights != "fed" and values:
        npz = os.path.join(out_dir, "weights.npz")
        cfg["bound"] = {"file": "weights.npz",
                        "params": [{"id": n_in + i, "key": n} for i, (n, _) in enumerate(weights_named)]}
        np.savez(npz, **{n: v for (n, _), v in zip(weights_named, values)})
    with open(model, "w", encoding="utf-8") as f:
        f.write(text)
    with open(config, "w", encoding="utf-8") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    return ModelFiles(model, config, npz, tuple(n for n, _ in fed), tuple(n for n, _ in fetches),
                      tuple(n for n, _ in weights_named) if weights != "fed" else ())
