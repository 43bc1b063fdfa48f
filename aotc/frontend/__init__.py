"""The front end: HLO text or StableHLO (MLIR) text, and files, into the `aotc.hlo` IR.

`parse_model` reads either, chosen by content (MLIR starts with `module` or `func.func`
after comments); `parse_hlo` / `parse_hlo_file` and `parse_stablehlo` read one each. They
raise `AotcError` located at the first error and never check what the module means.
"""
from ..hlo.ir import Module
from .hlo_parser import decode_hlo, parse_hlo, parse_hlo_file, parse_shape
from .stablehlo import is_mlir, parse_stablehlo


def parse_model(text: str, filename: str = "<string>") -> Module:
    """An HLO or StableHLO module, by its text's first word."""
    return parse_stablehlo(text, filename) if is_mlir(text) else parse_hlo(text, filename)


__all__ = ["decode_hlo", "is_mlir", "parse_hlo", "parse_hlo_file", "parse_model", "parse_shape", "parse_stablehlo"]
