"""Printing the calls into the application (docs/custom_calls.md): the header's C ABI
(typed buffers, attributes, the call record, each custom-call target's `extern` function,
the feed callback setters), the per-run host context, one static wrapper per call site,
and the setters of the instance API. Prints `HostCall` data (kernel/host.py); decides no
semantics. A program without such calls prints none of this.
"""
from __future__ import annotations

import math

from ..kernel.host import ATTR_BOOL, ATTR_F64, ATTR_I64, CUSTOM_CALL, INFEED, OUTFEED, RECV, SEND, TYPE_NUMBERS, HostCall
from ..lower.program import Program
from .common import macro

ERR_CUSTOM_CALL, ERR_CALLBACK = 11, 12
_MSG = 256  # bytes of a failure message (the instance's error keeps its first 159)


def all_calls(p: Program) -> list[HostCall]:
    """Every call site of `p` and its sub-programs, each once, by wrapper name."""
    seen: dict[str, HostCall] = {}

    def visit(q: Program) -> None:
        for s in q.subprograms:
            visit(s)
        for c in q.host_calls:
            seen.setdefault(c.cname, c)

    visit(p)
    return [seen[k] for k in sorted(seen)]


def _feeds(calls: list[HostCall]) -> bool:
    return any(c.kind != CUSTOM_CALL for c in calls)


def _channels(calls: list[HostCall], kind: str) -> list[int]:
    return sorted({c.channel for c in calls if c.kind == kind})


def _functions(calls: list[HostCall]) -> list[tuple[str, str]]:
    """(C function, target) of every custom call the application implements."""
    return sorted({(c.function, c.target) for c in calls if c.kind == CUSTOM_CALL})


def _c_string(s: str) -> str:
    out = []
    for ch in s.encode("utf-8"):
        c = chr(ch)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= ch < 127 and c != "?":  # '?' escaped: no trigraphs
            out.append(c)
        else:
            out.append(f"\\{ch:03o}")
    return '"' + "".join(out) + '"'


# ---------------------------------------------------------------- header

def header_decls(p: Program) -> list[str]:
    calls = all_calls(p)
    if not calls:
        return []
    P, M = p.name, macro(p)
    names = [f"{P}_TYPE_{n.upper()} = {v}" for n, v in sorted(TYPE_NUMBERS.items(), key=lambda kv: kv[1])]
    types = ",\n       ".join(", ".join(names[k:k + 6]) for k in range(0, len(names), 6))
    out = [
        "/* ---- Calls into the application (docs/custom_calls.md) ----",
        f"   A run whose call into the application fails returns {P}_ERR_CUSTOM_CALL (a custom call",
        f"   returned nonzero) or {P}_ERR_CALLBACK (a feed callback returned nonzero, or none is set),",
        f"   and {P}_error_msg gives the instruction and the message the application wrote. Calls made",
        "   before the failure have run; none runs after it; results are unspecified. */",
        f"enum {{ {P}_ERR_CUSTOM_CALL = {ERR_CUSTOM_CALL}, {P}_ERR_CALLBACK = {ERR_CALLBACK} }};",
        "/* Element types of a buffer: XLA's PrimitiveType numbers. */",
        f"enum {{ {types} }};",
        "/* One array: `rank` sizes in `dims` (row-major, dense, no padding), `bytes` bytes at `data`",
        "   (bf16/f16 as their uint16_t bits, pred one byte each, c64 as float pairs; a token has",
        "   no buffer). Arguments are read-only; results are written by the callee. */",
        f"typedef struct {{ int type; int rank; const int64_t* dims; void* data; size_t bytes; }} {P}_buffer;",
    ]
    fns = _functions(calls)
    if fns:
        out += [
            "/* A typed attribute of a custom call (backend_config={name = value : type, ...}): kind I64",
            "   (integers, any width: in `i`), F64 (f16/bf16/f32/f64: in `f`), BOOL (`i`: 0 or 1), STR (`s`);",
            "   `type` is the type as written (\"i32\", \"f32\", ...; \"\" for strings). */",
            f"enum {{ {P}_ATTR_I64 = 1, {P}_ATTR_F64 = 2, {P}_ATTR_BOOL = 3, {P}_ATTR_STR = 4 }};",
            f"typedef struct {{ const char* name; int kind; const char* type; int64_t i; double f; const char* s; }} {P}_attr;",
            "/* One custom call: its operands (`args`, one per array leaf, in order) and results (one per",
            "   array leaf of its shape), its backend_config string (\"\" when it is a dictionary) and the",
            "   dictionary's attributes, the pointer given to set_custom_call_user, and a buffer for a",
            "   failure message. Return 0, or nonzero after writing a message (NUL-terminated, at most",
            "   error_size bytes) to fail the run. Called on the thread running the model. */",
            "typedef struct {",
            "    const char* target; const char* instruction;",
            f"    const {P}_buffer* args; int num_args;",
            f"    const {P}_buffer* results; int num_results;",
            f"    const char* backend_config; const {P}_attr* attrs; int num_attrs;",
            "    void* user;",
            "    char* error; size_t error_size;",
            f"}} {P}_call;",
            "/* The custom-call targets this model calls, each a function your application must define",
            "   (an undefined one is a link error naming it). */",
        ]
        out += [f"extern int {fn}(const {P}_call* call);  /* custom_call_target {_c_string(t)} */" for fn, t in fns]
        out += [f"{M}_API int {P}_set_custom_call_user({P}_instance* m, void* user);  /* call->user of every custom call */"]
    if _feeds(calls):
        send, recv = _channels(calls, SEND), _channels(calls, RECV)
        out += [
            "/* A feed callback. infeed and recv: fill `buffers` (one per array leaf of the value, in",
            "   order); outfeed and send: read them. `channel` is the send/recv channel_id (0 for feeds).",
            "   Return 0, or nonzero after writing a message to `error` (error_size bytes) to fail the",
            "   run. Called on the thread running the model, in program order. A run that reaches a feed",
            f"   with no callback set returns {P}_ERR_CALLBACK; {P}_run_with has no instance, so no callbacks. */",
            f"typedef int (*{P}_feed_fn)(void* user, int64_t channel, {P}_buffer* buffers, int count, char* error,",
            "                           size_t error_size);",
            f"{M}_API int {P}_set_infeed({P}_instance* m, {P}_feed_fn fn, void* user);",
            f"{M}_API int {P}_set_outfeed({P}_instance* m, {P}_feed_fn fn, void* user);",
            f"/* send channels: {', '.join(map(str, send)) or 'none'}; recv channels: {', '.join(map(str, recv)) or 'none'}"
            f" ({P}_ERR_INDEX for another) */",
            f"{M}_API int {P}_set_send({P}_instance* m, int64_t channel, {P}_feed_fn fn, void* user);",
            f"{M}_API int {P}_set_recv({P}_instance* m, int64_t channel, {P}_feed_fn fn, void* user);",
        ]
    return out + [""]


# ---------------------------------------------------------------- source

def source_prelude(p: Program) -> list[str]:
    """The host context of a run (which callbacks, the first failure), before the kernels."""
    calls = all_calls(p)
    if not calls:
        return []
    P = p.name
    ns, nr = max(len(_channels(calls, SEND)), 1), max(len(_channels(calls, RECV)), 1)
    feed = f"typedef struct {{ {P}_feed_fn fn; void* user; }} aotc_feed;" if _feeds(calls) else \
        "typedef struct { int unused; } aotc_feed;"
    return [
        "/* The calls into the application of the run on this thread: the instance's callbacks (NULL",
        "   without an instance), and the first failure (code 0: none). A failure spends the run's",
        "   budget, so the run stops at its next check; no call into the application runs after it. */",
        feed,
        "typedef struct {",
        "    const aotc_feed* infeed; const aotc_feed* outfeed;",
        f"    const aotc_feed* send; const aotc_feed* recv;  /* [{ns}], [{nr}]: by channel index */",
        "    void* cc_user;",
        "    int code;",
        f"    char msg[{_MSG}];",
        "} aotc_host;",
        "static AOTC_THREAD_LOCAL aotc_host* aotc_host_now;",
        "static AOTC_UNUSED void aotc_host_fail(aotc_host* h, int code, const char* what, int rc, const char* msg) {",
        "    char num[32];",
        "    snprintf(num, sizeof num, \" failed (%d): \", rc);",
        "    const char* parts[3] = {what, num, msg};",
        "    size_t n = 0;",
        "    for (int k = 0; k < 3; ++k)  /* what failed (code): the application's message, cut to fit */",
        "        for (const char* c = parts[k]; *c && n + 1 < sizeof h->msg; ++c) h->msg[n++] = *c;",
        "    h->msg[n] = 0;",
        "    h->code = code;",
        "    if (aotc_budget_now) aotc_budget_now->spent = 1;",
        "}",
        "",
    ]


def _buffers(var: str, P: str, shapes, params: list[str], writes: bool, out: list[str], tag: str) -> None:
    if not shapes:
        return
    items = []
    for k, ((dt, dims), ptr) in enumerate(zip(shapes, params)):
        d = f"{tag}{k}_dims"
        out.append(f"    static const int64_t {d}[{max(len(dims), 1)}] = "
                   f"{{{', '.join(f'INT64_C({n})' for n in dims) or '0'}}};")
        nbytes = math.prod(dims) * dt.nbytes
        data = ptr if writes else f"(void*){ptr}"
        items.append(f"{{{P}_TYPE_{dt.name.upper()}, {len(dims)}, {d}, {data}, {nbytes}u}}")
    out.append(f"    {P}_buffer {var}[{len(shapes)}] = {{{', '.join(items)}}};")


def _attr_value(a, P: str) -> str:
    i, f, s = "0", "0.0", "0"
    if a.kind == ATTR_I64:
        i = f"INT64_C({a.value})" if a.value != -2 ** 63 else "INT64_MIN"
    elif a.kind == ATTR_BOOL:
        i = "1" if a.value else "0"
    elif a.kind == ATTR_F64:
        v = float(a.value)
        f = ("INFINITY" if v > 0 else "-INFINITY") if math.isinf(v) else "NAN" if math.isnan(v) else repr(v)
    else:
        s = _c_string(str(a.value))
    return f"{{{_c_string(a.name)}, {P}_ATTR_{a.kind.upper()}, {_c_string(a.mlir_type)}, {i}, {f}, {s}}}"


def wrapper(c: HostCall, P: str, channels: dict[str, list[int]]) -> list[str]:
    """The static function a kernel calls for one call site (`channels`: the send and recv
    channel ids, in the order of the instance's tables)."""
    args = [f"a{k}" for k in range(len(c.args))]
    rets = [f"r{k}" for k in range(len(c.results))]
    decls = [f"const void* {a}" for a in args] + [f"void* {r}" for r in rets]
    what = {CUSTOM_CALL: f"custom-call {c.hlo} (target {c.target})", INFEED: f"infeed {c.hlo}",
            OUTFEED: f"outfeed {c.hlo}", SEND: f"send {c.hlo} (channel {c.channel})",
            RECV: f"recv {c.hlo} (channel {c.channel})"}[c.kind]
    out = [f"/* {what} */".replace("*/ */", "*/"), f"static void {c.cname}({', '.join(decls) or 'void'}) {{",
           "    aotc_host* h = aotc_host_now;", "    if (!h || h->code) return;"]
    if c.kind == CUSTOM_CALL:
        _buffers("args", P, c.args, args, False, out, "a")
        _buffers("rets", P, c.results, rets, True, out, "r")
        if c.attrs:
            out.append(f"    static const {P}_attr attrs[{len(c.attrs)}] = {{"
                       + ", ".join(_attr_value(a, P) for a in c.attrs) + "};")
        out += [f"    char err[{_MSG}];", "    err[0] = 0;",
                f"    {P}_call call = {{{_c_string(c.target)}, {_c_string(c.hlo)}, "
                f"{'args' if c.args else '0'}, {len(c.args)}, {'rets' if c.results else '0'}, {len(c.results)}, "
                f"{_c_string(c.config)}, {'attrs' if c.attrs else '0'}, {len(c.attrs)}, h->cc_user, err, sizeof err}};",
                f"    int rc = {c.function}(&call);",
                f"    if (rc) aotc_host_fail(h, {P}_ERR_CUSTOM_CALL, {_c_string(what)}, rc, err);", "}", ""]
        return out
    reads = c.kind in (OUTFEED, SEND)
    shapes, params = (c.args, args) if reads else (c.results, rets)
    if c.kind in (SEND, RECV):
        k = channels[c.kind].index(c.channel)
        field = c.kind  # the instance's table of this kind (send or recv)
        out.append(f"    const aotc_feed* f = h->{field} ? &h->{field}[{k}] : 0;")
    else:
        out.append(f"    const aotc_feed* f = h->{c.kind};")
    setter = {INFEED: "set_infeed", OUTFEED: "set_outfeed", SEND: "set_send", RECV: "set_recv"}[c.kind]
    out += ["    if (!f || !f->fn) {",
            f"        aotc_host_fail(h, {P}_ERR_CALLBACK, {_c_string(what)}, 0, "
            f"{_c_string(f'no callback: call {P}_{setter} before the run')});",
            "        return;", "    }"]
    _buffers("bufs", P, shapes, params, not reads, out, "b")
    out += [f"    char err[{_MSG}];", "    err[0] = 0;",
            f"    int rc = f->fn(f->user, INT64_C({c.channel}), {'bufs' if shapes else '0'}, {len(shapes)}, err, sizeof err);",
            f"    if (rc) aotc_host_fail(h, {P}_ERR_CALLBACK, {_c_string(what)}, rc, err);", "}", ""]
    return out


def wrappers(p: Program) -> list[str]:
    calls = all_calls(p)
    channels = {SEND: _channels(calls, SEND), RECV: _channels(calls, RECV)}
    out: list[str] = []
    for c in calls:
        out += wrapper(c, p.name, channels)
    return out


# ---------------------------------------------------------------- instance API

def instance_fields(p: Program) -> list[str]:
    calls = all_calls(p)
    if not calls:
        return []
    ns, nr = max(len(_channels(calls, SEND)), 1), max(len(_channels(calls, RECV)), 1)
    return ["    aotc_feed infeed, outfeed;  /* the application's callbacks (docs/custom_calls.md) */",
            f"    aotc_feed send[{ns}], recv[{nr}];  /* by channel index */",
            "    void* cc_user;"]


def api_functions(p: Program) -> list[str]:
    calls = all_calls(p)
    if not calls:
        return []
    P = p.name
    out: list[str] = []
    if _functions(calls):
        out += [f"int {P}_set_custom_call_user({P}_instance* m, void* user) {{",
                f"    if (!m) return {P}_ERR_NULL_INSTANCE;", "    m->cc_user = user;", f"    return {P}_OK;", "}"]
    if _feeds(calls):
        for kind in (INFEED, OUTFEED):
            out += [f"int {P}_set_{kind}({P}_instance* m, {P}_feed_fn fn, void* user) {{",
                    f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
                    f"    m->{kind}.fn = fn;", f"    m->{kind}.user = user;", f"    return {P}_OK;", "}"]
        for kind in (SEND, RECV):
            chans = _channels(calls, kind)
            n = max(len(chans), 1)
            out += [f"static const int64_t {P}_{kind}_channels_[{n}] = {{"
                    f"{', '.join(f'INT64_C({c})' for c in chans) or '0'}}};",
                    f"int {P}_set_{kind}({P}_instance* m, int64_t channel, {P}_feed_fn fn, void* user) {{",
                    f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
                    f"    for (int i = 0; i < {len(chans)}; ++i)",
                    f"        if ({P}_{kind}_channels_[i] == channel) {{",
                    f"            m->{kind}[i].fn = fn;", f"            m->{kind}[i].user = user;",
                    f"            return {P}_OK;", "        }",
                    f"    return {P}_fail_msg(m, {P}_ERR_INDEX, \"the model has no {kind} on this channel\");", "}"]
    return out


def run_enter(p: Program) -> list[str]:
    """In run_checked, before the budget: the host context of this run."""
    if not all_calls(p):
        return []
    return ["    aotc_host host;",
            "    memset(&host, 0, sizeof host);",
            "    if (m) {",
            "        host.infeed = &m->infeed; host.outfeed = &m->outfeed;",
            "        host.send = m->send; host.recv = m->recv; host.cc_user = m->cc_user;",
            "    }",
            "    aotc_host* outer_host = aotc_host_now;",
            "    aotc_host_now = &host;",
            "    aotc__atomic_i64 no_cancel;  /* run_with: a budget all the same, which a failure spends */",
            "    aotc__ainit(&no_cancel, 0);"]


def run_leave(p: Program) -> list[str]:
    """In run_checked, after the run: restore, and report a failed call first."""
    if not all_calls(p):
        return []
    return ["    aotc_host_now = outer_host;",
            "    if (host.code) {  /* the message as much as the instance's error holds */",
            "        if (m) {",
            "            memcpy(m->error, host.msg, sizeof m->error - 1);",
            "            m->error[sizeof m->error - 1] = 0;",
            "        }",
            "        return host.code;",
            "    }"]
