"""Errors about a binary file never echo its bytes: random data, a binary file that starts with a
few lines of text, text whose tail is binary, and a line of text ending in binary junk give one
located or whole-file error whose every character is printable and holds no run of the file's
bytes."""
from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

from aotc.cli import main

HEAD = b"HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n"


def _junk(n: int, seed: int) -> bytes:
    r = random.Random(seed)
    return bytes(r.randrange(256) for _ in range(n))


LONG_TEXT = b"HloModule m\n" + b"".join(b"// line %d\n" % i for i in range(500)) + HEAD[13:] + b"  "
# (text, binary part): the file is text + binary
CASES = {
    "random": (b"", _junk(3000, 1)),
    "text_then_binary": (HEAD, _junk(3000, 2)),
    # more text than the 4 KiB the format check reads, then binary: a located error
    "long_text_then_binary": (LONG_TEXT, _junk(3000, 3)),
    "line_ending_in_junk": (HEAD + b"  ROOT y = f32[2] add(x, x)\n", b"\x00\x01\x02\xff\xfe\x80\x81junk\n}\n"),
}


def _runs(junk: bytes, n: int = 4) -> set[str]:
    """Every run of `n` printable ASCII bytes in `junk`."""
    text = "".join(chr(b) if 0x21 <= b < 0x7F else "\0" for b in junk)
    return {w[i:i + n] for w in text.split("\0") if len(w) >= n for i in range(len(w) - n + 1)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_binary_bytes_are_never_echoed(tmp_path, case):
    text, junk = CASES[case]
    path = tmp_path / "model.hlo"
    path.write_bytes(text + junk)
    r = CliRunner().invoke(main, ["compile", str(path), "-o", str(tmp_path / "libm")])
    assert r.exit_code == 1, r.output
    out = r.output
    assert "error:" in out and len(out.splitlines()) <= 2, out
    assert all(ch.isprintable() or ch == "\n" for ch in out), repr(out)
    shown = out.replace(str(path), "")
    leaked = [w for w in _runs(junk) if w in shown]
    assert not leaked, (leaked, out)


def test_a_few_stray_bytes_in_text_keep_their_line(tmp_path):
    """The other side of the rule: a line of text with one stray control byte is still shown,
    with the byte as '?', and a caret under it."""
    path = tmp_path / "model.hlo"
    path.write_bytes(HEAD + b"  ROOT y = f32[2] add(x,\x01 x)\n}\n")
    r = CliRunner().invoke(main, ["compile", str(path), "-o", str(tmp_path / "libm")])
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert lines[0].startswith(f"{path}:5:") and lines[1] == "  ROOT y = f32[2] add(x,? x)", r.output
    assert lines[2].endswith("^")
