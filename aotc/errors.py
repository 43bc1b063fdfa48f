"""The error types users see, how they are printed, and the exit codes.

Every stage raises `AotcError` for bad input; the CLI prints `format()` and exits
with its `exit_code`. A location makes it `FILE:LINE:COL: error: message`
followed by the source line and a caret; a YAML key path makes it
`FILE: error: key.path: message`.

Exit codes of the `aotc` command:
    0  success
    1  bad input: the model, the config, an inputs file, an argument value
    2  usage: an unknown option or command, a missing argument (click), an -o that
       names no file prefix
    3  toolchain or environment: no working C compiler, a compiler or emulator
       that fails, out of memory
    4  an internal error of aotc (a bug): a one-line message asking for a report;
       `aotc --debug ...` shows the traceback
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a location is any object with file/line/col: errors sit below every stage
    from .hlo.ir import Loc


EXIT_INPUT, EXIT_USAGE, EXIT_TOOLCHAIN, EXIT_INTERNAL = 1, 2, 3, 4


class AotcError(Exception):
    exit_code = EXIT_INPUT

    def __init__(self, message: str, loc: Loc | None = None, source_line: str | None = None,
                 path: str | None = None, file: str | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.source_line = source_line  # the text of loc's line, for the caret display
        self.path = path  # YAML key path such as "feeds[2].shape"
        self.file = file  # file name when there is no loc

    def format(self) -> str:
        msg = f"{self.path}: {self.message}" if self.path else self.message
        if self.loc is None:
            where = f"{self.file}: " if self.file else ""
            return f"{where}error: {msg}"
        out = f"{self.loc.file}:{self.loc.line}:{self.loc.col}: error: {msg}"
        if self.source_line is not None and _binary(self.source_line):
            out += "\n(the line holds binary data: not shown)"
        elif self.source_line is not None:
            line = self.source_line.rstrip("\n")
            if len(line) > 200:  # keep the caret visible on huge lines
                start = max(0, self.loc.col - 100)
                line, caret_col = line[start:start + 200], self.loc.col - start
            else:
                caret_col = self.loc.col
            line = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in line)
            out += "\n" + line + "\n" + " " * (caret_col - 1) + "^"
        return out

    def __str__(self) -> str:
        return self.format()


def _binary(line: str) -> bool:
    """A source line is binary data, never echoed, when more than 8 of its characters, or more
    than a quarter, are unprintable or undecodable bytes (U+FFFD); a few stray bytes in a line
    of text still show it."""
    line = line.rstrip("\n")
    bad = sum(1 for ch in line if ch == "\ufffd" or not (ch.isprintable() or ch == "\t"))
    return bad > 8 or (bad > 1 and bad * 4 > len(line))


class ToolchainError(AotcError):
    """The C compiler, the archiver, an emulator or the machine failed, not the input."""

    exit_code = EXIT_TOOLCHAIN


class UsageError(AotcError):
    """An argument the command cannot be run with at all (as click's own usage errors)."""

    exit_code = EXIT_USAGE


def located(message: str, loc: Loc | None, source: str | None = None) -> AotcError:
    """An error at `loc`, with the source line taken from the full source text."""
    line = None
    if loc is not None and source is not None:
        lines = source.split("\n")
        if 1 <= loc.line <= len(lines):
            line = lines[loc.line - 1]
    return AotcError(message, loc, line)
