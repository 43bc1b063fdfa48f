"""Compiling straight from Python frameworks: a JAX function or a Keras 3 model is lowered
with jax, written as the files `aotc compile` reads (model text, config, weights), and
compiled. jax and keras are optional and imported only when one of these is used;
`names.py` (pytree paths into C names) needs neither.
"""
