"""The generated .c file: banner, embedded runtime, constants, scalar
functions, kernels, the execute function, and the instance API.

Prints a `Program`; interprets no HLO. Every symbol but the `<prefix>_*` API
is static, so several models link into one program.
"""
from __future__ import annotations

from collections import Counter

from ..errors import AotcError
from ..kernel import ir as K
from ..kernel.vectorize import SIMD
from ..lower.program import ConstArray, Program, Slot
from ..runtime_c import parts_called, runtime_source
from . import fat, host
from . import profile as prof
from .api import emit_api
from .common import banner
from .constants import Blob, ConstText, incbin_ok, incbin_text, join_parts
from .kernel_c import function, stmts

def _param_decl(s: Slot, written: bool) -> str:
    if s.place == "scratch":
        return f"void* {s.cname}"
    t = s.dtype.c_type
    if s.dtype.kind == "token":  # no data: every token pointer is the same one
        return f"{t}* {s.cname}" if written else f"const {t}* {s.cname}"
    return f"{t}* AOTC_RESTRICT {s.cname}" if written else f"const {t}* {s.cname}"


def _slot_pointer(s: Slot, bare: frozenset[str], table: tuple[str, dict[str, int]] | None = None) -> str:
    """The slot's pointer in an execute function; with `table` (a fat file), constants are
    read through the table of their addresses, which every level's object shares."""
    t = s.dtype.c_type
    if s.place == "const" and table is not None:
        return f"const {t}* const {s.cname} = (const {t}*){table[0]}[{table[1][s.const]}];"
    if s.place == "arg":
        return f"{t}* const {s.cname} = ({t}*)args[{s.offset}];"
    if s.place == "result":
        return f"{t}* const {s.cname} = ({t}*)results[{s.offset}];"
    if s.place == "const":
        return f"const {t}* const {s.cname} = {s.const}{'' if s.const in bare else '.v'};"
    if s.place == "alias" and s.offset:  # a range of its base (a concatenation's piece)
        return f"{t}* const {s.cname} = ({t}*)((unsigned char*){s.alias_of} + {s.offset});"
    if s.place == "alias":
        return f"{t}* const {s.cname} = ({t}*){s.alias_of};"
    if s.place == "scratch":
        return f"void* const {s.cname} = arena + {s.offset};"
    if s.place == "token":
        return f"{t}* const {s.cname} = &aotc_token;"
    return f"{t}* const {s.cname} = ({t}*)(arena + {s.offset});"


def _all_programs(p: Program) -> list[Program]:
    """Sub-programs first (callees before callers), each once, then `p`."""
    out: list[Program] = []
    seen: dict[str, Program] = {}

    def visit(q: Program) -> None:
        for sub in q.subprograms:
            visit(sub)
        if q.name not in seen:
            seen[q.name] = q
            out.append(q)
        assert seen[q.name] is q, f"two different programs named {q.name}"

    visit(p)
    return out


def _called(bodies, functions) -> set[str]:
    """Names the kernel bodies call, directly or through the functions they call: a reducer
    whose fold was written inline is not printed (clang's -Wunused-function)."""
    by_name = {f.name: f for f in functions}
    seen: set[str] = set()
    todo = [(b, ()) for b in bodies]
    while todo:
        body, results = todo.pop()
        exprs = [e for st in K.walk(body) for e in K.stmt_exprs(st)] + list(results)
        names = [st.fn for st in K.walk(body) if isinstance(st, K.CallStmt)]
        while exprs:
            e = exprs.pop()
            if isinstance(e, K.Call):
                names.append(e.fn)
            exprs.extend(K.children(e))
        for n in names:
            if n not in seen:
                seen.add(n)
                if n in by_name:
                    todo.append((by_name[n].body, by_name[n].results))
    return seen


def _vector_loops(programs) -> bool:
    """Whether a kernel or scalar function holds a loop printed in the SIMD vocabulary."""
    bodies = [k.body for q in programs for k in q.kernels] + [f.body for q in programs for f in q.functions]
    return any(isinstance(st, K.Loop) and SIMD in st.marks for b in bodies for st in K.walk(b))


_BUDGET = [
    "/* The budget of the run on this thread (NULL: none): a cancel flag any thread may set and",
    "   a deadline, read between kernels and every 64 trips of a while loop. Once spent it stays",
    "   spent: the run stops at its next check and returns P_ERR_CANCELLED. */",
    "typedef struct { aotc__atomic_i64* cancel; uint64_t until_ns; int spent; } aotc_budget;",
    "static AOTC_THREAD_LOCAL aotc_budget* aotc_budget_now;",
    "#if defined(_WIN32)",
    "static AOTC_UNUSED uint64_t aotc_clock_ns(void) {",
    "    LARGE_INTEGER t, f;",
    "    QueryPerformanceCounter(&t);",
    "    QueryPerformanceFrequency(&f);",
    "    return (uint64_t)((double)t.QuadPart * (1e9 / (double)f.QuadPart));",
    "}",
    "#else",
    "static AOTC_UNUSED uint64_t aotc_clock_ns(void) {",
    "    struct timespec t;",
    "    clock_gettime(CLOCK_MONOTONIC, &t);",
    "    return (uint64_t)t.tv_sec * UINT64_C(1000000000) + (uint64_t)t.tv_nsec;",
    "}",
    "#endif",
    "static AOTC_UNUSED int aotc_budget_spent(void) {",
    "    aotc_budget* b = aotc_budget_now;",
    "    if (!b) return 0;",
    "    if (!b->spent && (aotc__aload(b->cancel, relaxed)",
    "                      || (b->until_ns && aotc_clock_ns() >= b->until_ns)))",
    "        b->spent = 1;",
    "    return b->spent;",
    "}",
]


def _emit_kernels(p: Program, out: list[str]) -> None:
    slots = {s.cname: s for s in p.slots}
    for k in p.kernels:
        prov = list(k.provenance)
        shown = ", ".join(prov[:8]) + (f", ... ({len(prov)} instructions)" if len(prov) > 8 else "")
        decls = [_param_decl(slots[c], w) for c, w in k.params] + (["int64_t lo", "int64_t hi"] if k.outer else [])
        decls += ["const aotc_par* par"] if k.takes_pool else []
        body = stmts(k.body)
        unused = [f"    (void){c};" for c, w in k.params if not any(c in line for line in body)]
        out.append(f"/* HLO: {shown} */".replace("*/ */", "*/"))
        out.append(f"static void {k.cname}({', '.join(decls) or 'void'}) {{")
        out.extend(unused + body)
        out.append("}\n")
        if _threaded(k):
            _emit_range_trampoline(k, slots, out)


def _emit_range_trampoline(k, slots, out: list[str]) -> None:
    """The kernel's arguments as a struct, and the range function a thread pool calls;
    it enters the FP environment itself, since an application's pool threads do not."""
    fields = [_param_decl(slots[c], w).replace(" AOTC_RESTRICT", "") + ";" for c, w in k.params]
    out.append(f"typedef struct {{ {' '.join(fields) or 'int unused;'} }} {k.cname}_args;")
    call = ", ".join([f"a->{c}" for c, _ in k.params] + ["lo", "hi"])
    out += [f"static void {k.cname}_range(void* ctx, int64_t lo, int64_t hi) {{",
            f"    const {k.cname}_args* a = (const {k.cname}_args*)ctx;",
            "    aotc_fpenv env;",
            "    aotc_fpenv_enter(&env);",
            f"    {k.cname}({call});",
            "    aotc_fpenv_leave(&env);",
            "}", ""]


def _emit_call(k, out: list[str]) -> None:
    args = ", ".join([c for c, _ in k.params] + (["par"] if k.takes_pool else []))
    if not k.outer:
        out.append(f"    {k.cname}({args});")
        return
    serial = f"{k.cname}({args}{', ' if args else ''}0, {k.outer});"
    if not _threaded(k):
        out.append(f"    {serial}")
        return
    init = ", ".join(c for c, _ in k.params) or "0"
    out += ["    if (par) {",
            f"        {k.cname}_args a = {{{init}}};",
            f"        par->fn(par->user, {k.outer}, {k.cname}_range, &a);",
            "    } else {",
            f"        {serial}",
            "    }"]


def _emit_checked_call(k, out: list[str]) -> None:
    """The kernel's call, then the run budget's check (a spent budget ends the run)."""
    _emit_call(k, out)
    out.append("    if (aotc_budget_spent()) return;")


def _threaded(k) -> bool:
    """Whether a pool may split this kernel's outermost loop (lowering decided)."""
    return k.parallel


def _emit_execute(p: Program, out: list[str], bare: frozenset[str] = frozenset(), profile: bool = False,
                  checks: bool = True, table: tuple[str, dict[str, int]] | None = None) -> None:
    """The run function of `p`; with `checks`, the run budget is checked between kernels (a
    sub-program's kernels are not: a loop's trips are checked where the loop runs them)."""
    out.append(f"static void {p.name}_execute(void* const* args, void* const* results, unsigned char* arena,")
    out.append(f"                            const aotc_par* par{prof.execute_param() if profile else ''}) {{")
    needed = {c for k in p.kernels for c, _ in k.params}
    for s in p.slots:  # aliases need their base pointer
        if s.cname in needed and s.alias_of:
            needed.add(s.alias_of)
    order = sorted((s for s in p.slots if s.cname in needed), key=lambda s: (s.place == "alias", s.cname))
    out += ["    " + _slot_pointer(s, bare, table) for s in order]
    out += ["    (void)args;", "    (void)results;", "    (void)arena;", "    (void)par;"]
    if profile:
        out += ["    (void)prof;", *prof.timed_calls(p, _emit_checked_call)]
    else:
        for i, k in enumerate(p.kernels):
            _emit_call(k, out)
            if checks and i + 1 < len(p.kernels):
                out.append("    if (aotc_budget_spent()) return;")
    out += ["}", ""]


def _merge(items, kind: str) -> dict[str, str]:
    """Definitions keyed by C name. Programs may share one (a reducer both the main program
    and a sub-program call), but then its text must be the same: none is ever dropped."""
    out: dict[str, str] = {}
    for cname, text in items:
        assert out.setdefault(cname, text) == text, f"two different {kind}s named {cname}"
    return out


def _assert_unique(names: list[str], kind: str) -> None:
    dup = sorted(n for n, k in Counter(names).items() if k > 1)
    assert not dup, f"{kind} C names defined twice: {', '.join(dup)}"


def emit_source(p: Program, header_name: str, profile: bool = False) -> str:
    """The whole .c as one string, constants as C arrays (for small programs and tests)."""
    parts, _ = emit_source_parts(p, header_name, profile=profile)
    return join_parts(parts)


def emit_source_parts(p: Program, header_name: str, encoding: str = "array",
                      profile: bool = False, fat_levels: fat.Levels = ()) -> tuple[list, Blob | None]:
    """The .c as text pieces and constants to stream (`constants.write_parts`), and with
    `incbin` the blob its constants are in (`Blob.write` writes it beside the .c). With
    `fat_levels` the file is a fat one (`fat.py`): a level's object (AOTC_FAT_LEVEL) holds
    the runtime and the kernels only, and reads the constants of the plain object."""
    programs = _all_programs(p)
    if fat_levels and profile:
        raise AotcError("--profile is not available for a fat target (x86_64-fat): profile one level, "
                        "e.g. --target x86_64 or --target native")
    if fat_levels and any(q.host_calls for q in programs):
        raise AotcError("a model with calls into the application (custom calls, infeed, outfeed, send, recv) "
                        "cannot be built for a fat target (x86_64-fat) yet; use --target x86_64 or native")
    out = [banner(p, "C implementation"), "#ifndef _POSIX_C_SOURCE", "#define _POSIX_C_SOURCE 200809L", "#endif",
           "#if defined(__linux__) && !defined(_DEFAULT_SOURCE)",
           "#define _DEFAULT_SOURCE  /* madvise, for huge pages under large buffers */", "#endif",
           f'#include "{header_name}"', "",
           "#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>",
           "#include <string.h>", "#include <time.h>", "",
           *(fat.prologue(fat_levels) if fat_levels else []),
           "/* ---------------------------------------------------------------- runtime */",
           runtime_source(parts_called(_called([k.body for q in programs for k in q.kernels],
                                                 [f for q in programs for f in q.functions]),
                                         bool(fat_levels) or _vector_loops(programs))), "",
           "/* ---------------------------------------------------------------- constants */"]
    consts = [c for q in programs for c in q.constants]
    in_blob = [c for c in consts if encoding == "incbin" and incbin_ok(c)]
    blob = Blob.of(in_blob) if in_blob else None
    parts: list = ["\n".join(out) + "\n"]
    parts += ["#if !defined(AOTC_FAT_LEVEL)  /* the constants: in the plain object only */\n"] if fat_levels else []
    blobbed = {id(c) for c in in_blob}
    for c in consts:
        if id(c) not in blobbed:
            parts += [ConstText(c, "array" if encoding == "incbin" else encoding), "\n"]
    if blob is not None:
        parts += [incbin_text(blob, p.name), "\n"]
    bare = frozenset(c.cname for c in in_blob)
    table = (fat.table_name(p), fat.const_index(consts)) if fat_levels else None
    out = ["#endif", *fat.table(p, consts, bare)] if fat_levels else []
    out += ["/* A thread pool as kernels see it: run fn over [0, n) in chunks (NULL: serial);",
            " * threads: the built-in pool's size, 0 for an application's pool. */",
            "typedef struct { aotc_parallel_for_fn fn; void* user; int threads; } aotc_par;", "",
            *_BUDGET, "", *host.source_prelude(p),
            *(["static AOTC_UNUSED uint8_t aotc_token;  /* what a token pointer points to: tokens hold no data */", ""]
              if any(s.place == "token" for q in programs for s in q.slots) else []),
            "/* ---------------------------------------------------------------- scalar functions */"]
    called = _called([k.body for q in programs for k in q.kernels], [f for q in programs for f in q.functions])
    fns = _merge(((f.name, function(f)) for q in programs for f in q.functions if f.name in called), "scalar function")
    out += list(fns.values())
    _assert_unique([k.cname for q in programs for k in q.kernels] + [q.name for q in programs]
                   + [c.cname for c in consts] + list(fns), "file-scope")
    for q in programs:
        _assert_unique([s.cname for s in q.slots], f"{q.name} slot")
    if p.host_calls or any(q.host_calls for q in programs):
        title = "calls into the application" if host.all_calls(p) else "rng-get-and-update-state counters"
        out += [f"/* ---------------------------------------------------------------- {title} */"]
        out += host.wrappers(p)
    for q in programs:
        title = "kernels" if q is p else f"sub-program {q.name} {q.signature_text}"
        out += [f"/* ---------------------------------------------------------------- {title} */"]
        _emit_kernels(q, out)
        if q is not p:
            _emit_execute(q, out, bare, checks=False, table=table)
    out += prof.clock_source() if profile else []
    out += ["/* ---------------------------------------------------------------- entry */"]
    _emit_execute(p, out, bare, profile, table=table)
    if fat_levels:
        out += ["#if defined(AOTC_FAT_LEVEL)", *fat.level_entry(p), "#else", *fat.dispatcher(p, fat_levels),
                emit_api(p, profile, execute=f"{p.name}_fat_execute"), "#endif /* AOTC_FAT_LEVEL */"]
    else:
        out += [emit_api(p, profile)]
    parts.append("\n".join(out))
    return parts, blob


def describe_program(p: Program) -> str:
    """A `Program` for `--dump-after program`: signature, arena, slots, and each kernel's IR
    (printed as C, every loop with its marks), sub-programs first."""
    out: list[str] = []
    for q in _all_programs(p):
        out.append(f"program {q.name} {q.signature_text}  arena {q.arena_bytes} bytes, peak {q.peak_bytes}")
        for s in q.slots:
            where = f"@{s.offset}" if s.place in ("arena", "scratch") else s.place
            out.append(f"  slot {s.cname}: {s.dtype.name}[{','.join(map(str, s.dims))}] {where} live {s.live[0]}-{s.live[1]}"
                       f" ({s.hlo})")
        for k in q.kernels:
            threads = f", threads over [0, {k.outer})" if k.parallel else ""
            out.append(f"  kernel {k.cname} ({', '.join(k.provenance)}){threads}")
            out.extend(stmts(k.body, 2, marks=True))
    return "\n".join(out) + "\n"
