"""The front end: HLO text (and files) into the `aotc.hlo` IR.

`parse_hlo` / `parse_hlo_file` are the entry points; they raise `AotcError`
located at the first syntax error and never check what the module means.
"""
from .hlo_parser import decode_hlo, parse_hlo, parse_hlo_file, parse_shape

__all__ = ["decode_hlo", "parse_hlo", "parse_hlo_file", "parse_shape"]
