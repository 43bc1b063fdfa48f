"""The C printer of vector loops (kernel/vectorize.py's `simd`, `wide` and `interleave`
marks): a vector body of the SIMD vocabulary (runtime_c/aotc_simd.h), interleaved copies of
it, the one-vector loop and the scalar tail. `stmt` is kernel_c.py's statement printer, for
what a vector body holds besides vector values."""
from __future__ import annotations

from ..kernel import ir as K
from ..kernel.vectorize import (INTERLEAVE, INTERLEAVE_COPIES, LANES, MASK_COMPARE, MASK_LOGIC, MASK_TYPES, SIMD,
                                VECTOR_BINARY, VECTOR_CALLS, WIDE, WIDE_MULTIPLE, vector_vars)
from .c_expr import _operand, expr


def _lines(body: tuple[K.Stmt, ...], depth: int, marks: bool, stmt) -> list[str]:
    out: list[str] = []
    for s in body:
        stmt(s, depth, out, marks)
    return out


def _vocabulary(loop: K.Loop) -> tuple[str, str, str]:
    """(prefix, vector type, lane count) of a `wide` loop (the target's widest) or an 8-lane one."""
    return ("aotc_vf", "aotc_vf", "AOTC_VF_LANES") if WIDE in loop.marks else ("aotc_v8", "aotc_v8f", str(LANES))


def simd_loop(s: K.Loop, depth: int, out: list[str], marks: bool, stmt) -> None:
    """A vector body (runtime_c/aotc_simd.h: 8 lanes, or the target's widest for a `wide`
    loop), then the scalar tail."""
    pad = "    " * depth
    v = s.var.name
    vec = vector_vars(s)
    wide = WIDE in s.marks
    pre, ty, lanes = _vocabulary(s)
    body = _vector_body(s, vec, depth, pre, ty, marks, stmt)
    copies = _renamings(s, s, vec) if INTERLEAVE in s.marks else []
    scalar = K.Loop(s.var, s.start, s.stop, s.body, s.step, s.marks - {SIMD, WIDE, INTERLEAVE})
    note = f"  /* {', '.join(sorted(s.marks))} */" if marks else ""
    if s.trip >= 0 and wide and copies:
        # static: the interleaved part ends at a constant expression, the one-vector
        # loop goes on from there
        start, trip, step = s.start.value, s.trip, f"{len(copies)} * {lanes}"
        mid_u = f"({start} + ({trip} - {trip} % ({step})))"
        out.append(f"{pad}for (int64_t {v} = {start}; {v} < {mid_u}; {v} += {step}) {{{note}")
        out.extend(_copies_body(s, copies, vec, depth, pre, ty, lanes, marks, stmt))
        out.append(pad + "}")
        if trip % (len(copies) * WIDE_MULTIPLE) == 0:  # every width divides the count: no rest
            return
        start_text = mid_u
    else:
        start_text = expr(s.start)
    if wide and s.trip >= 0 and s.trip % WIDE_MULTIPLE == 0:  # every width divides the count: no tail
        out.append(f"{pad}for (int64_t {v} = {start_text}; {v} < {_operand(s.stop, '<', True)}; {v} += {lanes}) {{{note}")
        out.extend(body)
        out.append(pad + "}")
        return
    if s.trip >= 0 and wide and isinstance(s.start, K.Const):
        # static, width known to the C compiler only: the vector part ends at a constant
        # expression, so the tail starts at a known index (gcc -O3 otherwise bounds a tail
        # starting wherever the vector loop left off by address overflow and warns)
        start, trip = s.start.value, s.trip
        mid = f"({start + trip} - {trip} % {lanes})" if start == 0 else f"({start} + ({trip} - {trip} % {lanes}))"
        out.append(f"{pad}for (int64_t {v} = {start_text}; {v} < {mid}; {v} += {lanes}) {{{note}")
        out.extend(body)
        out.append(pad + "}")
        out.append(f"{pad}for (int64_t {v} = {mid}; {v} < {_operand(s.stop, '<', True)}; ++{v}) {{")
        out.extend(_lines(s.body, depth + 1, marks, stmt))
        out.append(pad + "}")
        return
    if s.trip >= 0 and not wide:  # static: the vector part ends at a constant, the tail starts there
        start, trip = s.start.value, s.trip
        mid = start + trip // LANES * LANES
        out.append(f"{pad}for (int64_t {v} = {start}; {v} < {mid}; {v} += {LANES}) {{{note}")
        out.extend(body)
        out.append(pad + "}")
        if mid < start + trip:
            stmt(K.Loop(s.var, K.Const(mid), s.stop, s.body, 1, scalar.marks), depth, out, marks)
        return
    # dynamic bounds: each part ends where whole vectors (or whole groups of copies) do, an
    # index computed before it, and the tail starts at that index (gcc -O3 bounds a tail that
    # starts wherever the vector loop left off by address overflow, and warns, once a call
    # with constant bounds is inlined); for stop <= start every end is <= start: nothing runs
    stop = _operand(s.stop, "-", True)
    out.append(pad + "{")
    out.append(f"{pad}    int64_t {v} = {expr(s.start)};")
    if copies:
        step = f"{len(copies)} * {lanes}"
        out.append(f"{pad}    const int64_t {v}_groups = {stop} - ({stop} - {v}) % ({step});")
        out.append(f"{pad}    for (; {v} < {v}_groups; {v} += {step}) {{{note}")
        out.extend("    " + line for line in _copies_body(s, copies, vec, depth, pre, ty, lanes, marks, stmt))
        out.append(pad + "    }")
    out.append(f"{pad}    const int64_t {v}_vectors = {stop} - ({stop} - {v}) % {lanes};")
    out.append(f"{pad}    for (; {v} < {v}_vectors; {v} += {lanes}) {{{note}")
    out.extend("    " + line for line in body)
    out.append(pad + "    }")
    out.append(f"{pad}    for ({v} = {v}_vectors; {v} < {_operand(s.stop, '<', True)}; ++{v}) {{")
    out.extend(_lines(s.body, depth + 2, marks, stmt))
    out.append(pad + "    }")
    out.append(pad + "}")


def _vector_body(s: K.Loop, vec: set[str], depth: int, pre: str, ty: str, marks: bool, stmt,
                 rename: dict[str, K.Expr] | None = None, part: str = "all") -> list[str]:
    """The vector body's statements: "all", or only those that vary with the loop variable
    ("varying", named through `rename`: one copy of an interleaved body) or only the others
    ("invariant")."""
    pad = "    " * depth
    rename = rename or {}
    vary = vec | {r.name for r in rename.values()}
    body: list[str] = []
    for st in s.body:
        # a store, and a prefetch of the element a copy reads (kernel/prefetch.py), vary with the copy
        varies = isinstance(st, (K.Store, K.Prefetch)) or isinstance(st, K.Let) and st.var.name in vec
        if part != "all" and varies != (part == "varying"):
            continue
        if varies and rename:
            st = K.map_exprs((st,), lambda e: K.substitute_expr(e, rename))[0]
            if isinstance(st, K.Let):
                st = K.Let(rename[st.var.name], st.value)
        if isinstance(st, K.Let) and varies and st.value.ty in MASK_TYPES:
            mty = "aotc_vfm" if pre == "aotc_vf" else "aotc_v8m"
            body.append(f"{pad}    const {mty} {st.var.name} = {_mexpr(st.value, vary, pre)};")
        elif isinstance(st, K.Let) and varies:
            body.append(f"{pad}    const {ty} {st.var.name} = {_vexpr(st.value, vary, pre)};")
        elif isinstance(st, K.Store):
            op = "stream" if st.stream else "store"  # kernel/stream.py
            body.append(f"{pad}    {pre}_{op}(&{st.buf.name}[{expr(st.index)}], {_vexpr(st.value, vary, pre)});")
        else:
            stmt(st, depth + 1, body, marks)
    return body


def _renamings(counter: K.Loop, inner: K.Loop, vec: set[str]) -> list[dict[str, K.Expr]]:
    """The renamings of interleaved copies of `inner`'s body (copy k: `name` -> `name_uk`
    for its lane-varying locals and `counter`'s variable, whose copies step apart), or none
    when a new name is already read in the body."""
    types = {st.var.name: st.var.ty for st in inner.body if isinstance(st, K.Let) and st.var.name in vec}
    types[counter.var.name] = counter.var.ty
    copies = [{n: K.Var(f"{n}_u{k}", t) for n, t in types.items()} for k in range(INTERLEAVE_COPIES)]
    used = set().union(*(K.free_vars(e) for st in inner.body for e in K.stmt_exprs(st)))
    return [] if any(r.name in used for c in copies for r in c.values()) else copies


def _copies_body(s: K.Loop, copies: list[dict[str, K.Expr]], vec: set[str], depth: int, pre: str, ty: str,
                 lanes: str, marks: bool, stmt) -> list[str]:
    """The interleaved body: each copy's loop variable, the statements that do not vary once,
    then statement by statement the copies' forms."""
    pad = "    " * depth
    v = s.var.name
    out = [f"{pad}    const int64_t {c[v].name} = {v} + {k} * {lanes};" for k, c in enumerate(copies) if v in c]
    out.extend(_vector_body(s, vec, depth, pre, ty, marks, stmt, part="invariant"))
    per_copy = [_vector_body(s, vec, depth, pre, ty, marks, stmt, c, part="varying") for c in copies]
    for lines in zip(*per_copy):
        out.extend(lines)
    return out


def blocks_loop(s: K.Loop, depth: int, out: list[str], marks: bool, stmt) -> bool:
    """A loop over blocks of lanes (kernel/vectorize.py strided_lanes): INTERLEAVE_COPIES
    blocks per trip, their inner loop's bodies interleaved, then the remaining blocks one
    per trip. False (nothing printed) when a copy's name is already read in the body."""
    (inner,) = [b for b in s.body if not isinstance(b, (K.Comment, K.Prefetch))]
    hints = tuple(b for b in s.body if isinstance(b, K.Prefetch))  # each block's (kernel/prefetch.py)
    vec = vector_vars(inner)
    copies = _renamings(s, inner, vec)
    if not copies:
        return False
    pad = "    " * depth
    j, step, start = s.var.name, s.step, s.start.value
    mid = start + s.trip // INTERLEAVE_COPIES * INTERLEAVE_COPIES * step
    note = f"  /* {', '.join(sorted(s.marks))} */" if marks else ""
    out.append(f"{pad}for (int64_t {j} = {start}; {j} < {mid}; {j} += {INTERLEAVE_COPIES * step}) {{{note}")
    out.extend(f"{pad}    const int64_t {c[j].name} = {j} + {k * step};" for k, c in enumerate(copies))
    for c in copies:
        for h in K.map_exprs(hints, lambda e, c=c: K.substitute_expr(e, {j: c[j]})):
            stmt(h, depth + 1, out, marks)
    pre, ty, lanes = _vocabulary(inner)
    v = inner.var.name
    out.append(f"{pad}    for (int64_t {v} = 0; {v} < {inner.trip}; {v} += {lanes}) {{")
    out.extend(_copies_body(inner, copies, vec, depth + 1, pre, ty, lanes, marks, stmt))
    out.append(pad + "    }")
    out.append(pad + "}")
    if mid < start + s.trip * step:
        stmt(K.Loop(s.var, K.Const(mid), s.stop, s.body, step, s.marks - {INTERLEAVE}), depth, out, marks)
    return True


def _vexpr(e: K.Expr, vec: set[str], pre: str) -> str:
    """A vector value of the vocabulary `pre` (aotc_v8 or aotc_vf): lane k is `e` at loop
    variable + k."""
    if not K.free_vars(e) & vec:
        return f"{pre}_set1({expr(e)})"
    if isinstance(e, K.Var):
        return e.name
    if isinstance(e, K.Load):
        return f"{pre}_load(&{e.buf.name}[{expr(e.index)}])"
    if isinstance(e, K.Binary):
        return f"{pre}_{VECTOR_BINARY[e.op]}({_vexpr(e.a, vec, pre)}, {_vexpr(e.b, vec, pre)})"
    if isinstance(e, K.Call):
        return f"{pre}_{VECTOR_CALLS[e.fn]}({', '.join(_vexpr(a, vec, pre) for a in e.args)})"
    if isinstance(e, K.Select):
        return f"{pre}_select({_mexpr(e.cond, vec, pre)}, {_vexpr(e.a, vec, pre)}, {_vexpr(e.b, vec, pre)})"
    raise TypeError(f"not a vector expression: {e!r}")


def _mexpr(e: K.Expr, vec: set[str], pre: str) -> str:
    """A lane mask of the vocabulary `pre` (kernel/vectorize.py is_mask)."""
    if isinstance(e, K.Cast):
        e = e.a
    if isinstance(e, K.Var):
        return e.name
    if isinstance(e, K.Binary) and e.op in MASK_COMPARE:
        name, swap = MASK_COMPARE[e.op]
        a, b = (e.b, e.a) if swap else (e.a, e.b)
        return f"{pre}_{name}({_vexpr(a, vec, pre)}, {_vexpr(b, vec, pre)})"
    if isinstance(e, K.Binary) and e.op in MASK_LOGIC:
        return f"{pre}_{MASK_LOGIC[e.op]}({_mexpr(e.a, vec, pre)}, {_mexpr(e.b, vec, pre)})"
    raise TypeError(f"not a vector mask: {e!r}")
