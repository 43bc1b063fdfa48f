"""The instance API of the generated .c: create/destroy, buffer setters and
accessors, checked run with a real error message, introspection tables and
the stateless entry. Formatting only.
"""
from __future__ import annotations

from ..lower.program import Port, Program
from . import host
from . import profile as prof
from .common import c_storage
from .weights_file import weights_c

MAX_THREADS = 256  # AOTC_MAX_THREADS of runtime_c/aotc_pool.h: the header's P_MAX_THREADS


def _table(P: str, kind: str, ports: tuple[Port, ...]) -> list[str]:
    n = max(len(ports), 1)
    def arr(ctype: str, name: str, vals: list[str]) -> str:
        return f"static const {ctype} {P}_{kind}_{name}_[{n}] = {{{', '.join(vals) or '0'}}};"
    out = []
    for i, p in enumerate(ports):
        dims = ", ".join(f"INT64_C({d})" for d in p.dims) or "0"
        out.append(f"static const int64_t {P}_{kind}{i}_dims_[{max(len(p.dims), 1)}] = {{{dims}}};")
    out += [
        arr("char* const", "names", [f'"{p.name}"' for p in ports]),
        arr("char* const", "types", [f'"{p.dtype.name}"' for p in ports]),
        arr("int", "ranks", [str(len(p.dims)) for p in ports]),
        arr("size_t", "bytes", [f"{p.nbytes}u" for p in ports]),
        arr("size_t", "align", [str(max(1, p.dtype.nbytes if p.dtype.kind != "complex" else p.dtype.nbytes // 2))
                                for p in ports]),
        f"static const int64_t* const {P}_{kind}_dims_[{n}] = {{"
        + (", ".join(f"{P}_{kind}{i}_dims_" for i in range(len(ports))) or "0") + "};",
    ]
    nargs = len(ports)
    out += [
        f"const char* {P}_{kind}_name(int i) {{ return i >= 0 && i < {nargs} ? {P}_{kind}_names_[i] : 0; }}",
        f"const char* {P}_{kind}_type(int i) {{ return i >= 0 && i < {nargs} ? {P}_{kind}_types_[i] : 0; }}",
        f"int {P}_{kind}_rank(int i) {{ return i >= 0 && i < {nargs} ? {P}_{kind}_ranks_[i] : -1; }}",
        f"const int64_t* {P}_{kind}_dims(int i) {{ return i >= 0 && i < {nargs} ? {P}_{kind}_dims_[i] : 0; }}",
        f"size_t {P}_{kind}_bytes(int i) {{ return i >= 0 && i < {nargs} ? {P}_{kind}_bytes_[i] : 0; }}",
        f"int {P}_lookup_{kind}_index(const char* name) {{",
        f"    for (int i = 0; name && i < {nargs}; ++i) if (strcmp(name, {P}_{kind}_names_[i]) == 0) return i;",
        "    return -1;", "}",
    ]
    if kind == "arg":
        out.append(arr("int", "variable", [str(int(p.is_variable)) for p in ports]))
        out.append(f"int {P}_arg_is_variable(int i) {{ return i >= 0 && i < {nargs} ? {P}_arg_variable_[i] : 0; }}")
    return out


def emit_api(p: Program, profile: bool = False, execute: str | None = None) -> str:
    """The instance API; a run calls `execute` (default `P_execute`; a fat file's dispatcher)."""
    P = p.name
    na, nr = len(p.args), len(p.results)
    nw = len(p.weights)
    hosted = bool(host.all_calls(p))  # calls into the application: a run always has a budget a failure spends
    NA, NR = max(na + nw, 1), max(nr, 1)  # weights (--weights file) follow the arguments
    L = ["/* ---------------------------------------------------------------- introspection */"]
    L += _table(P, "arg", p.args) + _table(P, "result", p.results)
    L += [
        "/* ---------------------------------------------------------------- instance */",
        f"struct {P}_instance {{",
        f"    void* args[{NA}];",
        f"    void* results[{NR}];",
        "    void* arena;",
        "    size_t arena_bytes;   /* what the arena holds: checked against ARENA_BYTES before a run */",
        f"    unsigned char owned_args[{NA}], owned_results[{NR}], owned_arena;",
        "    int threads;",
        "    aotc_pool* pool;      /* owned; created by set_num_threads */",
        "    aotc_par par;         /* the pool kernels use; par.fn == NULL: serial */",
        "    aotc__atomic_i64 cancel; /* set by P_cancel from any thread; cleared when a run returns ERR_CANCELLED */",
        "    uint64_t deadline_ns; /* each run's time limit; 0: none */",
        "    char error[160];",
        *(prof.instance_fields(p) if profile else []),
        *(["    void* owned_weights;  /* what load_weights read, 64-byte aligned */"] if nw else []),
        *host.instance_fields(p),
        "};",
        "",
        f"{P}_instance* {P}_create({P}_alloc_mode mode) {{",
        f"    if (mode != {P}_ALLOC_ALL && mode != {P}_ALLOC_RESULTS_AND_TEMPS && mode != {P}_ALLOC_NONE) return 0;",
        f"    {P}_instance* m = ({P}_instance*)calloc(1, sizeof(*m));",
        "    if (!m) return 0;",
        "    m->threads = 1;",
        "    aotc__ainit(&m->cancel, 0);",
        *host.rng_init(p),
        f"    if (mode == {P}_ALLOC_ALL)",
        f"        for (int i = 0; i < {na}; ++i) {{",
        f"            m->args[i] = aotc__alloc_zeroed({P}_arg_bytes_[i]);",
        "            m->owned_args[i] = 1;",
        f"            if (!m->args[i]) {{ {P}_destroy(m); return 0; }}",
        "        }",
        f"    if (mode != {P}_ALLOC_NONE) {{",
        f"        for (int i = 0; i < {nr}; ++i) {{",
        f"            m->results[i] = aotc__alloc_zeroed({P}_result_bytes_[i]);",
        "            m->owned_results[i] = 1;",
        f"            if (!m->results[i]) {{ {P}_destroy(m); return 0; }}",
        "        }",
        f"        m->arena = aotc__alloc_zeroed({p.arena_bytes}u);",
        f"        m->arena_bytes = {p.arena_bytes}u;",
        "        m->owned_arena = 1;",
        f"        if (!m->arena) {{ {P}_destroy(m); return 0; }}",
        "    }",
        "    return m;",
        "}",
        "",
        f"void {P}_destroy({P}_instance* m) {{",
        "    if (!m) return;",
        f"    for (int i = 0; i < {na}; ++i) if (m->owned_args[i]) AOTC_ALIGNED_FREE(m->args[i]);",
        f"    for (int i = 0; i < {nr}; ++i) if (m->owned_results[i]) AOTC_ALIGNED_FREE(m->results[i]);",
        "    if (m->owned_arena) AOTC_ALIGNED_FREE(m->arena);",
        "    aotc_pool_destroy(m->pool);",
        *(["    AOTC_ALIGNED_FREE(m->owned_weights);"] if nw else []),
        "    free(m);",
        "}",
        "",
        f"const char* {P}_error_msg(const {P}_instance* m) {{ return m ? m->error : \"no instance\"; }}",
        "",
        f"static int {P}_fail({P}_instance* m, int code, const char* what, const char* kind, int i, const char* name) {{",
        "    if (m) snprintf(m->error, sizeof m->error, what, kind, i, name ? name : \"?\");",
        "    return code;",
        "}",
        f"static int {P}_fail_msg({P}_instance* m, int code, const char* msg) {{",
        "    if (m) snprintf(m->error, sizeof m->error, \"%s\", msg);",
        "    return code;",
        "}",
        "",
        f"void* {P}_arg_data({P}_instance* m, int i) {{ return m && i >= 0 && i < {na} ? m->args[i] : 0; }}",
        f"void* {P}_result_data({P}_instance* m, int i) {{ return m && i >= 0 && i < {nr} ? m->results[i] : 0; }}",
        f"int {P}_set_arg_data({P}_instance* m, int i, void* data) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        f"    if (i < 0 || i >= {na}) return {P}_fail(m, {P}_ERR_INDEX, \"%s index %d out of range (%s)\", \"argument\", i, 0);",
        "    if (m->owned_args[i]) { AOTC_ALIGNED_FREE(m->args[i]); m->owned_args[i] = 0; }",
        "    m->args[i] = data;",
        f"    return {P}_OK;",
        "}",
        f"int {P}_set_result_data({P}_instance* m, int i, void* data) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        f"    if (i < 0 || i >= {nr}) return {P}_fail(m, {P}_ERR_INDEX, \"%s index %d out of range (%s)\", \"result\", i, 0);",
        "    if (m->owned_results[i]) { AOTC_ALIGNED_FREE(m->results[i]); m->owned_results[i] = 0; }",
        "    m->results[i] = data;",
        f"    return {P}_OK;",
        "}",
        f"int {P}_set_arena({P}_instance* m, void* arena, size_t bytes) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        *([f"    if (arena && bytes < {p.arena_bytes}u)",
           f"        return {P}_fail_msg(m, {P}_ERR_ARENA_SIZE, \"the arena is smaller than {p.arena_bytes} bytes\");"]
          if p.arena_bytes else []),
        f"    if ((uintptr_t)arena % 64u) return {P}_fail_msg(m, {P}_ERR_MISALIGNED, \"the arena is not 64-byte aligned\");",
        "    if (m->owned_arena) { AOTC_ALIGNED_FREE(m->arena); m->owned_arena = 0; }",
        "    m->arena = arena;",
        "    m->arena_bytes = arena ? bytes : 0;",
        f"    return {P}_OK;",
        "}",
        f"int {P}_set_num_threads({P}_instance* m, int n) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        f"    if (n < 1 || n > AOTC_MAX_THREADS)",
        f"        return {P}_fail(m, {P}_ERR_THREADS, \"%s count %d must be in [1, %s]\", \"thread\", n, \"{MAX_THREADS}\");",
        "    if (n == m->threads && (n == 1 || m->pool)) return " + f"{P}_OK;",
        "    aotc_pool_destroy(m->pool);",
        "    m->pool = 0;",
        "    m->par.fn = 0;",
        "    m->par.user = 0;",
        "    m->par.threads = 0;",
        "    m->threads = 1;",
        "    if (n > 1) {",
        "        m->pool = aotc_pool_create(n);",
        f"        if (!m->pool) return {P}_fail_msg(m, {P}_ERR_ALLOC, \"cannot start the thread pool\");",
        "        m->par.fn = aotc_pool_parallel_for_fn;",
        "        m->par.user = m->pool;",
        "        m->par.threads = n;",
        "    }",
        "    m->threads = n;",
        f"    return {P}_OK;",
        "}",
        f"int {P}_set_parallel_for({P}_instance* m, {P}_parallel_for_fn fn, void* user) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        "    aotc_pool_destroy(m->pool);  /* the application's pool replaces ours */",
        "    m->pool = 0;",
        "    m->par.fn = fn;",
        "    m->par.user = user;",
        "    m->par.threads = 0;",
        "    m->threads = fn ? 0 : 1;",
        f"    return {P}_OK;",
        "}",
        *host.api_functions(p),
        "",
        f"static int {P}_check({P}_instance* m, void* const* args, void* const* results, void* arena, size_t arena_bytes) {{",
        *([f"    if (!args) return {P}_fail_msg(m, {P}_ERR_NULL_ARG, \"no argument array\");"] if na else []),
        *([f"    if (!results) return {P}_fail_msg(m, {P}_ERR_NULL_RESULT, \"no result array\");"] if nr else []),
        f"    for (int i = 0; i < {na}; ++i) {{",
        f"        if (!args[i] && {P}_arg_bytes_[i]) return {P}_fail(m, {P}_ERR_NULL_ARG, \"%s %d (%s) has no buffer\", \"argument\", i, {P}_arg_names_[i]);",
        f"        if ((uintptr_t)args[i] % {P}_arg_align_[i]) return {P}_fail(m, {P}_ERR_MISALIGNED, \"%s %d (%s) is not aligned to its element size\", \"argument\", i, {P}_arg_names_[i]);",
        "    }",
        f"    for (int i = 0; i < {nr}; ++i) {{",
        f"        if (!results[i] && {P}_result_bytes_[i]) return {P}_fail(m, {P}_ERR_NULL_RESULT, \"%s %d (%s) has no buffer\", \"result\", i, {P}_result_names_[i]);",
        f"        if ((uintptr_t)results[i] % {P}_result_align_[i]) return {P}_fail(m, {P}_ERR_MISALIGNED, \"%s %d (%s) is not aligned to its element size\", \"result\", i, {P}_result_names_[i]);",
        "    }",
        *([f"    if (!arena) return {P}_fail_msg(m, {P}_ERR_NO_ARENA, \"no arena set: call {P}_set_arena or "
           "create the instance with an allocating mode\");"] if p.arena_bytes else []),
        f"    if ((uintptr_t)arena % 64u) return {P}_fail_msg(m, {P}_ERR_MISALIGNED, \"the arena is not 64-byte aligned\");",
        *([f"    if (arena_bytes < {p.arena_bytes}u) return {P}_fail_msg(m, {P}_ERR_ARENA_SIZE, \"the arena is smaller than {p.arena_bytes} bytes\");"]
          if p.arena_bytes else []),
        "    (void)args; (void)results; (void)arena_bytes;",
        f"    return {P}_OK;",
        "}",
        "",
        f"static int {P}_run_checked({P}_instance* m, void* const* args, void* const* results, void* arena,",
        "                           size_t arena_bytes, const aotc_par* par) {",
        f"    int rc = {P}_check(m, args, results, arena, arena_bytes);",
        "    if (rc) return rc;",
        "    aotc_fpenv env;",
        "    aotc_fpenv_enter(&env);",
        *host.run_enter(p),
        *host.rng_enter(p),
        f"    aotc_budget budget = {{m ? &m->cancel : {'&no_cancel' if hosted else '0'}, 0, 0}};",
        "    aotc_budget* outer = aotc_budget_now;",
        "    if (m && m->deadline_ns) {",
        "        uint64_t now = aotc_clock_ns();",
        "        budget.until_ns = m->deadline_ns > UINT64_MAX - now ? UINT64_MAX : now + m->deadline_ns;",
        "    }",
        f"    aotc_budget_now = {'&budget' if hosted else 'm ? &budget : 0'};",
        "    if (!aotc_budget_spent())",
        f"        {execute or P + '_execute'}(args, results, (unsigned char*)arena, par{prof.execute_arg(P) if profile else ''});",
        "    aotc_budget_now = outer;",
        *host.rng_leave(p),
        "    aotc_fpenv_leave(&env);",
        *host.run_leave(p),
        "    if (budget.spent) {",
        "        if (aotc__aexchange(&m->cancel, 0, seq_cst))",
        f"            return {P}_fail_msg(m, {P}_ERR_CANCELLED, \"the run was cancelled ({P}_cancel); results are unspecified\");",
        f"        return {P}_fail_msg(m, {P}_ERR_CANCELLED, \"the run exceeded its deadline ({P}_set_deadline); results are unspecified\");",
        "    }",
        f"    return {P}_OK;",
        "}",
        "",
        f"int {P}_run({P}_instance* m) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        "    m->error[0] = 0;",
        *([f"    if (!m->args[{na}]) return {P}_fail_msg(m, {P}_ERR_WEIGHTS, \"no weights set: call {P}_load_weights "
           f"or {P}_set_weights\");"] if nw else []),
        f"    return {P}_run_checked(m, m->args, m->results, m->arena, m->arena_bytes, m->par.fn ? &m->par : 0);",
        "}",
        "",
        f"int {P}_set_deadline({P}_instance* m, uint64_t ns) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        "    m->deadline_ns = ns;",
        f"    return {P}_OK;",
        "}",
        "",
        f"int {P}_cancel({P}_instance* m) {{",
        f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
        "    aotc__astore(&m->cancel, 1, seq_cst);",
        f"    return {P}_OK;",
        "}",
        "",
        f"int {P}_run_with(void* const* args, void* const* results, void* arena, size_t arena_bytes) {{",
        *([f"    (void)args; (void)results; (void)arena; (void)arena_bytes;",
           f"    return {P}_ERR_WEIGHTS;  /* the weights live in an instance */"] if nw else
          [f"    return {P}_run_checked(0, args, results, arena, arena_bytes, 0);"]),
        "}",
        *weights_c(p),
        "",
        "/* typed accessors */",
    ]
    for i, a in enumerate(p.args):
        t = c_storage(a)
        L.append(f"{t}* {P}_arg_{a.name}_data({P}_instance* m) {{ return ({t}*){P}_arg_data(m, {i}); }}")
    for i, r in enumerate(p.results):
        t = c_storage(r)
        L.append(f"{t}* {P}_result_{r.name}_data({P}_instance* m) {{ return ({t}*){P}_result_data(m, {i}); }}")
    L += prof.api_source(p) if profile else []
    return "\n".join(L) + "\n"
