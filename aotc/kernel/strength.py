"""Cheaper helpers where an operand is a known constant: XLA's `max(x, c)` with c a positive
normal number (or +inf) is `c > x ? c : x`, and `min(x, c)` with c a negative normal number
(or -inf) is `c < x ? c : x`, with the same bits for every x: a NaN x comes back as it is,
an x equal to c has c's bits, and a subnormal or zero x (which max and min flush) loses to
c either way. The general helpers (`aotc_max_f32`) spend several selects on NaN, signed
zeros and the flush; the picks (`aotc_pick_gt_f32`) are one instruction in a vector loop.
This pass only rewrites calls; it knows no HLO op.
"""
from __future__ import annotations

import numpy as np

from . import ir as K

# helper -> (its pick, the sign the constant needs)
_PICKS = {f"aotc_{op}_{t}": (f"aotc_pick_{cmp}_{t}", sign)
          for t in ("f32", "f64") for op, cmp, sign in (("max", "gt", 1), ("min", "lt", -1))}
_MIN_NORMAL = {"f32": float(np.finfo(np.float32).tiny), "f64": float(np.finfo(np.float64).tiny)}


def pick_constant_bounds(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    changed = False

    def rewrite(e: K.Expr) -> K.Expr:
        nonlocal changed
        kids = K.children(e)
        if kids:
            new = tuple(rewrite(k) for k in kids)
            e = K.rebuild(e, new) if new != kids else e
        if isinstance(e, K.Call) and e.fn in _PICKS and len(e.args) == 2:
            pick, sign = _PICKS[e.fn]
            t = e.fn[-3:]
            a, b = e.args
            for c, x in ((b, a), (a, b)):
                if _bound(c, t, sign):
                    changed = True
                    return K.Call(pick, (c, x), e.ty)
        return e

    out = K.map_exprs(body, rewrite)
    return (out, True) if changed else (body, False)


def _bound(c: K.Expr, t: str, sign: int) -> bool:
    """Whether `c` is a constant of type `t` that every flushed x loses to: a normal number
    (or infinity) of sign `sign`."""
    if not (isinstance(c, K.Const) and c.ty is not None and c.ty.name == t):
        return False
    v = float(np.float32(c.value)) if t == "f32" else float(c.value)
    return not np.isnan(v) and v * sign >= _MIN_NORMAL[t]
