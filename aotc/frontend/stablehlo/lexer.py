"""The MLIR text scanner of the StableHLO front end: trivia, tokens and source locations.

It owns character-level concerns only: `//` comments, the spelling of SSA values (`%0`,
`%1#2`), symbols (`@main`), block labels (`^bb0`), attribute and type aliases (`#loc1`,
`!stablehlo.token`), numbers (including `0x7FC00000` bit patterns), strings and punctuation.
Tensor types and dense literals are read by `types` and `attributes` at the cursor. It knows
no grammar.
"""
from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from ...errors import AotcError, located
from ...hlo.ir import Loc
from ..lexer import char_name

_TRIVIA = re.compile(r"(?:[ \t\r\n\f\v]+|//[^\n]*)*")
_TOKEN = re.compile(
    r"""(?P<value>%[A-Za-z0-9_$.\-]+(?:\#\d+)?)
      | (?P<symbol>@(?:[A-Za-z0-9_$.\-]+|"(?:[^"\\\n]|\\.)*"))
      | (?P<block>\^[A-Za-z0-9_$.\-]+)
      | (?P<hash>\#[A-Za-z_][A-Za-z0-9_$.\-]*)
      | (?P<bang>![A-Za-z_][A-Za-z0-9_$.]*)
      | (?P<name>[A-Za-z_][A-Za-z0-9_$.]*)
      | (?P<num>0x[0-9A-Fa-f]+|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)
      | (?P<string>"(?:[^"\\\n]|\\.)*")
      | (?P<punct>->|[{}()\[\]<>,=:*?|+-])
      | (?P<eof>\Z)""",
    re.S | re.X | re.A,
)
MAX_NESTING = 200


class Token(NamedTuple):
    kind: str  # value | symbol | block | hash | bang | name | num | string | punct | eof
    text: str
    pos: int
    end: int


def describe(tok: Token) -> str:
    """How a token is named in an error message."""
    if tok.kind == "eof":
        return "end of input"
    text = tok.text if len(tok.text) <= 40 else tok.text[:37] + "..."
    return f"'{text}'"


class Lexer:
    """A cursor over MLIR text producing tokens on demand."""

    def __init__(self, text: str, filename: str = "<string>"):
        self.text = text
        self.file = filename
        self.pos = 0
        self._peeked: Token | None = None
        self._peek_from = -1
        self._line_starts: list[int] | None = None

    def loc(self, pos: int) -> Loc:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_right(self._line_starts, pos)
        return Loc(self.file, line, pos - self._line_starts[line - 1] + 1)

    def error(self, message: str, pos: int) -> AotcError:
        return located(message, self.loc(pos), self.text)

    def skip(self) -> int:
        """Skip whitespace and comments; return the new offset."""
        self.pos = _TRIVIA.match(self.text, self.pos).end()
        return self.pos

    def peek(self) -> Token:
        if self._peeked is not None and self._peek_from == self.pos:
            return self._peeked
        start = self.pos
        pos = _TRIVIA.match(self.text, start).end()
        m = _TOKEN.match(self.text, pos)
        if m is None:
            ch = self.text[pos]
            if ch == '"':
                raise self.error("unterminated string", pos)
            raise self.error(f"unexpected character {char_name(ch)}", pos)
        kind = m.lastgroup or "punct"
        tok = Token(kind, m.group(kind), m.start(kind), m.end())
        self._peeked, self._peek_from = tok, start
        return tok

    def next(self) -> Token:
        tok = self.peek()
        self.pos = tok.end
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.text == text and tok.kind in ("punct", "name")

    def accept(self, text: str) -> Token | None:
        return self.next() if self.at(text) else None

    def expect(self, text: str, context: str = "") -> Token:
        tok = self.peek()
        if tok.text != text or tok.kind not in ("punct", "name"):
            where = f" {context}" if context else ""
            raise self.error(f"expected '{text}'{where}, found {describe(tok)}", tok.pos)
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            raise self.error(f"expected {what}, found {describe(tok)}", tok.pos)
        return self.next()

    def expect_int(self, what: str = "an integer") -> int:
        tok = self.peek()
        if tok.kind != "num" or not re.fullmatch(r"[-+]?\d{1,40}", tok.text):
            raise self.error(f"expected {what}, found {describe(tok)}", tok.pos)
        self.next()
        return int(tok.text)

    def take(self, rx: re.Pattern) -> re.Match | None:
        """Match `rx` at the cursor after trivia; advance on success."""
        m = rx.match(self.text, self.skip())
        if m is not None:
            self.pos = m.end()
        return m

    def balanced(self, opener: str) -> str:
        """Skip a bracketed span starting with `opener` at the cursor (strings honoured);
        return its text. Used for parts aotc ignores (locations, unknown attributes)."""
        closer = {"(": ")", "<": ">", "{": "}", "[": "]"}
        start = self.expect(opener).pos
        stack = [opener]
        while stack:
            tok = self.next()
            if tok.kind == "eof":
                at = self.loc(start)
                raise self.error(f"unexpected end of input ('{opener}' at {at.line}:{at.col} is not closed)",
                                 tok.pos)
            if tok.kind != "punct":
                continue
            if tok.text in closer:
                if len(stack) >= MAX_NESTING:
                    raise self.error(f"nesting deeper than {MAX_NESTING}", tok.pos)
                stack.append(tok.text)
            elif tok.text == closer[stack[-1]]:
                stack.pop()
            elif tok.text in ")}]" or (tok.text == ">" and stack[-1] == "<"):
                raise self.error(f"unbalanced '{tok.text}': expected '{closer[stack[-1]]}'", tok.pos)
        return self.text[start:self.pos]
