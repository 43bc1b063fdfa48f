"""Model text files: bytes to text for the parsers (a UTF-8 error is located, after any
syntax error before it), and `parse_hlo_file`. The one place that knows both parsers'
entry points besides `parse_model`.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import AotcError, located
from ..hlo.ir import Loc, Module
from .hlo_parser import parse_hlo
from .stablehlo import is_mlir, parse_stablehlo


def parse_hlo_file(path: str | Path) -> Module:
    """Parse an HLO text file (UTF-8); raises `AotcError` for unreadable or malformed files."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise AotcError(f"cannot read file: {e.strerror or e}", file=str(path)) from None
    return parse_hlo(decode_hlo(data, str(path)), str(path))


def decode_hlo(data: bytes, path: str) -> str:
    """The text of an HLO file's bytes; bytes that are not UTF-8 are a located error (or the
    syntax error before them, whichever comes first)."""
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line_start = before.rfind(b"\n") + 1
        col = len(before[line_start:].decode("utf-8", "replace")) + 1
        loc = Loc(path, before.count(b"\n") + 1, col)
        source = data.decode("utf-8", "replace")
        prefix = before.decode("utf-8")
        try:  # a syntax error before the bad byte is the first error
            (parse_stablehlo if is_mlir(prefix) else parse_hlo)(prefix, path)
        except AotcError as earlier:
            if earlier.loc is not None and (earlier.loc.line, earlier.loc.col) < (loc.line, loc.col):
                raise located(earlier.message, earlier.loc, source) from None
        raise located(f"invalid UTF-8 byte 0x{data[e.start]:02x}", loc, source) from None
