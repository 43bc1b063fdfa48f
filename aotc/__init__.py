"""aotc: compile XLA HLO text modules to self-contained C libraries."""
__version__ = "0.1.0"

from .api import CompileResult, bench, compile, load, run  # noqa: E402
from .errors import AotcError  # noqa: E402
from .options import CompileOptions  # noqa: E402
from . import jax, keras  # noqa: E402  (jax and keras themselves are imported only when used)

__all__ = ["AotcError", "CompileOptions", "CompileResult", "bench", "compile", "load", "run", "__version__", "jax", "keras"]
