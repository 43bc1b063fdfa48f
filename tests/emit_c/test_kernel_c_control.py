"""Printing of the kernel IR's control statements: loops left by `Break`, counters,
sub-program calls, byte views of scratch."""
from __future__ import annotations

from aotc.emit_c.kernel_c import expr, stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.builder import KernelBuilder

S64, F32, U8 = DTYPES["s64"], DTYPES["f32"], DTYPES["u8"]


def _builder() -> KernelBuilder:
    return KernelBuilder(set(), {}, {}, lambda op: None, {})


def test_while_is_a_repeat_left_at_the_top_and_prints_as_while():
    kb = _builder()
    a = kb.local(S64, K.Const(0), "a")
    kb.while_(a.lt(10))
    kb.assign(a, a + 1)
    kb.close()
    body = kb.body()
    loop = body[1]
    assert isinstance(loop, K.Repeat)
    assert loop.body[0] == K.If(K.Unary("!", a.lt(10), K.BOOL), (K.Break(),))
    assert stmts(body, 0) == ["int64_t a = 0;", "while (a < 10) {", "    ++a;", "}"]


def test_an_exit_test_elsewhere_keeps_the_endless_loop():
    flag = K.Buf("flag", DTYPES["pred"])
    body = (K.Repeat((K.CallStmt("step", ()), K.If(K.Unary("!", K.Load(flag, K.Const(0)), K.BOOL), (K.Break(),)),
                      K.CallStmt("step", ()))),)
    assert stmts(body, 0) == ["for (;;) {", "    step();", "    if (!flag[0]) break;", "    step();", "}"]


def test_a_negative_test_prints_negated():
    c = K.Var("done", DTYPES["pred"])
    assert stmts((K.Repeat((K.If(c, (K.Break(),)),)),), 0) == ["while (!done) {", "}"]


def test_counters_step_by_one_and_other_assignments_print_whole():
    q = K.Var("q")
    x = K.Var("x", F32)
    body = (K.Assign(q, q + 1), K.Assign(q, q - 1), K.Assign(q, q + 2),
            K.Assign(x, K.Binary("+", x, K.Const(1.0, F32), F32)))
    assert stmts(body, 0) == ["++q;", "--q;", "q = q + 2;", "x = x + 1.0f;"]


def test_exec_arguments_are_cast_whole_and_a_branch_holding_one_call_has_no_extra_braces():
    out, scratch = K.Buf("out", F32), K.Buf("scratch", U8)
    run = K.Exec("sub", (K.Ptr(out, K.Const(4)), K.Var("v", None)), (K.Ptr(out),),
                 K.Ptr(scratch, K.Const(64), elem=U8, byte_view=True))
    assert stmts((run,), 0) == [
        "{",
        "    void* const args[] = {(void*)(out + 4), (void*)v};",
        "    void* const results[] = {(void*)out};",
        "    sub_execute(args, results, (uint8_t*)(void*)((unsigned char*)scratch + 64), 0);",
        "}",
    ]
    sel = K.Var("sel", DTYPES["s32"])
    chain = K.If(sel.eq(0), (K.Exec("b0", (), (), None),), (K.Exec("b1", (), (), None),))
    assert stmts((chain,), 0) == [
        "if (sel == 0) {",
        "    void* const args[] = {0};",
        "    void* const results[] = {0};",
        "    b0_execute(args, results, 0, 0);",
        "} else {",
        "    void* const args[] = {0};",
        "    void* const results[] = {0};",
        "    b1_execute(args, results, 0, 0);",
        "}",
    ]


def test_a_byte_view_at_offset_zero_is_a_plain_cast():
    scratch = K.Buf("scratch", U8)
    assert expr(K.Ptr(scratch, K.Const(0), elem=S64, byte_view=True)) == "(int64_t*)(void*)scratch"
    at8 = K.Ptr(scratch, K.Const(8), elem=S64, byte_view=True)
    assert expr(at8) == "(int64_t*)(void*)((unsigned char*)scratch + 8)"
