"""Mutations of model and config files for the fuzz tests: a token deleted or doubled, a
number, dtype or name changed (names into collisions such as `x.1` against `x_1`), the file
cut short, bytes flipped. One tokenizer and one set of kinds for HLO text, StableHLO text and
YAML configs; each format only brings its vocabulary of replacements."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

KINDS = ("delete", "duplicate", "number", "type", "name", "truncate", "flip")

_TOKEN = re.compile(r'%[\w#.:]+|@[\w.]+|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][\w.\-]*|\S')


@dataclass(frozen=True)
class Vocabulary:
    """What a format's tokens may be replaced with, and which tokens count as numbers,
    types and names."""
    numbers: tuple[str, ...]
    types: tuple[str, ...]
    names: tuple[str, ...]
    type_token: str  # a regex a dtype token matches
    name_token: str  # a regex a name token matches


_NUMBERS = ("0", "-1", "1", "2", "7", "2147483648", "-2147483649", "99999999999999999999", "1.5", "-0.0",
            "1e400", "nan", "inf", "0x7FC00000")

MLIR = Vocabulary(
    numbers=("[1]", '"s"', "true", *_NUMBERS),
    types=("f32", "i32", "i1", "f16", "bf16", "ui8", "i64", "f64", "complex<f32>", "tensor<f32>", "tuple<>", "?"),
    names=("%0", "%99", "%arg0", "%arg7", "@main", "@nope", "stablehlo.add", "stablehlo.frob", "func.func",
           "return", "tensor", "dense", "x", "loc", "#loc3"),
    type_token=r"[a-z]+\d+|\d+x\w+|x\w*",
    name_token=r"[%@].*|stablehlo\..*",
)

HLO = Vocabulary(
    numbers=("{}", "{0}", "{1,0}", *_NUMBERS),
    types=("f32", "s32", "pred", "f16", "bf16", "u8", "s64", "f64", "c64", "s4", "f8e4m3fn", "token", "(f32[])",
           "f32[0]", "f32[2,0]", "f32[]", "s32[1]", "f32[?]"),
    names=("x", "x.1", "x_1", "p0", "Arg_0.1", "ROOT", "ENTRY", "main", "add", "parameter", "constant", "tuple",
           "while", "fusion", "call", "to_apply", "int", "static", "aotc_pool", "pthread", "_start", "%x"),
    type_token=r"(?:f|s|u|bf|c)\d+|pred",
    name_token=r"[A-Za-z_][\w.\-]*",
)

YAML = Vocabulary(
    numbers=("-1", "0", "1", "2", "4294967296", "1.5", "null", "[]", "{}", "''", "~", "nan", "[1, 2]", "*a", "&a"),
    types=("f32", "s32", "pred", "bf16", "f64", "u8", "c64", "x32", "float", "int32", "[]"),
    names=("x", "x.1", "x_1", "sum", "int", "class", "aotc", "pthread", "feeds", "fetches", "id", "name", "shape",
           "type", "variable", "_", "9lives", "a b", "é"),
    type_token=r"(?:f|s|u|bf|c)\d+|pred",
    name_token=r"[A-Za-z_][\w.\-]*",
)


def mutate(data: bytes, rng: random.Random, kind: str, vocab: Vocabulary) -> bytes:
    """One mutant of `data` of the given kind (one of KINDS)."""
    if not data:
        return data
    if kind == "truncate":
        return data[:rng.randrange(len(data))]
    if kind == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    text = data.decode("utf-8")
    tokens = list(_TOKEN.finditer(text))
    if not tokens:
        return data
    wanted = {"number": r"-?\d.*", "type": vocab.type_token, "name": vocab.name_token}.get(kind)
    m = rng.choice([t for t in tokens if wanted and re.fullmatch(wanted, t.group())] or tokens)
    if kind == "name" and rng.random() < 0.5:
        # a collision: another name of the file, or one that maps to the same C name
        names = sorted({t.group() for t in tokens if re.fullmatch(vocab.name_token, t.group())})
        twin = m.group().replace(".", "_") if "." in m.group() else m.group().replace("_", ".", 1)
        replacement = rng.choice(names + [twin])
    else:
        replacement = {"delete": "", "duplicate": m.group() + " " + m.group(), "number": rng.choice(vocab.numbers),
                       "type": rng.choice(vocab.types), "name": rng.choice(vocab.names)}[kind]
    return (text[:m.start()] + replacement + text[m.end():]).encode()


def mutants(paths, per_file: int, vocab: Vocabulary, seed: int = 0):
    """(path, mutant bytes, kind, id) for `per_file` deterministic mutants of each path;
    a different `seed` gives a different set."""
    for i, path in enumerate(paths):
        data = path.read_bytes()
        for j in range(per_file):
            rng = random.Random(seed * 1_000_003 + i * 1000 + j)
            kind = KINDS[(i + j + seed) % len(KINDS)]
            yield path, mutate(data, rng, kind, vocab), kind, f"{path.parent.name}-{path.name}-{seed}-{j}-{kind}"
