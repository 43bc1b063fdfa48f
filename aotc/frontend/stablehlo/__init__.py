"""The StableHLO front end: MLIR text as JAX prints it (`jax.jit(f).lower(...).as_text()`)
into the same `aotc.hlo.ir.Module` the HLO parser builds, so everything after the front end
is shared.

`parse_stablehlo` is the entry point; `is_mlir` tells MLIR text from HLO text by its first
word. Errors are located `AotcError`s, like the HLO parser's.
"""
from __future__ import annotations

import re

from ...hlo.ir import Module
from .convert import to_module
from .lexer import Lexer
from .parser import Parser

_MLIR_START = re.compile(r"(?:\s+|//[^\n]*)*(?:module\b|func\.func\b|#)")


def is_mlir(text: str) -> bool:
    """Whether `text` is MLIR (starts with `module`, `func.func` or an alias after comments)."""
    return _MLIR_START.match(text) is not None


def parse_stablehlo(text: str, filename: str = "<string>") -> Module:
    """Parse StableHLO text into an HLO module; raises `AotcError` at the first error."""
    lx = Lexer(text, filename)
    return to_module(Parser(lx).module(), lx)


__all__ = ["is_mlir", "parse_stablehlo"]
