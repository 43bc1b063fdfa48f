"""Exports matmul.hlo from JAX (needs jax): the model of tfcompile's documented example."""
import jax
import jax.numpy as jnp


def matmul(x_hold, y_hold):
    return jnp.matmul(x_hold, y_hold)


if __name__ == "__main__":
    x = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    y = jax.ShapeDtypeStruct((3, 2), jnp.float32)
    with open("matmul.hlo", "w") as f:
        f.write(jax.jit(matmul).lower(x, y).as_text(dialect="hlo"))
