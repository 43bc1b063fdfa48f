"""The front end: HLO text or StableHLO (MLIR) text, and files, into the `aotc.hlo` IR.

`parse_model` reads either, chosen by content (MLIR starts with `module` or `func.func`
after comments); `parse_hlo` / `parse_hlo_file` and `parse_stablehlo` read one each. They
raise `AotcError` located at the first error and never check what the module means.
`read_model` reads a model file of any accepted format (binary ones through jaxlib,
`formats.py`) as text.
"""
from __future__ import annotations

import os

from ..errors import AotcError
from ..hlo.ir import Module
from .files import read_input
from .formats import model_text, polymorphic_hint
from .hlo_file import decode_hlo, parse_hlo_file
from .hlo_parser import parse_hlo, parse_shape
from .stablehlo import is_mlir, parse_stablehlo


def parse_model(text: str, filename: str = "<string>") -> Module:
    """An HLO or StableHLO module, by its text's first word."""
    if not is_mlir(text):
        return parse_hlo(text, filename)
    try:
        return parse_stablehlo(text, filename)
    except AotcError as e:
        hint = polymorphic_hint(text) if e.message.startswith("dynamic dimensions") else ""
        if not hint:
            raise
        raise AotcError(e.message + hint, e.loc, e.source_line, e.path, e.file) from None


def read_model(path: str | os.PathLike, shapes: dict[str, int] | None = None) -> tuple[str, str]:
    """(text, the name its errors show) of a model file: HLO or StableHLO text, MLIR bytecode,
    a serialized jax.export artifact or an HLO proto; polymorphic ones refined to `shapes`."""
    file = os.fspath(path)
    return model_text(read_input(file, "model"), file, shapes)


__all__ = ["decode_hlo", "is_mlir", "parse_hlo", "parse_hlo_file", "parse_model", "parse_shape", "parse_stablehlo",
           "read_model"]
