"""Affine index simplification: index arithmetic as sums of scaled terms, with the
ranges of loop variables, so that a decomposed-and-recomposed index such as
`(l / 64) * 64 + ((l / 16) % 4) * 16 + l % 16` reads `l` again.

Only expressions of the index type are rewritten, and only by identities that
hold for the non-negative values indices take; other values pass through.
"""
from __future__ import annotations

import math

from . import ir as K

Range = tuple[int, int]  # inclusive bounds


def simplify_indices(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    """The kernel body with every index expression simplified, and whether any changed."""
    out, changed = _block(body, {})
    return out, changed


def _block(body, env: dict[str, Range]) -> tuple[tuple[K.Stmt, ...], bool]:
    out = []
    changed = False
    env = dict(env)
    for s in body:
        if isinstance(s, K.Loop):
            start, stop = simplify(s.start, env), simplify(s.stop, env)
            inner = dict(env)
            lo, hi = bounds(start, env), bounds(stop, env)
            if lo is not None and hi is not None:
                last = max(lo[0], hi[1] - 1)
                if lo[0] == lo[1] and s.step > 1:  # a strided loop's last value is on its grid
                    last = lo[0] + (last - lo[0]) // s.step * s.step
                inner[s.var.name] = (lo[0], last)
            b, c = _block(s.body, inner)
            new = K.Loop(s.var, start, stop, b, s.step, s.marks)
        elif isinstance(s, K.Let):
            v = simplify(s.value, env)
            new = K.Let(s.var, v)
            if s.var.ty == K.INDEX:
                r = bounds(v, env)
                if r is not None:
                    env[s.var.name] = r
            c = False
        else:
            new = K.map_exprs((s,), lambda e: simplify(e, env))[0]
            c = False
            if isinstance(s, (K.If, K.Repeat)):
                new = _nested(new, env)
        changed |= c or new != s
        out.append(new)
    return tuple(out), changed


def _nested(s, env):
    if isinstance(s, K.If):
        return K.If(s.cond, _block(s.then, env)[0], _block(s.orelse, env)[0])
    return K.Repeat(_block(s.body, env)[0])


# ------------------------------------------------------------------ expressions

def simplify(e: K.Expr, env: dict[str, Range]) -> K.Expr:
    """`e` with its index sub-expressions in simplest form."""
    if isinstance(e, K.Binary) and e.ty == K.INDEX and e.op in ("+", "-", "*", "/", "%"):
        return _rebuild(terms(e, env), env)
    kids = K.children(e)
    if not kids:
        return e
    new = tuple(simplify(k, env) for k in kids)
    return e if new == kids else K.rebuild(e, new)


def terms(e: K.Expr, env) -> dict[K.Expr, int]:
    """(Also the affine reading the vectorizer and the reuse pass use.) `e` as {atom: coefficient} (the constant under `Const(1)`)."""
    if isinstance(e, K.Const) and e.ty == K.INDEX:
        return {K.Const(1): e.value} if e.value else {}
    if isinstance(e, K.Binary) and e.ty == K.INDEX:
        if e.op in ("+", "-"):
            a, b = terms(e.a, env), terms(e.b, env)
            sign = 1 if e.op == "+" else -1
            for k, v in b.items():
                a[k] = a.get(k, 0) + sign * v
            return {k: v for k, v in a.items() if v}
        if e.op == "*":
            a, b = terms(e.a, env), terms(e.b, env)
            for x, y in ((a, b), (b, a)):
                if set(y) <= {K.Const(1)}:
                    c = y.get(K.Const(1), 0)
                    return {k: v * c for k, v in x.items() if v * c}
        if e.op in ("/", "%") and isinstance(e.b, K.Const) and e.b.value > 0:
            return _divmod(e.op, terms(e.a, env), e.b.value, env)
        if e.op in ("+", "-", "*", "/", "%"):  # no affine reading (a product of two variables,
            # a division by a variable): an atom of its simplified operands, not simplified again
            kids = (simplify(e.a, env), simplify(e.b, env))
            return {e if kids == (e.a, e.b) else K.rebuild(e, kids): 1}
    return {simplify(e, env): 1}


def _divmod(op: str, t: dict[K.Expr, int], d: int, env) -> dict[K.Expr, int]:
    x = _rebuild(t, env)
    r = bounds(x, env)
    if d == 1:
        return t if op == "/" else {}
    if r is not None and r[0] >= 0:
        if r[1] < d:  # x / d == 0, x % d == x
            return {} if op == "/" else t
        # split off the terms that are multiples of d: (q*d + r) / d == q + r / d when 0 <= r
        mult = {k: v for k, v in t.items() if v % d == 0}
        rest = {k: v for k, v in t.items() if v % d != 0}
        rr = bounds(_rebuild(rest, env), env) if rest else (0, 0)
        if mult and rr is not None and rr[0] >= 0 and all(_nonneg(k, env) for k in mult):
            if op == "/":
                out = {k: v // d for k, v in mult.items()}
                if rest:
                    for k, v in _divmod("/", rest, d, env).items():
                        out[k] = out.get(k, 0) + v
                return {k: v for k, v in out.items() if v}
            return _divmod("%", rest, d, env) if rest else {}
        split = _common_factor(t, d, env)
        if split is not None:
            return split(op)
        # (x / a) / b == x / (a*b)
        if op == "/" and isinstance(x, K.Binary) and x.op == "/" and isinstance(x.b, K.Const) and x.b.value > 0:
            return {simplify(x.a // (x.b.value * d), env): 1}
        # (x / a) % b == x / a when x < a*b
        if op == "%" and isinstance(x, K.Binary) and x.op == "/" and isinstance(x.b, K.Const):
            inner = bounds(x.a, env)
            if inner is not None and inner[0] >= 0 and inner[1] < x.b.value * d:
                return {x: 1}
    return {K.Binary(op, x, K.Const(d), K.INDEX): 1}


def _common_factor(t: dict[K.Expr, int], d: int, env):
    """For x = c*q + r with c a proper divisor of d that divides every coefficient of q, q >= 0
    and 0 <= r < c: x / d == q / (d/c) and x % d == c * (q % (d/c)) + r (a reshape's split
    of a merged index: (f*64 + i) / 256 == f / 4 for 0 <= i < 64). The factors tried are d's
    common divisors with each coefficient and with all of them (a few, whatever d's size).
    A function of the operator, or None."""
    coeffs = [v for k, v in t.items() if k != K.Const(1)]
    tried = {math.gcd(d, v) for v in coeffs} | {math.gcd(d, *coeffs)} if coeffs else set()
    for c in sorted((c for c in tried if 1 < c < d), reverse=True):
        q = {k: v // c for k, v in t.items() if v % c == 0 and k != K.Const(1)}
        r = {k: v for k, v in t.items() if v % c != 0 or k == K.Const(1)}
        rr = bounds(_rebuild(r, env), env) if r else (0, 0)
        if (not q or rr is None or rr[0] < 0 or rr[1] >= c or any(v < 0 for v in q.values())
                or not all(_nonneg(k, env) for k in q)):
            continue

        def split(op: str, q=q, r=r, c=c) -> dict[K.Expr, int]:
            if op == "/":
                return _divmod("/", q, d // c, env)
            out = {k: v * c for k, v in _divmod("%", q, d // c, env).items()}
            for k, v in r.items():
                out[k] = out.get(k, 0) + v
            return {k: v for k, v in out.items() if v}
        return split
    return None


def _nonneg(e: K.Expr, env) -> bool:
    r = bounds(e, env)
    return r is not None and r[0] >= 0


def _rebuild(t: dict[K.Expr, int], env) -> K.Expr:
    t = _merge_divmod(dict(t), env)
    const = t.pop(K.Const(1), 0)
    out: K.Expr | None = None
    items = sorted(t.items(), key=lambda kv: -abs(kv[1]))  # largest stride first (stable)
    if const > 0 and items and items[0][1] < 0:  # `49 - i0 * 15 + ...` rather than a leading minus
        out, const = K.Const(const), 0
    for atom, c in items:
        if out is None:
            out = atom if c == 1 else K.Binary("*", atom, K.Const(c), K.INDEX)
            continue
        term = atom if abs(c) == 1 else K.Binary("*", atom, K.Const(abs(c)), K.INDEX)
        out = K.Binary("+" if c > 0 else "-", out, term, K.INDEX)
    if out is None:
        return K.Const(const)
    if const:
        out = K.Binary("+" if const > 0 else "-", out, K.Const(abs(const)), K.INDEX)
    return out


def _merge_divmod(t: dict[K.Expr, int], env) -> dict[K.Expr, int]:
    """c*(x % m) + c*m*(x / m) -> c*x, and c*(x % m) + c*m*((x / m) % n) -> c*(x % (m*n))."""
    changed = True
    while changed:
        changed = False
        for atom, c in list(t.items()):
            if not (isinstance(atom, K.Binary) and atom.op == "%" and isinstance(atom.b, K.Const)):
                continue
            x, m = atom.a, atom.b.value
            div = K.Binary("/", x, K.Const(m), K.INDEX)
            if t.get(div) == c * m:
                del t[atom], t[div]
                for k, v in terms(x, env).items():
                    t[k] = t.get(k, 0) + c * v
                t = {k: v for k, v in t.items() if v}
                changed = True
                break
            for other, c2 in list(t.items()):
                if (c2 == c * m and isinstance(other, K.Binary) and other.op == "%" and other.a == div
                        and isinstance(other.b, K.Const)):
                    del t[atom], t[other]
                    merged = _divmod("%", terms(x, env), m * other.b.value, env)
                    for k, v in merged.items():
                        t[k] = t.get(k, 0) + c * v
                    t = {k: v for k, v in t.items() if v}
                    changed = True
                    break
            if changed:
                break
    return t


def bounds(e: K.Expr, env: dict[str, Range]) -> Range | None:
    """Inclusive bounds of an index expression, when known."""
    if isinstance(e, K.Const):
        return (e.value, e.value) if isinstance(e.value, int) else None
    if isinstance(e, K.Var):
        return env.get(e.name)
    if not isinstance(e, K.Binary) or e.ty != K.INDEX:
        return None
    a, b = bounds(e.a, env), bounds(e.b, env)
    if a is None or b is None:
        return None
    if e.op == "+":
        return (a[0] + b[0], a[1] + b[1])
    if e.op == "-":
        return (a[0] - b[1], a[1] - b[0])
    if e.op == "*":
        p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        return (min(p), max(p))
    if e.op == "/" and b[0] == b[1] and b[0] > 0 and a[0] >= 0:
        return (a[0] // b[0], a[1] // b[0])
    if e.op == "%" and b[0] == b[1] and b[0] > 0 and a[0] >= 0:
        return (0, min(a[1], b[0] - 1))
    return None
