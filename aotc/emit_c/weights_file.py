"""The weights file of `--weights file` (`PREFIX.weights`): its binary format, the writer,
a reader for tools and tests, and the C functions that check and use it
(`P_load_weights`, `P_set_weights`) with their declarations.

Format, every integer little-endian, version 1:

    offset  size
    0       8    magic "AOTCWGT\\0"
    8       4    format version (1)
    12      4    tensor count N
    16      32   sha256 of the model's expectations: each tensor's name, type and shape, in order
    48      8    file size in bytes
    56      8    size of the description text
    64      16N  per tensor: data offset (a multiple of 64), data size in bytes
    64+16N       description: one line per tensor, "name type[d0,d1,...]\\n"
    ...          each tensor's data (storage form: bf16 as its bits, pred as bytes), 64-byte aligned

A library checks magic, version, hash, sizes and alignment before it uses anything, so a
wrong, truncated or misaligned file is an error code with a message, never a crash.
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import IO

import numpy as np

from ..lower.program import Program, Weight

MAGIC = b"AOTCWGT\0"
VERSION = 1
HEADER_BYTES = 64
ALIGN = 64
ERR_WEIGHTS = 16  # P_ERR_WEIGHTS: apart from the codes every model has
_CHUNK = 1 << 20


def _describe(w: Weight) -> str:
    return f"{w.name} {w.dtype.name}[{','.join(map(str, w.dims))}]\n"


def expectations_hash(weights: tuple[Weight, ...]) -> bytes:
    """What a model expects of its weights file: names, types and shapes, in order."""
    h = hashlib.sha256(b"aotc weights v1\0")
    for w in weights:
        h.update(_describe(w).encode())
    return h.digest()


@dataclass(frozen=True, slots=True)
class Layout:
    offsets: tuple[int, ...]
    size: int  # of the whole file
    description: bytes


def layout(weights: tuple[Weight, ...]) -> Layout:
    desc = "".join(_describe(w) for w in weights).encode()
    off = _up(HEADER_BYTES + 16 * len(weights) + len(desc))
    offsets = []
    for w in weights:
        offsets.append(off)
        off = _up(off + w.nbytes)
    return Layout(tuple(offsets), off, desc)


def _up(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def write_weights(f: IO[bytes], weights: tuple[Weight, ...]) -> None:
    """Stream the file: header, table, description, then each tensor's bytes."""
    lay = layout(weights)
    head = MAGIC + struct.pack("<II", VERSION, len(weights)) + expectations_hash(weights) \
        + struct.pack("<QQ", lay.size, len(lay.description))
    head += b"".join(struct.pack("<QQ", o, w.nbytes) for o, w in zip(lay.offsets, weights)) + lay.description
    pos = len(head)
    f.write(head)
    for o, w in zip(lay.offsets, weights):
        f.write(b"\0" * (o - pos))
        data = np.ascontiguousarray(w.data).reshape(-1).view(np.uint8)
        for k in range(0, len(data), _CHUNK):
            f.write(memoryview(data[k:k + _CHUNK]))
        pos = o + len(data)
    f.write(b"\0" * (lay.size - pos))


@dataclass(frozen=True)
class WeightsFile:
    """A weights file as read back: version, hash, and each tensor's description and bytes."""

    version: int
    hash: bytes
    tensors: tuple[tuple[str, int, int], ...]  # (description line, offset, size)


def read_weights_header(data: bytes) -> WeightsFile:
    """The header, table and description of a weights file (ValueError if malformed)."""
    if len(data) < HEADER_BYTES or data[:8] != MAGIC:
        raise ValueError("not an aotc weights file")
    version, count = struct.unpack_from("<II", data, 8)
    digest = data[16:48]
    _, desc_len = struct.unpack_from("<QQ", data, 48)
    table = [struct.unpack_from("<QQ", data, HEADER_BYTES + 16 * k) for k in range(count)]
    start = HEADER_BYTES + 16 * count
    lines = data[start:start + desc_len].decode().splitlines()
    return WeightsFile(version, digest, tuple((ln, o, n) for ln, (o, n) in zip(lines, table)))


# ---------------------------------------------------------------- the C side


def weights_c(p: Program) -> list[str]:
    """`P_set_weights` and `P_load_weights`: every check first, then the instance's weight
    pointers point into the data (set) or into a buffer the instance owns (load)."""
    P, na, nw = p.name, len(p.args), len(p.weights)
    digest = expectations_hash(p.weights)
    sizes = ", ".join(f"UINT64_C({w.nbytes})" for w in p.weights)
    return [
        "/* ---------------------------------------------------------------- weights file */",
        f"static const unsigned char {P}_weights_hash_[32] = {{{', '.join(f'0x{b:02x}' for b in digest)}}};",
        f"static const uint64_t {P}_weights_bytes_[{nw}] = {{{sizes}}};",
        f"static uint64_t {P}_u64_(const unsigned char* p) {{",
        "    uint64_t v = 0;",
        "    for (int k = 7; k >= 0; --k) v = v << 8 | p[k];",
        "    return v;",
        "}",
        f"int {P}_set_weights({P}_instance* m, const void* data, size_t size) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        "    const unsigned char* d = (const unsigned char*)data;",
        f"    if (!d) return {P}_fail_msg(m, {P}_ERR_WEIGHTS, \"no weights data\");",
        f"    if ((uintptr_t)d % 64u) return {P}_fail_msg(m, {P}_ERR_MISALIGNED, \"the weights data is not 64-byte aligned\");",
        f"    if (size < {HEADER_BYTES}u || memcmp(d, \"AOTCWGT\", 8) != 0)",
        f"        return {P}_fail_msg(m, {P}_ERR_WEIGHTS, size < {HEADER_BYTES}u ? \"the weights data is truncated "
        "(no header)\" : \"not an aotc weights file (bad magic)\");",
        f"    if ({P}_u64_(d + 8) % 4294967296u != {VERSION}u)",
        f"        return {P}_fail_msg(m, {P}_ERR_WEIGHTS, \"weights file format version is not {VERSION}\");",
        f"    if ({P}_u64_(d + 8) / 4294967296u != {nw}u || memcmp(d + 16, {P}_weights_hash_, 32) != 0)",
        f"        return {P}_fail_msg(m, {P}_ERR_WEIGHTS, \"the weights file is for another model (its names, "
        "types or shapes differ)\");",
        f"    uint64_t total = {P}_u64_(d + 48);",
        f"    if (total > size || total < {HEADER_BYTES + 16 * nw}u)",
        f"        return {P}_fail_msg(m, {P}_ERR_WEIGHTS, \"the weights file is truncated\");",
        f"    for (int k = 0; k < {nw}; ++k) {{",
        f"        uint64_t off = {P}_u64_(d + {HEADER_BYTES} + 16 * k), n = {P}_u64_(d + {HEADER_BYTES + 8} + 16 * k);",
        f"        if (n != {P}_weights_bytes_[k] || off % 64u || off > total || n > total - off)",
        f"            return {P}_fail_msg(m, {P}_ERR_WEIGHTS, \"the weights file's table is corrupt\");",
        "    }",
        f"    for (int k = 0; k < {nw}; ++k)",
        f"        m->args[{na} + k] = (void*)(d + {P}_u64_(d + {HEADER_BYTES} + 16 * k));",
        "    if (m->owned_weights != data) { AOTC_ALIGNED_FREE(m->owned_weights); m->owned_weights = 0; }",
        "    m->error[0] = 0;",
        f"    return {P}_OK;",
        "}",
        f"int {P}_load_weights({P}_instance* m, const char* path) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        f"    if (!path) return {P}_fail_msg(m, {P}_ERR_WEIGHTS, \"no weights file name\");",
        "    FILE* f = fopen(path, \"rb\");",
        "    if (!f) {",
        "        snprintf(m->error, sizeof m->error, \"cannot open the weights file %s\", path);",
        f"        return {P}_ERR_WEIGHTS;",
        "    }",
        "    unsigned char head[64];",
        "    size_t got = fread(head, 1, sizeof head, f);",
        "    off_t end = fseeko(f, 0, SEEK_END) == 0 ? ftello(f) : -1;",
        "    const char* bad = got != sizeof head ? \"the weights file is truncated (no header)\"",
        "                    : memcmp(head, \"AOTCWGT\", 8) != 0 ? \"not an aotc weights file (bad magic)\" : 0;",
        f"    uint64_t total = bad ? 0 : {P}_u64_(head + 48);",
        "    if (!bad && (end < 0 || total < sizeof head || total > (uint64_t)end || total > (uint64_t)(size_t)-1 - 64u))",
        "        bad = \"the weights file is truncated\";  /* claims more than the file holds: nothing is allocated */",
        "    if (bad || fseeko(f, (off_t)sizeof head, SEEK_SET) != 0) {",
        "        fclose(f);",
        f"        return {P}_fail_msg(m, {P}_ERR_WEIGHTS, bad ? bad : \"cannot read the weights file\");",
        "    }",
        "    unsigned char* buf = (unsigned char*)aotc__alloc_zeroed((size_t)total);",
        f"    if (!buf) {{ fclose(f); return {P}_fail_msg(m, {P}_ERR_ALLOC, \"cannot allocate the weights\"); }}",
        "    memcpy(buf, head, sizeof head);",
        "    got = sizeof head + fread(buf + sizeof head, 1, (size_t)total - sizeof head, f);",
        "    fclose(f);",
        f"    int rc = {P}_set_weights(m, buf, got);",
        "    if (rc) { AOTC_ALIGNED_FREE(buf); return rc; }",
        "    m->owned_weights = buf;",
        f"    return {P}_OK;",
        "}",
    ] if nw else []


def weights_header(p: Program, M: str) -> list[str]:
    """The header's declarations of the weights functions (only with `--weights file`)."""
    if not p.weights:
        return []
    P = p.name
    names = ", ".join(w.name for w in p.weights).replace("*/", "* /")  # .npz keys: any text
    return [
        f"/* Weights from a file (--weights file): {len(p.weights)} tensors ({names}), read from PREFIX.weights",
        f"   (format version {VERSION}, docs/weights.md). Runs fail with {P}_ERR_WEIGHTS until weights are set;",
        "   a file for another model (names, types or shapes differ), of another format version, truncated",
        f"   or corrupt is {P}_ERR_WEIGHTS with a message, misaligned data {P}_ERR_MISALIGNED. One library",
        "   serves any number of weight sets: each instance has its own. */",
        f"#define {M}_NUM_WEIGHTS {len(p.weights)}",
        f"#define {M}_WEIGHTS_VERSION {VERSION}",
        f"enum {{ {P}_ERR_WEIGHTS = {ERR_WEIGHTS} }};",
        f"/* Reads the file into memory the instance owns (freed by destroy or the next load). */",
        f"int {P}_load_weights({P}_instance* m, const char* path);",
        "/* Zero-copy: the instance points into `data` (the file's bytes, 64-byte aligned, e.g. mmap'ed),",
        "   which must stay alive and unchanged while the instance runs with it. */",
        f"int {P}_set_weights({P}_instance* m, const void* data, size_t size);",
        "",
    ]
