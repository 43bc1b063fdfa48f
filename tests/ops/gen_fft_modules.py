"""Export the jnp.fft functions tests/ops/test_fft.py compiles, as JAX prints them:
pre-optimization (`jit(f).lower(x).as_text(dialect="hlo")`) and post-optimization
(`jit(f).lower(x).compile().as_text()`) HLO, into tests/ops/data/fft_jax/<name>.{pre,post}.hlo.
Needs jax; c128 modules are exported in x64 mode. Then run gen_expected.py fft_jax.

    python tests/ops/gen_fft_modules.py
"""
from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "fft_jax"

# name -> (jnp.fft function, keyword arguments, input shape, input dtype)
MODULES = {
    "fft_c64": ("fft", {}, (4, 1000), "complex64"),
    "ifft_c64": ("ifft", {}, (4, 1024), "complex64"),
    "rfft_f32": ("rfft", {}, (3, 210), "float32"),
    "irfft_c64": ("irfft", {"n": 96}, (3, 49), "complex64"),
    "fft2_c64": ("fft2", {}, (2, 64, 48), "complex64"),
    "ifft2_c64": ("ifft2", {}, (64, 48), "complex64"),
    "rfft2_f32": ("rfft2", {}, (2, 64, 48), "float32"),
    "irfft2_c64": ("irfft2", {"s": (64, 48)}, (2, 64, 25), "complex64"),
    "fftn_c64": ("fftn", {}, (16, 12, 10), "complex64"),
    "rfftn_f32": ("rfftn", {}, (2, 16, 12, 10), "float32"),
    "irfftn_c64": ("irfftn", {"s": (16, 12, 10)}, (16, 12, 6), "complex64"),
    "fft_c128": ("fft", {}, (2, 97), "complex128"),
    "ifft2_c128": ("ifft2", {}, (64, 48), "complex128"),
    "rfft_f64": ("rfft", {}, (3, 1000), "float64"),
    "irfftn_c128": ("irfftn", {"s": (16, 12, 10)}, (16, 12, 6), "complex128"),
}


def export(name: str) -> None:
    import jax
    import jax.numpy as jnp

    fn_name, kw, shape, dtype = MODULES[name]
    fn = getattr(jnp.fft, fn_name)
    x = jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    lowered = jax.jit(lambda a: fn(a, **kw)).lower(x)
    (OUT / f"{name}.pre.hlo").write_text(lowered.as_text(dialect="hlo"))
    post = lowered.compile().as_text().replace(str(Path(__file__).resolve()), "tests/ops/gen_fft_modules.py")
    (OUT / f"{name}.post.hlo").write_text(post)


def main() -> int:
    import jax

    OUT.mkdir(parents=True, exist_ok=True)
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        for name, (_, _, _, dtype) in MODULES.items():
            if (dtype in ("complex128", "float64")) == x64:
                export(name)
                print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
