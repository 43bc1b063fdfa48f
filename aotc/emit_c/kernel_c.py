"""The C printer of the kernel IR: statements, kernels and scalar functions.

With c_expr.py (expressions: types, literals, operators parenthesized by C precedence
and wherever gcc's -Wparentheses would ask) and vector_c.py (vector loops), the only
place kernel code becomes C text; it decides nothing about what a kernel computes.
"""
from __future__ import annotations

from ..kernel import ir as K
from ..kernel.vectorize import INTERLEAVE, SIMD
from .c_expr import _operand, _primary, ctype, expr
from .vector_c import blocks_loop, simd_loop


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
    elif isinstance(s, K.Prefetch):
        hint = "AOTC_PREFETCH_AHEAD" if s.ahead else "AOTC_PREFETCH_R"
        out.append(f"{pad}{hint}(&{s.buf.name}[{expr(s.index)}]);")
    elif isinstance(s, K.ArrayDecl):
        out.append(f"{pad}{ctype(s.buf.dtype)} {s.buf.name}[{s.buf.size}];")
        if s.init is not None:
            out.append(f"{pad}for (int l = 0; l < {s.buf.size}; ++l) {s.buf.name}[l] = {expr(s.init)};")
    elif isinstance(s, K.Loop) and SIMD in s.marks:
        simd_loop(s, depth, out, marks, _stmt)
    elif isinstance(s, K.Loop) and INTERLEAVE in s.marks and blocks_loop(s, depth, out, marks, _stmt):
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
