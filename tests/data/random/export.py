"""Regenerate the jax.random models of tests/ops/test_random.py: each sampler under each
PRNG implementation (threefry2x32, rbg, unsafe_rbg), exported as XLA's HLO text before
optimization (`jit(f).lower(...).as_text(dialect="hlo")`, NAME.pre.hlo) and after
(`jit(f).lower(...).compile().as_text()`, NAME.post.hlo), with the key data it runs on
and the outputs XLA:CPU computes (NAME.npz: in0, out0, out1, ...). Needs jax.

    python tests/data/random/export.py            # every model
    python tests/data/random/export.py normal     # models whose name contains a substring
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.ops.gen_expected import save_npz  # noqa: E402
from tests.oracle.xla import strip_debug_info as strip  # noqa: E402

IMPLS = {"tf": "threefry2x32", "rbg": "rbg", "urbg": "unsafe_rbg"}
# unsafe_rbg differs from rbg only where keys are split or folded: its other models are
# byte-identical to rbg's and are not stored
URBG_ONLY = ("randint", "permutation", "split_fold_in")


def samplers(jax, jnp):
    r = jax.random
    return {
        "normal": lambda k: (r.normal(k, (1000,)), r.normal(k, (64, 128))),
        "uniform": lambda k: (r.uniform(k, (1000,)), r.uniform(k, (64, 128), jnp.float32, -2.0, 3.0)),
        "randint": lambda k: (r.randint(k, (1000,), 0, 10), r.randint(k, (64, 128), -1000, 77777)),
        "bernoulli": lambda k: (r.bernoulli(k, 0.3, (1000,)), r.bernoulli(k, 0.7, (64, 128))),
        "split_fold_in": lambda k: (r.key_data(r.split(k, 5)), r.key_data(r.fold_in(k, 12345)),
                                    r.bits(r.fold_in(r.split(k)[1], 7), (1000,))),
        "permutation": lambda k: (r.permutation(k, 1000), r.permutation(k, jnp.arange(64 * 128).reshape(64, 128), axis=1)),
        "categorical": lambda k: (r.categorical(k, jnp.linspace(-2.0, 2.0, 1000)),
                                  r.categorical(k, jnp.sin(jnp.arange(64 * 128.0)).reshape(64, 128), axis=-1)),
        "truncated_normal": lambda k: (r.truncated_normal(k, -1.5, 2.0, (1000,)),
                                       r.truncated_normal(k, -0.5, 0.5, (64, 128))),
    }


def key_data(impl: str) -> np.ndarray:
    n = 2 if impl == "threefry2x32" else 4
    return np.array([0x12345678, 0x9ABCDEF0, 0x0BADF00D, 0xCAFEBABE][:n], np.uint32)


def main(argv: list[str]) -> int:
    import jax
    import jax.numpy as jnp
    for short, impl in IMPLS.items():
        for sname, fn in samplers(jax, jnp).items():
            name = f"{short}_{sname}"
            if (argv and not any(a in name for a in argv)) or (short == "urbg" and sname not in URBG_ONLY):
                continue
            f = jax.jit(lambda kd, fn=fn, impl=impl: fn(jax.random.wrap_key_data(kd, impl=impl)))
            kd = key_data(impl)
            lowered = f.lower(kd)
            (HERE / f"{name}.pre.hlo").write_text(strip(lowered.as_text(dialect="hlo")))
            (HERE / f"{name}.post.hlo").write_text(strip(lowered.compile().as_text()))
            outs = [np.asarray(o) for o in f(kd)]
            arrays = {"in0": kd}
            arrays.update({f"out{k}": o for k, o in enumerate(outs)})
            save_npz(HERE / f"{name}.npz", arrays)
            print(name, [o.shape for o in outs])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
