"""The C printer of the kernel IR: expressions, statements, kernels and scalar functions.

The only place kernel code becomes C text. It spells types, literals, operators
(parenthesized by C precedence, and wherever gcc's -Wparentheses would ask) and
loops; it decides nothing about what a kernel computes.
"""
from __future__ import annotations

import math

import numpy as np

from ..hlo.dtypes import DType
from ..kernel import ir as K
from ..kernel.vectorize import (INTERLEAVE, INTERLEAVE_COPIES, LANES, MASK_COMPARE, MASK_LOGIC, MASK_TYPES, SIMD,
                                VECTOR_BINARY, VECTOR_CALLS, WIDE, WIDE_MULTIPLE, vector_vars)

_PREC = {"||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
         "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13, "%": 13}
_ARITH = frozenset({"+", "-", "*", "/", "%"})
_RELATIONAL = frozenset({"<", "<=", ">", ">=", "==", "!="})
_INT_BOUNDS = {"s8": "INT8", "s16": "INT16", "s32": "INT32", "s64": "INT64",
               "u8": "UINT8", "u16": "UINT16", "u32": "UINT32", "u64": "UINT64"}


def ctype(dt: DType | None) -> str:
    return "void" if dt is None else dt.c_type


def c_float(x: float, f64: bool) -> str:
    """An exact C literal of a float value, in f32 or f64."""
    suffix = "" if f64 else "f"
    cast = "double" if f64 else "float"
    if math.isnan(x):
        return f"(({cast})NAN)" if not np.signbit(x) else f"(-({cast})NAN)"
    if math.isinf(x):
        return f"(({cast})INFINITY)" if x > 0 else f"(-({cast})INFINITY)"
    if x == 0:
        return f"-0.0{suffix}" if math.copysign(1.0, x) < 0 else f"0.0{suffix}"
    short = str(np.float64(x)) if f64 else str(np.float32(x))
    exact = np.float64(short) == x if f64 else np.float32(short) == np.float32(x)
    if exact and "inf" not in short and "nan" not in short:
        if "e" not in short and "." not in short:
            short += ".0"
        return f"{short}{suffix}"
    return f"{float(x).hex()}{suffix}"


def c_literal(value, dt: DType) -> str:
    """The C literal of one value of type `dt` (halves are computed as f32)."""
    if dt.kind == "pred":
        return "1" if bool(value) else "0"
    if dt.kind == "float":
        return c_float(float(value), dt.name == "f64")
    if dt.kind == "complex":
        v = complex(value)
        f64 = dt.name == "c128"
        return f"aotc_complex_{dt.name}({c_float(v.real, f64)}, {c_float(v.imag, f64)})"
    v = int(value)
    pfx = _INT_BOUNDS.get(dt.name)
    if pfx is None:
        return str(v)
    if dt.name == "s64":
        if v == -(1 << 63):
            return "INT64_MIN"
        return str(v) if -(1 << 31) < v < (1 << 31) else f"INT64_C({v})"
    if dt.kind == "sint":
        if v == -(1 << (dt.bits - 1)):
            return f"{pfx}_MIN"
        return f"(({dt.c_type}){v})"
    return f"(({dt.c_type}){v}u)" if dt.bits < 64 else f"UINT64_C({v})"


# ------------------------------------------------------------------ expressions

def expr(e: K.Expr) -> str:
    if isinstance(e, K.Const):
        return c_literal(e.value, e.ty)
    if isinstance(e, K.Var):
        return e.name
    if isinstance(e, K.Load):
        return f"{e.buf.name}[{expr(e.index)}]"
    if isinstance(e, K.Binary):
        return f"{_operand(e.a, e.op, False)} {e.op} {_operand(e.b, e.op, True)}"
    if isinstance(e, K.Unary):
        return f"{e.op}{_primary(e.a, allow_cast=True)}"
    if isinstance(e, K.Cast):
        return f"({ctype(e.ty)}){_primary(e.a, allow_cast=True)}"
    if isinstance(e, K.Call):
        return f"{e.fn}({', '.join(expr(a) for a in e.args)})"
    if isinstance(e, K.Select):
        return f"{_primary(e.cond)} ? {_primary(e.a, allow_cast=True)} : {_primary(e.b, allow_cast=True)}"
    if isinstance(e, K.Field):
        return f"{_primary(e.a)}.{e.name}"
    if isinstance(e, K.Ptr):
        return _pointer(e)
    if isinstance(e, K.Pool):
        return "par ? par->fn : 0, par ? par->user : 0, par ? par->threads : 0"
    raise TypeError(f"cannot print {e!r}")


def _pointer(p: K.Ptr) -> str:
    if p.var is not None:
        return f"&{p.var.name}"
    assert p.buf is not None
    if p.byte_view:
        at = p.buf.name if isinstance(p.offset, K.Const) and p.offset.value == 0 else \
            f"((unsigned char*){p.buf.name} + {expr(p.offset)})"
        return f"({ctype(p.elem)}*)(void*){at}"
    if isinstance(p.offset, K.Const) and p.offset.value == 0:
        return p.buf.name
    return f"{p.buf.name} + {_operand(p.offset, '+', True)}"


def _primary(e: K.Expr, allow_cast: bool = False) -> str:
    text = expr(e)
    simple = isinstance(e, (K.Var, K.Load, K.Call, K.Field)) or (isinstance(e, K.Const) and not text.startswith("-")
                                                                 and not text.startswith("(("))
    if simple or (allow_cast and isinstance(e, K.Cast)) or (isinstance(e, K.Const) and text.startswith("((")):
        return text
    return f"({text})"


def _operand(e: K.Expr, parent: str, right: bool) -> str:
    if isinstance(e, K.Binary):
        p, q = _PREC[e.op], _PREC[parent]
        both_arith = e.op in _ARITH and parent in _ARITH
        if both_arith and (p > q or (p == q and not right)):
            return expr(e)
        # `i < n + 1`, `a >= 0 && a <= 2`, `a && b && c`: binding C's precedence makes plain
        # and gcc's -Wparentheses leaves alone
        if (e.op in _ARITH and parent in _RELATIONAL) or (parent in ("&&", "||") and e.op in _RELATIONAL) \
                or (parent in ("&&", "||") and e.op == parent and not right):
            return expr(e)
        return f"({expr(e)})"
    if isinstance(e, (K.Select, K.Ptr)):
        return f"({expr(e)})"
    if isinstance(e, K.Const) and expr(e).startswith("-"):
        return f"({expr(e)})"
    return expr(e)


# ------------------------------------------------------------------ statements

def stmts(body: tuple[K.Stmt, ...], depth: int = 1, marks: bool = False) -> list[str]:
    """C lines of `body` at `depth`; with `marks`, each loop header also shows its marks
    (for dumps)."""
    out: list[str] = []
    for s in body:
        _stmt(s, depth, out, marks)
    return out


def _decl_type(v: K.Var, value: K.Expr | None) -> str:
    if v.ty is not None:
        return ctype(v.ty)
    if isinstance(value, K.Ptr):
        if value.byte_view:
            return f"{ctype(value.elem)}*"
        return f"{ctype(value.buf.dtype)}*" if value.buf is not None else "void*"
    return "void*"


def _stmt(s: K.Stmt, depth: int, out: list[str], marks: bool = False) -> None:
    pad = "    " * depth
    if isinstance(s, K.Let):
        t = _decl_type(s.var, s.value)
        out.append(f"{pad}{t} const {s.var.name} = {expr(s.value)};" if t.endswith("*")
                   else f"{pad}const {t} {s.var.name} = {expr(s.value)};")
    elif isinstance(s, K.Decl):
        init = f" = {expr(s.init)}" if s.init is not None else ""
        out.append(f"{pad}{_decl_type(s.var, s.init)} {s.var.name}{init};")
    elif isinstance(s, K.Assign):
        v = s.value
        step = (isinstance(v, K.Binary) and v.op in ("+", "-") and v.a == s.var and v.b == K.Const(1)
                and s.var.ty == K.INDEX)
        out.append(f"{pad}{'++' if v.op == '+' else '--'}{s.var.name};" if step
                   else f"{pad}{s.var.name} = {expr(v)};")
    elif isinstance(s, K.Store):
        out.append(f"{pad}{s.buf.name}[{expr(s.index)}] = {expr(s.value)};")
    elif isinstance(s, K.ArrayDecl):
        out.append(f"{pad}{ctype(s.buf.dtype)} {s.buf.name}[{s.buf.size}];")
        if s.init is not None:
            out.append(f"{pad}for (int l = 0; l < {s.buf.size}; ++l) {s.buf.name}[l] = {expr(s.init)};")
    elif isinstance(s, K.Loop) and SIMD in s.marks:
        _simd_loop(s, depth, out, marks)
    elif isinstance(s, K.Loop) and INTERLEAVE in s.marks and _blocks_loop(s, depth, out, marks):
        pass
    elif isinstance(s, K.Loop):
        v = s.var.name
        step = f"++{v}" if s.step == 1 else f"{v} += {s.step}"
        note = f"  /* {', '.join(sorted(s.marks))} */" if marks and s.marks else ""
        out.append(f"{pad}for (int64_t {v} = {expr(s.start)}; {v} < {_operand(s.stop, '<', True)}; {step}) {{{note}")
        out.extend(stmts(s.body, depth + 1, marks))
        out.append(pad + "}")
    elif isinstance(s, K.Repeat):
        if s.body and _is_exit(s.body[0]):  # for (;;) { if (!c) break; ... } is while (c) { ... }
            out.append(f"{pad}while ({_negated(s.body[0].cond)}) {{")
            out.extend(stmts(s.body[1:], depth + 1, marks))
        elif any(isinstance(b, K.Checkpoint) for b in s.body):  # counts its trips for the checkpoint
            out.append(pad + "for (uint32_t aotc_trips = 0;; ++aotc_trips) {")
            out.extend(stmts(s.body, depth + 1, marks))
        else:
            out.append(pad + "for (;;) {")
            out.extend(stmts(s.body, depth + 1, marks))
        out.append(pad + "}")
    elif isinstance(s, K.Break):
        out.append(pad + "break;")
    elif isinstance(s, K.Checkpoint):  # every 64th trip (the first included): a cheap check per trip
        out.append(pad + "if (AOTC_UNLIKELY((aotc_trips & 63u) == 0u) && aotc_budget_spent()) break;")
    elif isinstance(s, K.If) and _is_exit(s):
        out.append(f"{pad}if ({expr(s.cond)}) break;")
    elif isinstance(s, K.If):
        _if(s, depth, out, pad + "if", marks)
    elif isinstance(s, K.CallStmt):
        out.append(f"{pad}{s.fn}({', '.join(expr(a) for a in s.args)});")
    elif isinstance(s, K.Exec):
        _exec(s, pad, out)
    elif isinstance(s, K.Comment):
        out.append(f"{pad}/* {s.text} */")
    else:
        raise TypeError(f"cannot print {s!r}")


def _is_exit(s: K.Stmt) -> bool:
    """`if (c) break;`"""
    return isinstance(s, K.If) and s.then == (K.Break(),) and not s.orelse


def _negated(c: K.Expr) -> str:
    return expr(c.a) if isinstance(c, K.Unary) and c.op == "!" else f"!{_primary(c)}"


def _simd_loop(s: K.Loop, depth: int, out: list[str], marks: bool = False) -> None:
    """A vector body (runtime_c/aotc_simd.h: 8 lanes, or the target's widest for a `wide`
    loop), then the scalar tail."""
    pad = "    " * depth
    v = s.var.name
    vec = vector_vars(s)
    wide = WIDE in s.marks
    pre, ty, lanes = ("aotc_vf", "aotc_vf", "AOTC_VF_LANES") if wide else ("aotc_v8", "aotc_v8f", str(LANES))
    body = _vector_body(s, vec, depth, pre, ty, marks)
    copies = _interleaved(s, vec)
    scalar = K.Loop(s.var, s.start, s.stop, s.body, s.step, s.marks - {SIMD, WIDE, INTERLEAVE})
    note = f"  /* {', '.join(sorted(s.marks))} */" if marks else ""
    if s.trip >= 0 and wide and copies:
        # static: the interleaved part ends at a constant expression, the one-vector
        # loop goes on from there
        start, trip, step = s.start.value, s.trip, f"{len(copies)} * {lanes}"
        mid_u = f"({start} + ({trip} - {trip} % ({step})))"
        out.append(f"{pad}for (int64_t {v} = {start}; {v} < {mid_u}; {v} += {step}) {{{note}")
        out.extend(_copies_body(s, copies, vec, depth, pre, ty, lanes, marks))
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
        out.extend(stmts(s.body, depth + 1, marks))
        out.append(pad + "}")
        return
    if s.trip >= 0 and not wide:  # static: the vector part ends at a constant, the tail starts there
        start, trip = s.start.value, s.trip
        mid = start + trip // LANES * LANES
        out.append(f"{pad}for (int64_t {v} = {start}; {v} < {mid}; {v} += {LANES}) {{{note}")
        out.extend(body)
        out.append(pad + "}")
        if mid < start + trip:
            _stmt(K.Loop(s.var, K.Const(mid), s.stop, s.body, 1, scalar.marks), depth, out, marks)
        return
    out.append(pad + "{")
    out.append(f"{pad}    int64_t {v} = {expr(s.start)};")
    if copies:
        step = f"{len(copies)} * {lanes}"
        out.append(f"{pad}    for (; {v} + {step} <= {expr(s.stop)}; {v} += {step}) {{{note}")
        out.extend("    " + line for line in _copies_body(s, copies, vec, depth, pre, ty, lanes, marks))
        out.append(pad + "    }")
    out.append(f"{pad}    for (; {v} + {lanes} <= {expr(s.stop)}; {v} += {lanes}) {{{note}")
    out.extend("    " + line for line in body)
    out.append(pad + "    }")
    out.append(f"{pad}    for (; {v} < {_operand(s.stop, '<', True)}; ++{v}) {{")
    out.extend(stmts(s.body, depth + 2, marks))
    out.append(pad + "    }")
    out.append(pad + "}")


def _vector_body(s: K.Loop, vec: set[str], depth: int, pre: str, ty: str, marks: bool,
                 rename: dict[str, K.Expr] | None = None, part: str = "all") -> list[str]:
    """The vector body's statements: "all", or only those that vary with the loop variable
    ("varying", named through `rename`: one copy of an interleaved body) or only the others
    ("invariant")."""
    pad = "    " * depth
    rename = rename or {}
    vary = vec | {r.name for r in rename.values()}
    body: list[str] = []
    for st in s.body:
        varies = isinstance(st, K.Store) or isinstance(st, K.Let) and st.var.name in vec
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
            body.append(f"{pad}    {pre}_store(&{st.buf.name}[{expr(st.index)}], {_vexpr(st.value, vary, pre)});")
        else:
            _stmt(st, depth + 1, body, marks)
    return body


def _interleaved(s: K.Loop, vec: set[str]) -> list[dict[str, K.Expr]]:
    """The renamings of an `interleave` loop's copies (copy k: `name` -> `name_uk`), or none
    when the loop is not marked or a new name is already read in the body."""
    if INTERLEAVE not in s.marks:
        return []
    types = {st.var.name: st.var.ty for st in s.body if isinstance(st, K.Let) and st.var.name in vec}
    types[s.var.name] = s.var.ty
    copies = [{n: K.Var(f"{n}_u{k}", t) for n, t in types.items()} for k in range(INTERLEAVE_COPIES)]
    used = set().union(*(K.free_vars(e) for st in s.body for e in K.stmt_exprs(st)))
    return [] if any(r.name in used for c in copies for r in c.values()) else copies


def _copies_body(s: K.Loop, copies: list[dict[str, K.Expr]], vec: set[str], depth: int, pre: str, ty: str,
                 lanes: str, marks: bool) -> list[str]:
    """The interleaved body: each copy's loop variable, the statements that do not vary once,
    then statement by statement the copies' forms."""
    pad = "    " * depth
    v = s.var.name
    out = [f"{pad}    const int64_t {c[v].name} = {v} + {k} * {lanes};" for k, c in enumerate(copies) if v in c]
    out.extend(_vector_body(s, vec, depth, pre, ty, marks, part="invariant"))
    per_copy = [_vector_body(s, vec, depth, pre, ty, marks, c, part="varying") for c in copies]
    for lines in zip(*per_copy):
        out.extend(lines)
    return out


def _blocks_loop(s: K.Loop, depth: int, out: list[str], marks: bool) -> bool:
    """A loop over blocks of lanes (kernel/vectorize.py strided_lanes): INTERLEAVE_COPIES
    blocks per trip, their inner loop's bodies interleaved, then the remaining blocks one
    per trip. False (nothing printed) when a copy's name is already read in the body."""
    (inner,) = [b for b in s.body if not isinstance(b, K.Comment)]
    vec = vector_vars(inner)
    types = {st.var.name: st.var.ty for st in inner.body if isinstance(st, K.Let) and st.var.name in vec}
    types[s.var.name] = s.var.ty
    copies = [{n: K.Var(f"{n}_u{k}", t) for n, t in types.items()} for k in range(INTERLEAVE_COPIES)]
    used = set().union(*(K.free_vars(e) for st in inner.body for e in K.stmt_exprs(st)))
    if any(r.name in used for c in copies for r in c.values()):
        return False
    pad = "    " * depth
    j, step, start = s.var.name, s.step, s.start.value
    mid = start + s.trip // INTERLEAVE_COPIES * INTERLEAVE_COPIES * step
    note = f"  /* {', '.join(sorted(s.marks))} */" if marks else ""
    out.append(f"{pad}for (int64_t {j} = {start}; {j} < {mid}; {j} += {INTERLEAVE_COPIES * step}) {{{note}")
    out.extend(f"{pad}    const int64_t {c[j].name} = {j} + {k * step};" for k, c in enumerate(copies))
    wide = WIDE in inner.marks
    pre, ty, lanes = ("aotc_vf", "aotc_vf", "AOTC_VF_LANES") if wide else ("aotc_v8", "aotc_v8f", str(LANES))
    v = inner.var.name
    out.append(f"{pad}    for (int64_t {v} = 0; {v} < {inner.trip}; {v} += {lanes}) {{")
    out.extend(_copies_body(inner, copies, vec, depth + 1, pre, ty, lanes, marks))
    out.append(pad + "    }")
    out.append(pad + "}")
    if mid < start + s.trip * step:
        _stmt(K.Loop(s.var, K.Const(mid), s.stop, s.body, step, s.marks - {INTERLEAVE}), depth, out, marks)
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


def _if(s: K.If, depth: int, out: list[str], head: str, marks: bool = False) -> None:
    pad = "    " * depth
    out.append(f"{head} ({expr(s.cond)}) {{")
    _arm(s.then, depth + 1, out, marks)
    if len(s.orelse) == 1 and isinstance(s.orelse[0], K.If) and not _is_exit(s.orelse[0]):
        _if(s.orelse[0], depth, out, pad + "} else if", marks)
        return
    if s.orelse:
        out.append(pad + "} else {")
        _arm(s.orelse, depth + 1, out, marks)
    out.append(pad + "}")


def _arm(body: tuple[K.Stmt, ...], depth: int, out: list[str], marks: bool = False) -> None:
    if len(body) == 1 and isinstance(body[0], K.Exec):  # the branch's braces scope its arrays
        _exec(body[0], "    " * depth, out, braced=False)
    else:
        out.extend(stmts(body, depth, marks))


def _exec(s: K.Exec, pad: str, out: list[str], braced: bool = True) -> None:
    def arg(a: K.Expr) -> str:
        text = expr(a)
        return "(void*)" + (text if text.isidentifier() else f"({text})")

    def array(name: str, items: tuple[K.Expr, ...]) -> str:
        return f"void* const {name}[] = {{{', '.join(arg(a) for a in items) or '0'}}};"
    arena = expr(s.arena) if s.arena is not None else "0"
    inner = pad + "    " if braced else pad
    lines = [inner + array("args", s.args), inner + array("results", s.results),
             f"{inner}{s.program}_execute(args, results, {arena}, 0);"]
    out += [pad + "{", *lines, pad + "}"] if braced else lines


def function(f: K.Function) -> str:
    """A scalar helper: one result is returned, several are written through `out<k>`."""
    args = [f"{ctype(p.ty)} {p.name}" for p in f.params]
    body = stmts(f.body)
    if len(f.results) == 1:
        ret = ctype(f.results[0].ty)
        tail = [f"    return {expr(f.results[0])};"]
    else:
        ret = "void"
        args += [f"{ctype(r.ty)}* out{k}" for k, r in enumerate(f.results)]
        tail = [f"    *out{k} = {expr(r)};" for k, r in enumerate(f.results)]
    used = set()
    for s in K.walk(f.body):
        for e in K.stmt_exprs(s):
            K.free_vars(e, used)
    for r in f.results:
        K.free_vars(r, used)
    unused = [f"    (void){p.name};" for p in f.params if p.name not in used]
    head = f"static inline {ret} {f.name}({', '.join(args) or 'void'})"
    comment = f"/* {f.comment} */\n" if f.comment else ""
    return comment + head + " {\n" + "\n".join(unused + body + tail) + "\n}\n"
