"""The HLO text scanner: trivia, tokens, balanced raw spans and source locations.

It owns character-level concerns only: what counts as whitespace and comments
(`/* */`, `//`), the shape of a token, where a verbatim attribute value ends,
and how an offset becomes `file:line:col`. It knows no grammar; the parser and
the attribute/literal decoders decide what tokens mean.
"""
from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from ..errors import AotcError, located
from ..hlo.ir import Loc

# Deepest nesting of tuple shapes, literal braces or raw brackets accepted.
MAX_NESTING = 200

# Whitespace runs, line comments and block comments, each matchable one way only
# (so a failing token after long trivia cannot make the regex backtrack exponentially).
TRIVIA_ITEM = r"[ \t\r\n\f\v]+(?![ \t\r\n\f\v])|//[^\n]*(?![^\n])|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
_TRIVIA_RX = "(?:" + TRIVIA_ITEM + ")*"
_TOKEN_RX = r"""(?P<name>%[\w.\-]+|[A-Za-z_](?:[\w.]|-(?!>))*)
      | (?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)
      | (?P<string>"(?:[^"\\\n]|\\.)*")
      | (?P<punct>->|<=|[{}()\[\],=:*?])
      | (?P<eof>\Z)"""
_TRIVIA = re.compile(_TRIVIA_RX)
_NEXT = re.compile(_TRIVIA_RX + "(?:" + _TOKEN_RX + ")", re.S | re.X | re.A)  # trivia, then one token
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# Inside a raw value: characters that need attention at depth 0 / inside brackets.
_RAW_TOP = re.compile(r'[{}()\[\]",\s]|/[*/]')
_RAW_INNER = re.compile(r'[{}()\[\]"]|/[*/]')
_CLOSER = {"{": "}", "(": ")", "[": "]"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


class Token(NamedTuple):
    kind: str  # "name" | "num" | "string" | "punct" | "eof"
    text: str
    pos: int  # offset of the first character
    end: int  # offset just past the last character


def describe(tok: Token) -> str:
    """How a token is named in an error message."""
    if tok.kind == "eof":
        return "end of input"
    text = tok.text if len(tok.text) <= 40 else tok.text[:37] + "..."
    return f"'{text}'"


def char_name(ch: str) -> str:
    return f"'{ch}'" if ch.isprintable() and ch != "'" else f"U+{ord(ch):04X}"


def unquote(literal: str) -> str:
    """The value of a double-quoted string token (C-style escapes)."""
    body = literal[1:-1]
    if "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


class Lexer:
    """A cursor over HLO text producing tokens on demand (nothing is pre-split,
    so decoders of big literals can take over at the current offset)."""

    def __init__(self, text: str, filename: str = "<string>"):
        self.text = text
        self.file = filename
        self.pos = 0
        self._peeked: Token | None = None
        self._peek_from = -1
        self._line_starts: list[int] | None = None

    # ------------------------------------------------------------ locations
    def loc(self, pos: int) -> Loc:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_right(self._line_starts, pos)
        return Loc(self.file, line, pos - self._line_starts[line - 1] + 1)

    def error(self, message: str, pos: int) -> AotcError:
        return located(message, self.loc(pos), self.text)

    # ------------------------------------------------------------ trivia & tokens
    def skip(self) -> int:
        """Skip whitespace and comments; return the new offset."""
        pos = _TRIVIA.match(self.text, self.pos).end()
        if self.text.startswith("/*", pos):
            raise self.error("unterminated comment", pos)
        self.pos = pos
        return pos

    def peek(self) -> Token:
        if self._peeked is not None and self._peek_from == self.pos:
            return self._peeked
        m = _NEXT.match(self.text, self.pos)
        if m is None:  # say what stopped the scan
            start = self.pos
            pos = self.skip()
            self.pos = start
            ch = self.text[pos]
            if ch == '"':
                raise self.error("unterminated string", pos)
            raise self.error(f"unexpected character {char_name(ch)}", pos)
        kind = m.lastgroup or "punct"
        tok = Token(kind, m.group(kind), m.start(kind), m.end())
        self._peeked, self._peek_from = tok, self.pos
        return tok

    def next(self) -> Token:
        tok = self.peek()
        self.pos = tok.end
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.text == text and tok.kind in ("punct", "name")

    def accept(self, text: str) -> Token | None:
        if self.at(text):
            return self.next()
        return None

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

    def expect_int(self, what: str = "an integer") -> tuple[int, int]:
        """An integer token: (value, offset)."""
        tok = self.peek()
        if tok.kind != "num" or not re.fullmatch(r"[-+]?\d+", tok.text):
            raise self.error(f"expected {what}, found {describe(tok)}", tok.pos)
        self.next()
        return self.to_int(tok.text, tok.pos), tok.pos

    def to_int(self, text: str, pos: int) -> int:
        """int(text), with absurdly long digit strings reported instead of converted."""
        if len(text.lstrip("+-").lstrip("0")) > 40:
            raise self.error(f"integer {text[:12]}... ({len(text)} characters) is too large", pos)
        return int(text)

    def take(self, rx: re.Pattern) -> re.Match | None:
        """Match `rx` exactly at the cursor (no trivia skipped); advance on success."""
        m = rx.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
        return m

    # ------------------------------------------------------------ raw values
    def raw_value(self) -> tuple[str, int]:
        """A verbatim attribute value: brackets balanced, strings and comments
        honoured, ending at a top-level `,`, whitespace or unmatched closer.
        Returns (text, start offset)."""
        text, start = self.text, self.skip()
        stack: list[tuple[str, int]] = []
        i = start
        while True:
            m = (_RAW_INNER if stack else _RAW_TOP).search(text, i)
            if m is None:
                if stack:
                    at = self.loc(stack[-1][1])
                    raise self.error(
                        f"unexpected end of input ('{stack[-1][0]}' at {at.line}:{at.col} is not closed)",
                        len(text),
                    )
                i = len(text)
                break
            i, ch = m.start(), m.group()
            if ch in "{([":
                if len(stack) >= MAX_NESTING:
                    raise self.error(f"nesting deeper than {MAX_NESTING}", i)
                stack.append((ch, i))
                i += 1
            elif ch in "})]":
                if not stack:
                    break
                opener, at = stack.pop()
                if _CLOSER[opener] != ch:
                    where = self.loc(at)
                    raise self.error(
                        f"unbalanced '{ch}': expected '{_CLOSER[opener]}' to close "
                        f"'{opener}' at {where.line}:{where.col}",
                        i,
                    )
                i += 1
            elif ch == '"':
                s = _STRING.match(text, i)
                if s is None:
                    raise self.error("unterminated string", i)
                i = s.end()
            elif ch == "/*":
                if not stack:
                    break
                close = text.find("*/", i + 2)
                if close < 0:
                    raise self.error("unterminated comment", i)
                i = close + 2
            elif ch == "//":
                if not stack:
                    break
                nl = text.find("\n", i)
                i = len(text) if nl < 0 else nl
            else:  # top-level ',' or whitespace
                break
        if i == start:
            tok = self.peek()
            raise self.error(f"expected attribute value, found {describe(tok)}", tok.pos)
        self.pos = i
        return text[start:i], start
