"""C identifiers from pytree paths: `params['dense']['kernel']` becomes `dense_kernel`,
`(x, y)[1]` becomes `y_1`-style names, and two paths that give one name are an error naming
both. Plain Python: a path is a sequence of jax key entries (`DictKey`, `SequenceKey`,
`GetAttrKey`, ...) or of plain strings and ints; nothing here imports jax.
"""
from __future__ import annotations

import re

from ..errors import AotcError
from ..frontend.c_names import C_KEYWORDS


def path_parts(path) -> list[str]:
    """The parts of one pytree path as strings (dict keys, indices, attribute names)."""
    parts = []
    for entry in path:
        for attr in ("key", "name", "idx"):
            if hasattr(entry, attr):
                parts.append(str(getattr(entry, attr)))
                break
        else:
            parts.append(str(entry))
    return parts


def path_text(root: str, path) -> str:
    """How a path reads in Python: `params['dense']['kernel']`."""
    out = root
    for entry in path:
        if hasattr(entry, "key"):
            out += f"[{entry.key!r}]"
        elif hasattr(entry, "idx"):
            out += f"[{entry.idx}]"
        elif hasattr(entry, "name"):
            out += f".{entry.name}"
        else:
            out += f"[{entry!r}]"
    return out


def c_identifier(parts: list[str], default: str) -> str:
    """`parts` joined by '_' with every other character as '_'; `default` when empty, a
    leading digit or a keyword gets `default_` in front."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", "_".join(p for p in parts if p != "")).strip("_")
    name = re.sub(r"_+", "_", name)
    if not name:
        return default
    if name[0].isdigit() or name in C_KEYWORDS:
        return f"{default}_{name}"
    return name


def unique_names(entries: list[tuple[str, str]]) -> list[str]:
    """Check (C name, Python path) pairs: each C name once, case-sensitively; an AotcError
    naming both paths otherwise."""
    seen: dict[str, str] = {}
    for name, where in entries:
        if name in seen:
            raise AotcError(f"{seen[name]} and {where} both give the C name '{name}'; rename one "
                            "(pytree keys become C identifiers)")
        seen[name] = where
    return [n for n, _ in entries]
