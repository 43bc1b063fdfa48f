"""What `aotc export` names on its command line: a Python callable as `module:function`
(and a weights pytree as `module:attribute`), and input shapes as `x=f32[8,64], s32[8]`.
Errors are `AotcError`s naming the text at fault; importing the user's module runs it.
"""
from __future__ import annotations

import importlib
import os
import re
import sys

import numpy as np

from ..errors import AotcError
from ..hlo.dtypes import DTYPES

_SEPARATORS = frozenset(";,")  # between inputs
_SPEC = re.compile(r"\s*(?:([A-Za-z_]\w*)\s*=\s*)?([a-z]+\d*(?:e\d+m\d+\w*)?)\s*\[\s*([\d\s,]*)\]\s*")


def load_object(ref: str, what: str):
    """The object `module:attr.attr` names; the current directory is searched first."""
    module_name, colon, attr = ref.partition(":")
    if not colon or not module_name or not attr:
        raise AotcError(f"{what}: expected MODULE:NAME such as model:predict, not {ref!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module_name)
    except ImportError as e:
        raise AotcError(f"{what}: cannot import module '{module_name}': {e}") from None
    except Exception as e:  # the user's module failed while it ran
        raise AotcError(f"{what}: importing '{module_name}' raised {type(e).__name__}: {e}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AotcError(f"{what}: module '{module_name}' has no attribute '{attr}'")
        obj = getattr(obj, part)
    return obj


def parse_shapes(text: str) -> list[tuple[str | None, tuple[int, ...], np.dtype]]:
    """`x=f32[8,64], s32[8]` as (name or None, dims, numpy dtype) per positional input."""
    out, pos = [], 0
    while pos < len(text):
        m = _SPEC.match(text, pos)
        if m is None:
            raise AotcError(f"--shapes: expected [NAME=]TYPE[DIMS] such as x=f32[8,64] at {text[pos:]!r}")
        name, type_name, dims = m.groups()
        if type_name not in DTYPES or type_name == "token":
            raise AotcError(f"--shapes: unknown element type '{type_name}' (f32, bf16, s32, pred, ...)")
        out.append((name, tuple(int(d) for d in dims.replace(" ", "").split(",") if d), DTYPES[type_name].numpy))
        pos = m.end()
        if pos < len(text):
            if text[pos] not in _SEPARATORS:
                raise AotcError(f"--shapes: expected ',' between inputs at {text[pos:]!r}")
            pos += 1
    if not out:
        raise AotcError("--shapes: no input shapes (e.g. --shapes 'x=f32[8,64]')")
    return out
