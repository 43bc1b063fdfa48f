"""Dense linear algebra: the LAPACK custom calls JAX emits on CPU (`lapack_?getrf_ffi`,
`?potrf`, `?trsm`, `?geqrf`, `?orgqr`/`?ungqr`, `?syevd`/`?heevd`, `?gesdd`) and the HLO ops
`cholesky` and `triangular-solve`, `?geev` and `?gees`. Each rule checks shapes, options and layouts
(linalg_attrs.py), then builds a kernel that calls one runtime routine of
runtime_c/aotc_linalg.c (aotc_geev.c, aotc_schur.c) per matrix of the batch, on row-major logical
matrices (cholesky and triangular-solve of f16, bf16, f8 and f4 as XLA:CPU expands them, n <= 128).
Other LAPACK targets stay unknown targets, refused by custom_call.py.
"""
from __future__ import annotations

from math import prod

from ..errors import located
from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, ShapeError, TupleShape
from ..kernel import ir as K
from .linalg_attrs import LETTER_OF, LETTERS, check_layouts, letters, options, target_letter
from .rule import OpRule

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

S32 = DTYPES["s32"]

_UPLO = letters("L", "U")
_TRSM = {"side": letters("L", "R"), "uplo": _UPLO, "trans_x": letters("N", "T", "C"), "diag": letters("N", "U")}
_EIGH = {"mode": letters("V", "N"), "uplo": _UPLO}
_SVD = {"mode": letters("A", "S", "N")}
_GEES = {"mode": letters("V", "N"), "sort": letters("N")}
_GEEV = {"compute_left": letters("N", "V"), "compute_right": letters("N", "V")}


def _matrix(s: Shape, what: str, letter: str | None = None) -> ArrayShape:
    if not isinstance(s, ArrayShape) or s.rank < 2:
        raise ShapeError(f"{what} must be an array of rank >= 2 (a batch of matrices), got {s}")
    if s.dtype.name not in LETTER_OF:
        raise ShapeError(f"{what} has element type {s.dtype.name}; aotc's linear algebra takes f32, f64, c64, c128")
    if letter is not None and LETTERS[letter][0] != s.dtype:
        raise ShapeError(f"{what} is {s.dtype.name}, but the target's type letter {letter!r} means "
                         f"{LETTERS[letter][0].name}")
    return s


def _expect(instr: Instruction, got: tuple[ArrayShape, ...], want: tuple[ArrayShape, ...]) -> Shape:
    """The declared result must be `want` (ignoring layouts); returns it without layouts."""
    if len(got) != len(want) or any(not g.same_logical(w) for g, w in zip(got, want)):
        shown = ", ".join(w.text(False) for w in want)
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} must return ({shown}), "
                         f"declared {instr.shape}")
    return want[0] if not isinstance(instr.shape, TupleShape) else TupleShape(want)


def _results(instr: Instruction) -> tuple[ArrayShape, ...]:
    s = instr.shape
    elems = s.elements if isinstance(s, TupleShape) else (s,)
    if any(not isinstance(e, ArrayShape) for e in elems):
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} returns a nested tuple")
    return tuple(elems)


def _arr(dt, dims) -> ArrayShape:
    return ArrayShape(dt, tuple(dims))


# ------------------------------------------------------------------ kernels


def _batch(kb, nb: int) -> K.Expr:
    """A loop over the batch (or nothing for one matrix); its index."""
    return kb.loop(kb.fresh("mat"), nb) if nb > 1 else K.Const(0)


def _at(buf: K.Buf, b: K.Expr, per: int) -> K.Ptr:
    return K.Ptr(buf, b * per if per else K.Const(0))


def _scratch(kb, parts: list[tuple[str, object, int]]) -> list[K.Expr]:
    """Carve 64-byte-aligned scratch arrays [(name, dtype, count)]; their pointers."""
    ptrs, off = [], 0
    for name, dt, count in parts:
        v = K.Var(kb.fresh(name), None)
        ptrs.append((v, off, dt))
        off += -(-max(1, count) * dt.nbytes // 64) * 64
    kb.need_scratch(off)
    out = []
    for v, o, dt in ptrs:
        kb.emit(K.Let(v, K.Ptr(kb.scratch, K.Const(o), elem=dt, byte_view=True)))
        out.append(v)
    return out


def _fn(letter: str, name: str) -> str:
    return f"aotc_la_{letter}_{name}"


def _close(kb, nb: int) -> None:
    if nb > 1:
        kb.close()


# ------------------------------------------------------------------ getrf


def _getrf_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = target_letter(instr, "getrf")
    options(instr, {})
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    a = _matrix(shapes[0], "getrf operand", t)
    check_layouts(instr, shapes, (True,), (True, False, False))
    *b, m, n = a.dims
    return _expect(instr, _results(instr), (_arr(a.dtype, a.dims), _arr(S32, (*b, min(m, n))), _arr(S32, b)))


def _getrf_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    *bd, m, n = a.dims
    nb, k = prod(bd), min(m, n)
    if nb == 0:
        return
    lu, piv, info = outs
    src = kb.buffers[instr.operands[0]]
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "getrf"),
                       (K.Const(m), K.Const(n), _at(src, b, m * n), _at(lu, b, m * n), _at(piv, b, k), _at(info, b, 1)),
                       max(1, m * n * k // 3)))
    _close(kb, nb)


for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}getrf_ffi", shape=_getrf_shape, kernel=_getrf_kernel,
                        buffered_operands=True))

# ------------------------------------------------------------------ potrf


def _potrf_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = target_letter(instr, "potrf")
    options(instr, {"uplo": _UPLO})
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    a = _matrix(shapes[0], "potrf operand", t)
    if a.dims[-1] != a.dims[-2]:
        raise ShapeError(f"potrf needs square matrices, got {a.text(False)}")
    check_layouts(instr, shapes, (True,), (True, False))
    return _expect(instr, _results(instr), (_arr(a.dtype, a.dims), _arr(S32, a.dims[:-2])))


def _potrf_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    lower = options(instr, {"uplo": _UPLO})["uplo"] == "L"
    *bd, n, _ = a.dims
    nb = prod(bd)
    if nb == 0:
        return
    src = kb.buffers[instr.operands[0]]
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "potrf"),
                       (K.Const(int(lower)), K.Const(n), _at(src, b, n * n), _at(outs[0], b, n * n), _at(outs[1], b, 1)),
                       max(1, n * n * n // 6)))
    _close(kb, nb)


for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}potrf_ffi", shape=_potrf_shape, kernel=_potrf_kernel,
                        buffered_operands=True))

# ------------------------------------------------------------------ trsm


def _trsm_check(what: str, a: ArrayShape, b: ArrayShape, left: bool) -> None:
    if a.dims[-1] != a.dims[-2]:
        raise ShapeError(f"{what}: the triangular matrix must be square, got {a.text(False)}")
    if a.dtype != b.dtype:
        raise ShapeError(f"{what}: operand types differ ({a.dtype.name}, {b.dtype.name})")
    if a.dims[:-2] != b.dims[:-2]:
        raise ShapeError(f"{what}: batch dimensions differ ({a.text(False)}, {b.text(False)})")
    k = b.dims[-2] if left else b.dims[-1]
    if a.dims[-1] != k:
        raise ShapeError(f"{what}: a {a.text(False)} does not fit b {b.text(False)} "
                         f"on the {'left' if left else 'right'}")


def _trsm_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = target_letter(instr, "trsm")
    opts = options(instr, _TRSM)
    if len(shapes) != 2:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes two operands (a, b); "
                         f"aotc does not support the form with alpha")
    a = _matrix(shapes[0], "trsm operand 0", t)
    b = _matrix(shapes[1], "trsm operand 1", t)
    _trsm_check(f"custom-call {instr.attr('custom_call_target')}", a, b, opts["side"] == "L")
    check_layouts(instr, shapes, (True, True), (True,))
    return _expect(instr, _results(instr), (_arr(b.dtype, b.dims),))


def _emit_trsm(kb, a: ArrayShape, bsh: ArrayShape, abuf: K.Buf, bbuf: K.Buf, out: K.Buf, left: bool, lower: bool,
               trans: int, unit: bool) -> None:
    *bd, m, n = bsh.dims
    nb = prod(bd)
    if nb == 0:
        return
    k = m if left else n
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "trsm"),
                       (K.Const(int(left)), K.Const(int(lower)), K.Const(trans), K.Const(int(unit)), K.Const(m),
                        K.Const(n), _at(abuf, b, k * k), _at(bbuf, b, m * n), _at(out, b, m * n)),
                       max(1, m * n * k // 2)))
    _close(kb, nb)


def _trsm_kernel(kb, instr: Instruction, outs) -> None:
    a, b = (kb.producers[o].array_shape for o in instr.operands)
    o = options(instr, _TRSM)
    _emit_trsm(kb, a, b, kb.buffers[instr.operands[0]], kb.buffers[instr.operands[1]], outs[0], o["side"] == "L",
               o["uplo"] == "L", "NTC".index(o["trans_x"]), o["diag"] == "U")


for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}trsm_ffi", shape=_trsm_shape, kernel=_trsm_kernel,
                        buffered_operands=True))

# ------------------------------------------------------------------ geqrf, orgqr / ungqr


def _geqrf_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = target_letter(instr, "geqrf")
    options(instr, {})
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    a = _matrix(shapes[0], "geqrf operand", t)
    check_layouts(instr, shapes, (True,), (True, False))
    *b, m, n = a.dims
    return _expect(instr, _results(instr), (_arr(a.dtype, a.dims), _arr(a.dtype, (*b, min(m, n)))))


def _geqrf_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    *bd, m, n = a.dims
    nb, k = prod(bd), min(m, n)
    if nb == 0:
        return
    (work,) = _scratch(kb, [("work", a.dtype, n)])
    src = kb.buffers[instr.operands[0]]
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "geqrf"),
                       (K.Const(m), K.Const(n), _at(src, b, m * n), _at(outs[0], b, m * n), _at(outs[1], b, k), work),
                       max(1, 2 * m * n * k)))
    _close(kb, nb)


def _orgqr_letter(instr: Instruction) -> str:
    name = instr.attr("custom_call_target") or ""
    return target_letter(instr, "ungqr" if name[7:12] in ("cungq", "zungq") else "orgqr")


def _orgqr_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = _orgqr_letter(instr)
    options(instr, {})
    if len(shapes) != 2:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes two operands (a, tau)")
    a = _matrix(shapes[0], "orgqr operand 0", t)
    tau = shapes[1]
    *b, m, n = a.dims
    if not isinstance(tau, ArrayShape) or tau.dtype != a.dtype or tau.dims[:-1] != tuple(b) or tau.rank != a.rank - 1 \
            or tau.dims[-1] > n or n > m:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')}: tau {tau} does not fit a {a.text(False)} "
                         "(needs the same batch, k <= n <= m)")
    check_layouts(instr, shapes, (True, False), (True,))
    return _expect(instr, _results(instr), (_arr(a.dtype, a.dims),))


def _orgqr_kernel(kb, instr: Instruction, outs) -> None:
    a, tau = (kb.producers[o].array_shape for o in instr.operands)
    *bd, m, n = a.dims
    nb, k = prod(bd), tau.dims[-1]
    if nb == 0:
        return
    (work,) = _scratch(kb, [("work", a.dtype, n)])
    src, tb = kb.buffers[instr.operands[0]], kb.buffers[instr.operands[1]]
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "orgqr"),
                       (K.Const(m), K.Const(n), K.Const(k), _at(src, b, m * n), _at(outs[0], b, m * n), _at(tb, b, k),
                        work), max(1, 2 * m * n * k)))
    _close(kb, nb)


for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}geqrf_ffi", shape=_geqrf_shape, kernel=_geqrf_kernel,
                        buffered_operands=True))
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}{'ung' if _t in 'cz' else 'org'}qr_ffi",
                        shape=_orgqr_shape, kernel=_orgqr_kernel, buffered_operands=True))

# ------------------------------------------------------------------ syevd / heevd


def _eigh_letter(instr: Instruction) -> str:
    name = instr.attr("custom_call_target") or ""
    return target_letter(instr, "heevd" if name[7:10] in ("che", "zhe") else "syevd")


def _eigh_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = _eigh_letter(instr)
    options(instr, _EIGH)
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    a = _matrix(shapes[0], "eigh operand", t)
    if a.dims[-1] != a.dims[-2]:
        raise ShapeError(f"eigh needs square matrices, got {a.text(False)}")
    check_layouts(instr, shapes, (True,), (True, False, False))
    real = LETTERS[t][1]
    return _expect(instr, _results(instr), (_arr(a.dtype, a.dims), _arr(real, a.dims[:-1]), _arr(S32, a.dims[:-2])))


def _eigh_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    o = options(instr, _EIGH)
    *bd, n, _ = a.dims
    nb = prod(bd)
    if nb == 0:
        return
    real = LETTERS[LETTER_OF[a.dtype.name]][1]
    work, rwork, iwork = _scratch(kb, [("work", a.dtype, 2 * n * n + 2 * n), ("rwork", real, n),
                                       ("iwork", DTYPES["s64"], n)])
    src = kb.buffers[instr.operands[0]]
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "syevd"),
                       (K.Const(int(o["mode"] == "V")), K.Const(int(o["uplo"] == "L")), K.Const(n), _at(src, b, n * n),
                        _at(outs[0], b, n * n), _at(outs[1], b, n), _at(outs[2], b, 1), work, rwork, iwork),
                       max(1, 8 * n * n * n)))
    _close(kb, nb)


for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}{'he' if _t in 'cz' else 'sy'}evd_ffi", shape=_eigh_shape,
                        kernel=_eigh_kernel, buffered_operands=True))

# ------------------------------------------------------------------ gesdd


def _svd_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = target_letter(instr, "gesdd")
    mode = options(instr, _SVD)["mode"]
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    a = _matrix(shapes[0], "gesdd operand", t)
    check_layouts(instr, shapes, (True,), (True, False, True, True, False))
    *b, m, n = a.dims
    p = min(m, n)
    ku, kv = (p, p) if mode == "S" else (m, n)
    return _expect(instr, _results(instr), (_arr(a.dtype, a.dims), _arr(LETTERS[t][1], (*b, p)),
                                            _arr(a.dtype, (*b, m, ku)), _arr(a.dtype, (*b, kv, n)), _arr(S32, b)))


def _svd_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    mode = options(instr, _SVD)["mode"]
    *bd, m, n = a.dims
    nb, p, q = prod(bd), min(m, n), max(m, n)
    if nb == 0:
        return
    _, _, u, vt, _ = outs
    if mode == "N":  # LAPACK leaves U and VT alone: aotc gives zeros
        for buf, shape in ((u, instr.shape.elements[2]), (vt, instr.shape.elements[3])):
            if shape.size:
                kb.emit(K.CallStmt("memset", (K.Ptr(buf), K.Const(0), K.Const(shape.size * shape.dtype.nbytes))))
    ku = instr.shape.elements[2].dims[-1]
    kv = instr.shape.elements[3].dims[-2]
    real = LETTERS[LETTER_OF[a.dtype.name]][1]
    work, rwork, iwork = _scratch(kb, [("work", a.dtype, p * q + p * p + q * q), ("rwork", real, p),
                                       ("iwork", DTYPES["s64"], p)])
    src = kb.buffers[instr.operands[0]]
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "gesdd"),
                       (K.Const("NSA".index(mode)), K.Const(m), K.Const(n), _at(src, b, m * n), _at(outs[0], b, m * n),
                        _at(outs[1], b, p), _at(u, b, m * ku), _at(vt, b, kv * n), _at(outs[4], b, 1), work, rwork,
                        iwork),
                       max(1, 24 * p * p * q)))
    _close(kb, nb)


for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}gesdd_ffi", shape=_svd_shape, kernel=_svd_kernel,
                        buffered_operands=True))

# ------------------------------------------------------------------ geev


def laqr_work(letter: str, n: int) -> int:
    """Elements (of the matrix's type) of the work ?hseqr takes after a routine's own scratch: the
    multishift QR's windows and sweeps for n > 75, or ?hseqr's 49 x 49 retry of a smaller matrix
    (AOTC_LA_LAQR_WORK in aotc_laqr.c, AOTC_LA_LAQR_C_WORK in aotc_laqr_c.c)."""
    if letter in "sd":
        return n * n // 4 + 4 * n + 3200
    return 2977 if n < 49 else n * n // 4 + 2 * n


def geev_work(letter: str, n: int) -> int:
    """Complex elements of scratch aotc_la_?_geev takes: h, z and x (complex, aotc_geev.c); complex
    T, Z and x, then the real H, Z and a vector, then the complex pairs' phases (real, aotc_schur.c);
    then ?hseqr's work (in real elements for a real matrix)."""
    if letter in "sd":
        return 3 * n * n + 4 * n + (laqr_work(letter, n) + 1) // 2
    return 2 * n * n + 3 * n + laqr_work(letter, n)


def _geev_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = target_letter(instr, "geev")
    options(instr, _GEEV)
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    a = _matrix(shapes[0], "geev operand", t)
    if a.dims[-1] != a.dims[-2]:
        raise ShapeError(f"geev needs square matrices, got {a.text(False)}")
    *b, n, _ = a.dims
    cplx = LETTERS["c" if t in "sc" else "z"][0]
    if t in "sd":  # wr, wi, vl, vr (complex, as jaxlib unpacks LAPACK's real pairs), info
        check_layouts(instr, shapes, (True,), (False, False, True, True, False))
        want = (_arr(a.dtype, (*b, n)), _arr(a.dtype, (*b, n)), _arr(cplx, a.dims), _arr(cplx, a.dims), _arr(S32, b))
    else:  # w, vl, vr, info
        check_layouts(instr, shapes, (True,), (False, True, True, False))
        want = (_arr(a.dtype, (*b, n)), _arr(a.dtype, a.dims), _arr(a.dtype, a.dims), _arr(S32, b))
    return _expect(instr, _results(instr), want)


def _geev_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    o = options(instr, _GEEV)
    t = LETTER_OF[a.dtype.name]
    *bd, n, _ = a.dims
    nb = prod(bd)
    if nb == 0:
        return
    cplx = LETTERS["c" if t in "sc" else "z"][0]
    (work,) = _scratch(kb, [("work", cplx, geev_work(t, n))])
    src = kb.buffers[instr.operands[0]]
    b = _batch(kb, nb)
    vals = [_at(outs[0], b, n), _at(outs[1], b, n)] if t in "sd" else [_at(outs[0], b, n)]
    vl, vr, info = outs[-3:]
    kb.emit(K.CallStmt(_fn(t, "geev"),
                       (K.Const(int(o["compute_left"] == "V")), K.Const(int(o["compute_right"] == "V")), K.Const(n),
                        _at(src, b, n * n), *vals, _at(vl, b, n * n), _at(vr, b, n * n), _at(info, b, 1), work),
                       max(1, 25 * n * n * n)))
    _close(kb, nb)


for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}geev_ffi", shape=_geev_shape, kernel=_geev_kernel,
                        buffered_operands=True))

# ------------------------------------------------------------------ gees


def gees_work(letter: str, n: int) -> int:
    """Elements (of the matrix's type) of scratch aotc_la_?_gees takes: the Hessenberg QR's
    Z and vector, then ?gebal's n permutation entries, then ?hseqr's work."""
    return n * n + 2 * n + laqr_work(letter, n)


def _gees_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = target_letter(instr, "gees")
    options(instr, _GEES)
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    a = _matrix(shapes[0], "gees operand", t)
    if a.dims[-1] != a.dims[-2]:
        raise ShapeError(f"gees needs square matrices, got {a.text(False)}")
    *b, n, _ = a.dims
    # T, Z, the eigenvalues (w; wr and wi for a real matrix), sdim, info
    values = (_arr(a.dtype, (*b, n)),) * (2 if t in "sd" else 1)
    check_layouts(instr, shapes, (True,), (True, True) + (False,) * (len(values) + 2))
    return _expect(instr, _results(instr), (_arr(a.dtype, a.dims), _arr(a.dtype, a.dims), *values,
                                            _arr(S32, b), _arr(S32, b)))


def _gees_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    o = options(instr, _GEES)
    t = LETTER_OF[a.dtype.name]
    *bd, n, _ = a.dims
    nb = prod(bd)
    if nb == 0:
        return
    (work,) = _scratch(kb, [("work", a.dtype, gees_work(t, n))])
    src = kb.buffers[instr.operands[0]]
    b = _batch(kb, nb)
    tt, z, *w, sdim, info = outs
    kb.emit(K.CallStmt(_fn(t, "gees"),
                       (K.Const(int(o["mode"] == "V")), K.Const(n), _at(src, b, n * n), _at(tt, b, n * n),
                        _at(z, b, n * n), *(_at(x, b, n) for x in w), _at(sdim, b, 1), _at(info, b, 1), work),
                       max(1, 15 * n * n * n)))
    _close(kb, nb)


# complex: triangular T from the complex QR of aotc_geev.c; real: quasi-triangular T (aotc_schur.c)
for _t in "sdcz":
    RULES.append(OpRule("custom-call", target=f"lapack_{_t}gees_ffi", shape=_gees_shape, kernel=_gees_kernel,
                        buffered_operands=True))

# ------------------------------------------------------------------ HLO ops: cholesky, triangular-solve


def _hlo_matrix(instr: Instruction, shapes: list[Shape], count: int) -> list[ArrayShape]:
    if len(shapes) != count:
        raise ShapeError(f"{instr.opcode} takes {count} operand{'s' if count > 1 else ''}")
    return [_matrix(s, f"{instr.opcode} operand {k}") for k, s in enumerate(shapes)]


# Half, f8 and f4 types factored as XLA:CPU's unblocked expansion (n <= 128; larger n is
# blocked there); f8e8m0fnu, which XLA:CPU computes in f32, where its expansion is NaN for
# n > 1 (and for k > 1 in triangular-solve: runtime_c/aotc_linalg.c).
_HALF_CHOL = {"f16": "h", "bf16": "b", **{t: t for t in ("f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz",
                                                          "f8e4m3b11fnuz", "f8e4m3", "f8e3m4", "f4e2m1fn",
                                                          "f8e8m0fnu")}}
_HALF_CHOL_MAX = 128
_HALF_TRSOLVE = _HALF_CHOL


def _cholesky_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) == 1 and isinstance(shapes[0], ArrayShape) and shapes[0].dtype.name in _HALF_CHOL:
        a = shapes[0]
        if a.rank < 2:
            raise ShapeError(f"cholesky operand must be an array of rank >= 2 (a batch of matrices), got {a}")
    else:
        (a,) = _hlo_matrix(instr, shapes, 1)
    if a.dims[-1] != a.dims[-2]:
        raise ShapeError(f"cholesky needs square matrices, got {a.text(False)}")
    if not isinstance(instr.attr("lower", False), bool):
        raise ShapeError("cholesky's lower must be true or false")
    return a.with_layout(None)


def _cholesky_kernel(kb, instr: Instruction, outs) -> None:
    a = kb.producers[instr.operands[0]].array_shape
    *bd, n, _ = a.dims
    nb = prod(bd)
    if nb == 0:
        return
    if a.dtype.name in _HALF_CHOL:
        _half_cholesky(kb, instr, a, n, nb, outs)
        return
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(LETTER_OF[a.dtype.name], "cholesky"),
                       (K.Const(int(bool(instr.attr("lower", False)))), K.Const(n),
                        _at(kb.buffers[instr.operands[0]], b, n * n), _at(outs[0], b, n * n)), max(1, n * n * n // 6)))
    _close(kb, nb)


def _half_cholesky(kb, instr: Instruction, a: ArrayShape, n: int, nb: int, outs) -> None:
    if n > _HALF_CHOL_MAX:
        raise located(f"cholesky {instr.name}: {a.dtype.name} matrices larger than {_HALF_CHOL_MAX}x"
                      f"{_HALF_CHOL_MAX} are factored blocked by XLA:CPU, which aotc does not reproduce; "
                      f"got {a.text(False)}", instr.loc)
    (work,) = _scratch(kb, [("chol_l", DTYPES["f32"], n * n)])
    b = _batch(kb, nb)
    kb.emit(K.CallStmt(_fn(_HALF_CHOL[a.dtype.name], "cholesky"),
                       (K.Const(int(bool(instr.attr("lower", False)))), K.Const(n),
                        _at(kb.buffers[instr.operands[0]], b, n * n), _at(outs[0], b, n * n), work),
                       max(1, n * n * n // 6)))
    _close(kb, nb)


RULES.append(OpRule("cholesky", shape=_cholesky_shape, kernel=_cholesky_kernel, buffered_operands=True))

_TRANSPOSE = {"NO_TRANSPOSE": 0, "TRANSPOSE": 1, "ADJOINT": 2}


def _tri_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) == 2 and all(isinstance(s, ArrayShape) and s.dtype.name in _HALF_TRSOLVE for s in shapes):
        a, b = shapes
        if a.rank < 2 or b.rank != a.rank or a.dtype != b.dtype:
            raise ShapeError(f"triangular-solve operands must be batches of matrices of one type, got {a} and {b}")
    else:
        a, b = _hlo_matrix(instr, shapes, 2)
    for key in ("left_side", "lower", "unit_diagonal"):
        if not isinstance(instr.attr(key, False), bool):
            raise ShapeError(f"triangular-solve's {key} must be true or false")
    if instr.attr("transpose_a", "NO_TRANSPOSE") not in _TRANSPOSE:
        raise ShapeError(f"triangular-solve's transpose_a {instr.attr('transpose_a')!r} is not one of "
                         f"{', '.join(_TRANSPOSE)}")
    _trsm_check("triangular-solve", a, b, bool(instr.attr("left_side", False)))
    return b.with_layout(None)


def _tri_kernel(kb, instr: Instruction, outs) -> None:
    a, b = (kb.producers[o].array_shape for o in instr.operands)
    if instr.attr("transpose_a", "NO_TRANSPOSE") not in _TRANSPOSE:
        raise located(f"triangular-solve {instr.name}: unknown transpose_a", instr.loc)
    if a.dtype.name in _HALF_TRSOLVE:
        _half_trsolve(kb, instr, a, b, outs)
        return
    _emit_trsm(kb, a, b, kb.buffers[instr.operands[0]], kb.buffers[instr.operands[1]], outs[0],
               bool(instr.attr("left_side", False)), bool(instr.attr("lower", False)),
               _TRANSPOSE[instr.attr("transpose_a", "NO_TRANSPOSE")], bool(instr.attr("unit_diagonal", False)))


def _half_trsolve(kb, instr: Instruction, a: ArrayShape, bsh: ArrayShape, outs) -> None:
    """XLA:CPU's expansion for one diagonal block (runtime_c/aotc_linalg.c, AOTC__LA_TRSOLVE)."""
    *bd, m, n = bsh.dims
    k = a.dims[-1]
    if k > _HALF_CHOL_MAX:
        raise located(f"triangular-solve {instr.name}: {a.dtype.name} matrices larger than {_HALF_CHOL_MAX}x"
                      f"{_HALF_CHOL_MAX} are solved blockwise by XLA:CPU, which aotc does not reproduce; "
                      f"got {a.text(False)}", instr.loc)
    nb = prod(bd)
    if nb == 0 or m * n == 0:
        return
    (work,) = _scratch(kb, [("trsolve_w", DTYPES["f32"], 2 * k * k + k)])
    b = _batch(kb, nb)
    trans = _TRANSPOSE[instr.attr("transpose_a", "NO_TRANSPOSE")]
    kb.emit(K.CallStmt(_fn(_HALF_TRSOLVE[a.dtype.name], "trsolve"),
                       (K.Const(int(bool(instr.attr("left_side", False)))), K.Const(int(bool(instr.attr("lower", False)))),
                        K.Const(int(trans != 0)), K.Const(int(bool(instr.attr("unit_diagonal", False)))), K.Const(m),
                        K.Const(n), _at(kb.buffers[instr.operands[0]], b, k * k),
                        _at(kb.buffers[instr.operands[1]], b, m * n), _at(outs[0], b, m * n), work),
                       max(1, k * k * k // 3 + m * n * k)))
    _close(kb, nb)


RULES.append(OpRule("triangular-solve", shape=_tri_shape, kernel=_tri_kernel, buffered_operands=True))
