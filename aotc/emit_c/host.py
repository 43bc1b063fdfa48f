"""Printing the calls into the application (docs/custom_calls.md): the header's C ABI
(typed buffers, attributes, the call record, each custom-call target's `extern` function,
the feed callback setters), the per-run host context, one static wrapper per call site,
and the setters of the instance API; and the instance's rng-get-and-update-state counters
(one per call site, RNG_STATE calls), which are not the application's. Prints `HostCall` data (kernel/host.py); decides no
semantics. A program without such calls prints none of this.
"""
from __future__ import annotations

import math

from ..kernel.host import (ATTR_BOOL, ATTR_F64, ATTR_I64, CUSTOM_CALL, INFEED, OUTFEED, RECV, RNG_STATE, SEND,
                           TYPE_NUMBERS, HostCall)
from ..lower.program import Program
from .common import macro

ERR_CUSTOM_CALL, ERR_CALLBACK = 11, 12
_MSG = 256  # bytes of a failure message (the instance's error keeps its first 159)


RNG_START = 0x7012395  # XLA:CPU's first value of every rng-get-and-update-state counter


def _every_call(p: Program) -> list[HostCall]:
    """Every call site of `p` and its sub-programs, each once, by wrapper name."""
    seen: dict[str, HostCall] = {}

    def visit(q: Program) -> None:
        for s in q.subprograms:
            visit(s)
        for c in q.host_calls:
            seen.setdefault(c.cname, c)

    visit(p)
    return [seen[k] for k in sorted(seen)]


def all_calls(p: Program) -> list[HostCall]:
    """Every call into the application of `p` and its sub-programs, by wrapper name."""
    return [c for c in _every_call(p) if c.kind != RNG_STATE]


def rng_sites(p: Program) -> list[HostCall]:
    """Every rng-get-and-update-state of `p` and its sub-programs, by wrapper name: the
    index of each is its counter's place in the instance."""
    return [c for c in _every_call(p) if c.kind == RNG_STATE]


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

def _rng_header(p: Program) -> list[str]:
    sites = rng_sites(p)
    if not sites:
        return []
    P = p.name
    return [
        "/* ---- rng-get-and-update-state ----",
        f"   Each of its {len(sites)} call site(s) ({', '.join(c.hlo for c in sites)}) has a 128-bit counter in",
        f"   the instance, as XLA:CPU has one per call site in its executable: {P}_create sets it to",
        f"   {RNG_START:#x}; every time the instruction executes it gives the old value (u64[2], low word",
        "   first) and the counter grows by its delta. So the runs of one instance give XLA's sequence, and",
        "   two instances count independently. A run that fails or is cancelled has advanced the",
        f"   counters of the sites it reached. {P}_run_with has no instance: each call starts every",
        f"   counter afresh, giving an instance's first run. */",
    ]


def header_decls(p: Program) -> list[str]:
    calls = all_calls(p)
    if not calls:
        return _rng_header(p)
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
    return out + [""] + _rng_header(p)


# ---------------------------------------------------------------- source

def _rng_prelude(p: Program) -> list[str]:
    if not rng_sites(p):
        return []
    return [
        "/* The rng-get-and-update-state counters of the run on this thread: two words (low first)",
        "   a call site, the instance's (or run_with's fresh ones). */",
        "static AOTC_THREAD_LOCAL uint64_t* aotc_rng_now;",
        "",
    ]


def source_prelude(p: Program) -> list[str]:
    """The host context of a run (which callbacks, the first failure), before the kernels."""
    calls = all_calls(p)
    if not calls:
        return _rng_prelude(p)
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
        *_rng_prelude(p),
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


def rng_wrapper(c: HostCall, site: int) -> list[str]:
    """The static function a kernel calls for one rng-get-and-update-state: the old value of
    its 128-bit counter (u64[2], low word first), then the counter grows by delta."""
    return [f"/* rng-get-and-update-state {c.hlo} (delta {c.delta}) */".replace("*/ */", "*/"),
            f"static void {c.cname}(void* r0) {{",
            f"    uint64_t* s = aotc_rng_now + {2 * site};",
            "    uint64_t* out = (uint64_t*)r0;",
            "    out[0] = s[0];",
            "    out[1] = s[1];",
            f"    s[0] += UINT64_C({c.delta});",
            f"    s[1] += s[0] < UINT64_C({c.delta});  /* the carry into the high word */",
            "}", ""]


def wrappers(p: Program) -> list[str]:
    calls = all_calls(p)
    channels = {SEND: _channels(calls, SEND), RECV: _channels(calls, RECV)}
    out: list[str] = []
    for c in calls:
        out += wrapper(c, p.name, channels)
    for k, c in enumerate(rng_sites(p)):
        out += rng_wrapper(c, k)
    return out


# ---------------------------------------------------------------- instance API

def instance_fields(p: Program) -> list[str]:
    sites = rng_sites(p)
    rng = [f"    uint64_t rng_state[{2 * len(sites)}];  /* rng-get-and-update-state counters, 2 words a site */"] \
        if sites else []
    calls = all_calls(p)
    if not calls:
        return rng
    ns, nr = max(len(_channels(calls, SEND)), 1), max(len(_channels(calls, RECV)), 1)
    return rng + ["    aotc_feed infeed, outfeed;  /* the application's callbacks (docs/custom_calls.md) */",
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


def rng_init(p: Program) -> list[str]:
    """In create: every counter at XLA's start."""
    n = len(rng_sites(p))
    if not n:
        return []
    return [f"    for (int k = 0; k < {n}; ++k) {{ m->rng_state[2 * k] = UINT64_C({RNG_START}); m->rng_state[2 * k + 1] = 0; }}"]


def rng_enter(p: Program) -> list[str]:
    """In run_checked: the counters of this run, the instance's, or fresh ones for run_with."""
    n = len(rng_sites(p))
    if not n:
        return []
    return [f"    uint64_t rng_fresh[{2 * n}];  /* run_with: every counter at its start, as an instance's first run */",
            f"    for (int k = 0; k < {n}; ++k) {{ rng_fresh[2 * k] = UINT64_C({RNG_START}); rng_fresh[2 * k + 1] = 0; }}",
            "    uint64_t* outer_rng = aotc_rng_now;",
            "    aotc_rng_now = m ? m->rng_state : rng_fresh;"]


def rng_leave(p: Program) -> list[str]:
    return ["    aotc_rng_now = outer_rng;"] if rng_sites(p) else []


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
