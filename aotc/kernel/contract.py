"""Contraction: a float multiply whose one use is an add or subtract becomes one fused
multiply-add, exactly where XLA:CPU's code generator fuses them on a machine with FMA.

XLA:CPU compiles with LLVM's `AllowFPOpFusion = Fast`, and LLVM's DAG combiner then turns
`fadd (fmul x, y), z` into `fma(x, y, z)` when the product has no other use, and `fadd z,
(fmul x, y)` likewise when the first operand is not such a product; `fsub (fmul x, y), z`
becomes `fma(x, y, -z)` and `fsub z, (fmul x, y)` becomes `fma(-x, y, z)`; a negated
product added, `-(x y) + z`, is `z - x y`. Only within one block: a product hoisted out
of the loop (as LLVM hoists it) stays a product. f32 and f64 only: an f16 or bf16 product
is rounded to its type before the add reads it.

Here a product is a `Let` of `*` that one expression reads, in the same statement list,
or a `*` written inside the expression itself. The fused form is the call
`aotc_fma_f32(x, y, z)` (`fmaf`, exactly rounded on every target; `aotc_vf_fma` in vector
loops), so the bits do not depend on how the C is compiled. The pass runs only for
targets with FMA instructions, where XLA fuses; elsewhere products and sums round apart.
The same holds inside XLA's complex product and quotient: there the pass turns the
runtime's `aotc_mul_c64` / `aotc_div_c64` (products rounded apart) into `aotc_fmul_c64` /
`aotc_fdiv_c64` (the products XLA's LLVM contracts, fused; aotc_math.h), c128 likewise.
"""
from __future__ import annotations

from collections import Counter

from ..hlo.dtypes import DTYPES
from . import ir as K

FLOATS = {DTYPES["f32"], DTYPES["f64"]}
FUSED_COMPLEX = {f"aotc_{op}_{t}": f"aotc_f{op}_{t}" for op in ("mul", "div") for t in ("c64", "c128")}


def contract_multiply_adds(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    return _block(body)


def _uses(body: tuple[K.Stmt, ...]) -> Counter[str]:
    """Reads of each name in `body` and the blocks inside it: all the reads a Let of this
    block has (the copies of one loop made by unswitching each hold their own)."""
    uses: Counter[str] = Counter()
    for s in K.walk(body):
        for e in K.stmt_exprs(s):
            for x in K.nodes(e):
                if isinstance(x, K.Var):
                    uses[x.name] += 1
    return uses


def _block(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    uses = _uses(body)
    products: dict[str, K.Binary] = {}  # single-use products of this block, by Let name
    negated: dict[str, K.Var] = {}      # single-use negations of those
    fused: set[str] = set()             # Lets whose one use was fused
    out: list[K.Stmt] = []
    changed = False
    for s in body:
        if isinstance(s, (K.Let, K.Assign, K.Store)):
            value = _fuse(s.value, products, negated, fused)
            if value is not s.value:
                changed = True
                s = K.Let(s.var, value) if isinstance(s, K.Let) else (
                    K.Assign(s.var, value) if isinstance(s, K.Assign) else K.Store(s.buf, s.index, value))
            if isinstance(s, K.Let) and uses[s.var.name] == 1:
                v = s.value
                if isinstance(v, K.Binary) and v.op == "*" and v.ty in FLOATS:
                    products[s.var.name] = v
                elif (isinstance(v, K.Call) and v.fn == f"aotc_neg_{v.ty.name}" and isinstance(v.args[0], K.Var)
                      and v.args[0].name in products):
                    negated[s.var.name] = v.args[0]
        elif K.nested(s):
            bodies = [_block(inner) for inner in K.nested(s)]
            if any(c for _, c in bodies):
                s, changed = K.with_nested(s, tuple(b for b, _ in bodies)), True
        out.append(s)
    if fused:
        out = [s for s in out if not (isinstance(s, K.Let) and s.var.name in fused)]
    return tuple(out), changed


def _product(e: K.Expr, products: dict, fused: set) -> K.Binary | None:
    """The product `e` is (written inline, or a single-use Let of this block), else None."""
    if isinstance(e, K.Binary) and e.op == "*" and e.ty in FLOATS:
        return e
    if isinstance(e, K.Var) and e.name in products and e.name not in fused:
        return products[e.name]
    return None


def _fuse(e: K.Expr, products: dict, negated: dict, fused: set) -> K.Expr:
    """`e` with each add or subtract of a product written as a fused multiply-add, bottom
    up (a product's operands may themselves hold fusable sums)."""
    kids = K.children(e)
    if kids:
        new = tuple(_fuse(k, products, negated, fused) for k in kids)
        if new != kids:
            e = K.rebuild(e, new)
    if isinstance(e, K.Call) and e.fn in FUSED_COMPLEX:
        return K.Call(FUSED_COMPLEX[e.fn], e.args, e.ty)
    if not (isinstance(e, K.Binary) and e.op in "+-" and len(e.op) == 1 and e.ty in FLOATS):
        return e
    fma = f"aotc_fma_{e.ty.name}"
    neg = f"aotc_neg_{e.ty.name}"
    a, b = e.a, e.b
    if e.op == "+":  # -(x y) + z and z + -(x y) are z - x y
        for n, z in ((a, b), (b, a)):
            if isinstance(n, K.Var) and n.name in negated and n.name not in fused:
                p = products[negated[n.name].name]
                fused.update((n.name, negated[n.name].name))
                return K.Call(fma, (K.Call(neg, (p.a,), e.ty), p.b, z), e.ty)
    p = _product(a, products, fused)
    if p is not None:
        _take(a, fused)
        c = b if e.op == "+" else K.Call(neg, (b,), e.ty)
        return K.Call(fma, (p.a, p.b, c), e.ty)
    p = _product(b, products, fused)
    if p is not None:
        _take(b, fused)
        x = p.a if e.op == "+" else K.Call(neg, (p.a,), e.ty)
        return K.Call(fma, (x, p.b, a), e.ty)
    return e


def _take(e: K.Expr, fused: set) -> None:
    if isinstance(e, K.Var):
        fused.add(e.name)
