"""How constant arrays are spelled in the generated .c, and the bytes written for them.

Three encodings: `array` (hex bit patterns in a C initializer: portable, about 3.4 times
the data), `string` (one string literal per constant, octal escapes only where needed),
and `incbin` (the bytes in a blob file `PREFIX.c.bin` beside the .c, which the assembler
includes: the C compiler never parses them). Big arrays are never built as one Python
string: text and blob bytes are streamed to the file in chunks.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import IO, Iterable, Iterator

import numpy as np

from ..lower.program import ConstArray

ENCODINGS = ("auto", "incbin", "string", "array")
AUTO_ARRAY_BYTES = 64 * 1024  # auto: constants below this many bytes in all stay C arrays
BLOB_SUFFIX = ".bin"  # the blob of `PREFIX.c` is `PREFIX.c.bin` (the .c names it through __FILE__)
BLOB_ALIGN = 64
_CHUNK = 1 << 20  # bytes of constant data encoded at a time

_BITS = {1: ("uint8_t", "0x{:02x}u"), 2: ("uint16_t", "0x{:04x}u"), 4: ("uint32_t", "0x{:08x}u"),
         8: ("uint64_t", "UINT64_C(0x{:016x})")}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def resolve_encoding(requested: str, generic_target: bool, total_bytes: int) -> str:
    """The encoding `auto` stands for: C arrays for small constants (the .c stays
    self-contained), a string literal for the `generic` target (any C compiler), else
    `incbin` (gcc and clang, ELF and Mach-O: every other target). Windows targets are
    given C arrays before this is asked (driver.const_encoding)."""
    if requested not in ENCODINGS:
        raise ValueError(requested)
    if requested != "auto":
        return requested
    if total_bytes < AUTO_ARRAY_BYTES:
        return "array"
    return "string" if generic_target else "incbin"


def raw_bytes(c: ConstArray) -> np.ndarray:
    """The constant's storage bytes (little-endian, row-major) as a flat uint8 view, no copy
    when the array is already contiguous."""
    return np.ascontiguousarray(c.data).reshape(-1).view(np.uint8)


# ---------------------------------------------------------------- array


def array_chunks(c: ConstArray) -> Iterator[str]:
    """A constant as exact bit patterns in a union with its element type (C11 allows the
    pun), in pieces of about a megabyte of data each."""
    data = np.ascontiguousarray(c.data).reshape(-1)
    if c.dtype.kind == "complex":
        data = data.view(np.float32 if c.dtype.name == "c64" else np.float64)
    width = data.dtype.itemsize
    utype, fmt = _BITS[width]
    words = data.view(_UINT[width])
    n = max(len(words), 1)
    per = {1: 16, 2: 12, 4: 8, 8: 4}[width]
    count = max(c.data.size, 1)
    dims = ",".join(map(str, c.dims))
    yield (f"/* {c.dtype.name}[{dims}] */\nstatic const union {{ {utype} bits[{n}]; {c.dtype.c_type} v[{count}]; }} "
           f"{c.cname} = {{{{\n")
    if not len(words):
        yield "    0"
    step = max(per, _CHUNK // width // per * per)
    for start in range(0, len(words), step):
        part = words[start:start + step].tolist()
        rows = ["    " + ", ".join(fmt.format(w) for w in part[k:k + per]) + "," for k in range(0, len(part), per)]
        yield ("\n" if start else "") + "\n".join(rows)
    yield "\n}};\n"


# ---------------------------------------------------------------- string

_PRINTABLE = [b for b in range(0x20, 0x7f) if chr(b) not in '"\\?']  # `?`: no trigraphs
_ESCAPES = np.zeros((256, 4), np.uint8)  # each byte as up to 4 characters, 0 = none
for _b in range(256):
    _ESCAPES[_b] = [_b, 0, 0, 0] if _b in _PRINTABLE else list(b"\\%03o" % _b)
_LINE = 96  # input bytes per line of the literal


def string_chunks(c: ConstArray) -> Iterator[str]:
    """A constant as one string literal (printable bytes as themselves, the rest as
    three-digit octal escapes, so no escape runs into the next character) initializing
    the bytes of a union with its element type. The literal has no room for a
    terminating NUL, which C allows for a char array of exactly its length."""
    data = raw_bytes(c)
    n = max(len(data), 1)
    count = max(c.data.size, 1)
    dims = ",".join(map(str, c.dims))
    yield (f"/* {c.dtype.name}[{dims}] */\nstatic const union {{ unsigned char bytes[{n}]; {c.dtype.c_type} "
           f"v[{count}]; }} {c.cname} = {{\n")
    if not len(data):
        yield "    {0}\n};\n"
        return
    step = _CHUNK // _LINE * _LINE
    for start in range(0, len(data), step):
        yield _string_lines(data[start:start + step])
    yield "};\n"


def _string_lines(data: np.ndarray) -> str:
    """Lines `    "..."` of at most _LINE input bytes each, built without a Python loop
    over bytes: every byte becomes 4 characters, the unused ones (0) are dropped."""
    rows = -(-len(data) // _LINE)
    body = np.zeros((rows * _LINE, 4), np.uint8)
    body[:len(data)] = _ESCAPES[data]
    body = body.reshape(rows, _LINE * 4)
    head = np.frombuffer(b'    "', np.uint8)
    tail = np.frombuffer(b'"\n', np.uint8)
    lines = np.concatenate([np.broadcast_to(head, (rows, len(head))), body,
                            np.broadcast_to(tail, (rows, len(tail)))], axis=1).reshape(-1)
    return lines[lines != 0].tobytes().decode("ascii")


# ---------------------------------------------------------------- incbin


@dataclass(frozen=True, slots=True)
class BlobEntry:
    const: ConstArray
    offset: int  # byte offset in the blob, a multiple of BLOB_ALIGN
    nbytes: int


@dataclass(frozen=True, slots=True)
class Blob:
    """The constants stored in `PREFIX.c.bin`, each at a 64-byte aligned offset."""

    entries: tuple[BlobEntry, ...]
    nbytes: int
    sha256: str

    @staticmethod
    def of(consts: Iterable[ConstArray]) -> "Blob":
        entries, off = [], 0
        digest = hashlib.sha256()
        for c in consts:
            data = raw_bytes(c)
            entries.append(BlobEntry(c, off, len(data)))
            digest.update(data)
            digest.update(b"\0" * _pad(len(data)))
            off += len(data) + _pad(len(data))
        return Blob(tuple(entries), off, digest.hexdigest())

    def write(self, f: IO[bytes]) -> None:
        """Stream every constant's bytes and the padding between them."""
        for e in self.entries:
            data = raw_bytes(e.const)
            for k in range(0, len(data), _CHUNK):
                f.write(memoryview(data[k:k + _CHUNK]))
            f.write(b"\0" * _pad(len(data)))


def _pad(n: int) -> int:
    return -n % BLOB_ALIGN


def incbin_text(blob: Blob, prefix: str) -> str:
    """The assembler block that includes the blob into a read-only section, one local
    64-byte aligned symbol per constant, and the C declarations of those symbols (hidden:
    nothing leaves the object file). The blob's name comes from __FILE__, so it is found
    beside the .c from any directory the compiler runs in."""
    out = [f"/* {blob.nbytes} bytes of constants in the file beside this one named like it plus "
           f"\"{BLOB_SUFFIX}\" (sha256 {blob.sha256}),",
           "   included by the assembler (gcc or clang; ELF or Mach-O). */",
           "#if defined(__APPLE__)",
           '#define AOTC_CONST_SECTION ".section __TEXT,__const\\n"',
           '#define AOTC_CONST_END ".text\\n"',
           "#else",
           '#define AOTC_CONST_SECTION ".pushsection .rodata\\n"',
           '#define AOTC_CONST_END ".popsection\\n"',
           "#endif",
           "__asm__(AOTC_CONST_SECTION",
           f'        "/* sha256 {blob.sha256} */\\n"']
    for e in blob.entries:
        sym = _symbol(prefix, e.const)
        out += [f'        ".balign {BLOB_ALIGN}\\n"',
                f'        "{sym}:\\n"',
                f'        ".incbin \\"" __FILE__ "{BLOB_SUFFIX}\\", {e.offset}, {e.nbytes}\\n"']
    out += ["        AOTC_CONST_END);"]
    for e in blob.entries:
        c = e.const
        dims = ",".join(map(str, c.dims))
        out.append(f'/* {c.dtype.name}[{dims}] */ extern const {c.dtype.c_type} {c.cname}[{c.data.size}] '
                   f'__asm__("{_symbol(prefix, c)}") __attribute__((visibility("hidden")));')
    return "\n".join(out) + "\n"


def _symbol(prefix: str, c: ConstArray) -> str:
    return f"{prefix}_const_{c.cname}"


def incbin_ok(c: ConstArray) -> bool:
    """A constant the blob can hold (a zero-sized one stays a C array)."""
    return c.data.size > 0


# ---------------------------------------------------------------- the .c as parts


@dataclass(frozen=True, slots=True)
class ConstText:
    """A constant whose C text is produced while the .c is written."""

    const: ConstArray
    encoding: str  # "array" | "string"

    def chunks(self) -> Iterator[str]:
        return array_chunks(self.const) if self.encoding == "array" else string_chunks(self.const)


def write_parts(f: IO[str], parts: Iterable[str | ConstText]) -> None:
    for part in parts:
        if isinstance(part, str):
            f.write(part)
        else:
            for chunk in part.chunks():
                f.write(chunk)


def join_parts(parts: Iterable[str | ConstText]) -> str:
    return "".join(p if isinstance(p, str) else "".join(p.chunks()) for p in parts)
