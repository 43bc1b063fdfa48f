"""The generated header: compile-time facts, the C API, and (with `cpp_class`)
a C++ wrapper class shaped like tfcompile's. Valid C99 and C++11; includes
only <stddef.h> and <stdint.h>.
"""
from __future__ import annotations

import re
from math import prod

from ..lower.program import Port, Program
from . import fat, host
from . import profile as prof
from .api import MAX_THREADS
from .common import banner, c_storage, macro
from .weights_file import weights_header


def _ports_macros(p: Program, M: str) -> list[str]:
    out = []
    for kind, ports in (("ARG", p.args), ("RESULT", p.results)):
        for i, port in enumerate(ports):
            out.append(f"#define {M}_{kind}{i}_BYTES {port.nbytes}u  /* {port.name}: "
                       f"{port.dtype.name}[{','.join(map(str, port.dims))}] */")
    return out


def _export_macro(M: str) -> list[str]:
    """`M_API`, written before every public function: nothing unless a Windows DLL is
    built (M_BUILD_DLL: dllexport) or used (M_USE_DLL: dllimport)."""
    return [f"/* {M}_API marks the public functions. Nothing is needed to link the object, a",
            f"   static library or an ELF/Mach-O shared library. A Windows DLL: compile this .c",
            f"   with -D{M}_BUILD_DLL (dllexport), and programs using the DLL with -D{M}_USE_DLL",
            f"   (dllimport). Defining {M}_API yourself overrides both. */",
            f"#ifndef {M}_API",
            "#if defined(_WIN32) || defined(__CYGWIN__)",
            f"#if defined({M}_BUILD_DLL)", f"#define {M}_API __declspec(dllexport)",
            f"#elif defined({M}_USE_DLL)", f"#define {M}_API __declspec(dllimport)",
            "#else", f"#define {M}_API", "#endif",
            f"#elif defined({M}_BUILD_DLL) && (defined(__GNUC__) || defined(__clang__))",
            f'#define {M}_API __attribute__((visibility("default")))',
            "#else", f"#define {M}_API", "#endif", "#endif"]


def _exported(lines: list[str], P: str, M: str) -> list[str]:
    """Every public function declaration (`T P_name(...);` at the start of a line) with M_API."""
    decl = re.compile(rf"^(?!typedef\b|enum\b|#|/\*)[A-Za-z_][\w ]*\*?\s*{P}_\w+\(.*\);")
    return [f"{M}_API {ln}" if decl.match(ln) else ln for ln in lines]


_TOKEN = re.compile(r"(?:: |[(,] )token(?=[,)])")  # a token parameter (`t: token`) or result in the signature


def _token_note(p: Program) -> list[str]:
    """Tokens in the signature have no buffer: say so beside the counts."""
    if not _TOKEN.search(p.signature_text):
        return []
    return ["/* The signature's tokens carry no data: they are no argument and no result here (the",
            "   counts above leave them out); the model orders its effects itself (docs/custom_calls.md). */"]


def _dynamic_note(p: Program) -> list[str]:
    """Results with a bounded dynamic dimension: where their real size is."""
    if not p.dynamic_results:
        return []
    lines = ["/* Results with a bounded dynamic dimension (`<=N` in the signature): after a run the",
             "   buffer, sized at the bound, holds the real-size array row-major at its start (as XLA",
             "   returns it) and zeros after; the s32 dims result named beside it holds the real",
             "   dimensions (each between 0 and its bound)."]
    lines += [f"     result {i} '{p.results[i].name}': real dims in result {j} '{p.results[j].name}'"
              for i, j in p.dynamic_results]
    lines[-1] += " */"
    return lines


def emit_header(p: Program, guard: str, profile: bool = False, fat_levels: fat.Levels = ()) -> str:
    P, M = p.name, macro(p)
    lines = [banner(p, "C API"), f"#ifndef {guard}", f"#define {guard}", "",
             "#include <stddef.h>", "#include <stdint.h>", "", *_export_macro(M), "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
             f"#define {M}_NUM_ARGS {len(p.args)}", f"#define {M}_NUM_RESULTS {len(p.results)}",
             f"#define {M}_NUM_VARIABLES {sum(a.is_variable for a in p.args)}",
             f"#define {M}_ARENA_BYTES {p.arena_bytes}u", f"#define {M}_ARENA_ALIGN 64u",
             f"#define {M}_MAX_THREADS {MAX_THREADS}",
             *_ports_macros(p, M), *_token_note(p), *_dynamic_note(p), "",
             "/* Return codes: every function returning int reports misuse with one of these,",
             "   never a crash (a NULL instance: ERR_NULL_INSTANCE). */",
             f"enum {{ {P}_OK = 0, {P}_ERR_NULL_ARG = 1, {P}_ERR_NULL_RESULT = 2, {P}_ERR_NO_ARENA = 3,",
             f"       {P}_ERR_MISALIGNED = 4, {P}_ERR_INDEX = 5, {P}_ERR_THREADS = 6, {P}_ERR_ALLOC = 7,",
             f"       {P}_ERR_NULL_INSTANCE = 8, {P}_ERR_ARENA_SIZE = 9, {P}_ERR_CANCELLED = 10 }};",
             "",
             "/* Who allocates what: everything; results and temporaries (the caller sets every",
             "   argument buffer); nothing (the caller also sets results and the arena). */",
             f"typedef enum {{ {P}_ALLOC_ALL = 0, {P}_ALLOC_RESULTS_AND_TEMPS = 1, {P}_ALLOC_NONE = 2 }} {P}_alloc_mode;",
             f"typedef struct {P}_instance {P}_instance;",
             "/* An application thread pool: run fn(ctx, begin, end) over [0, n) in chunks. */",
             f"typedef void (*{P}_parallel_for_fn)(void* user, int64_t n,",
             "                                    void (*fn)(void* ctx, int64_t begin, int64_t end), void* ctx);",
             "",
             f"{P}_instance* {P}_create({P}_alloc_mode mode);   /* NULL for an unknown mode or if allocation fails */",
             f"void {P}_destroy({P}_instance* m);",
             f"int {P}_run({P}_instance* m);                      /* {P}_OK or an error code */",
             f"const char* {P}_error_msg(const {P}_instance* m);  /* why the last call failed; \"\" if it did not */",
             f"int {P}_set_num_threads({P}_instance* m, int n);   /* 1 = run on the calling thread; at most {M}_MAX_THREADS */",
             f"int {P}_set_parallel_for({P}_instance* m, {P}_parallel_for_fn fn, void* user);",
             f"void* {P}_arg_data({P}_instance* m, int i);",
             f"int {P}_set_arg_data({P}_instance* m, int i, void* data);",
             f"void* {P}_result_data({P}_instance* m, int i);",
             f"int {P}_set_result_data({P}_instance* m, int i, void* data);",
             f"/* The caller's arena: 64-byte aligned, `bytes` at least {M}_ARENA_BYTES (checked); NULL unsets it. */",
             f"int {P}_set_arena({P}_instance* m, void* arena, size_t bytes);",
             "/* A run budget: a run stopped by either returns ERR_CANCELLED (results unspecified). Both are",
             "   checked between kernels and every 64 trips of a while loop. set_deadline: a later run may take",
             "   `ns` nanoseconds (0: no limit). cancel: from any thread, the run in progress (or else the",
             "   next) stops at its next check. */",
             f"int {P}_set_deadline({P}_instance* m, uint64_t ns);",
             f"int {P}_cancel({P}_instance* m);",
             f"int {P}_lookup_arg_index(const char* name);       /* -1 if there is none */",
             f"int {P}_lookup_result_index(const char* name);",
             "",
             "/* Introspection, no instance needed. Types are HLO names: \"f32\", \"bf16\", \"pred\", ... */",
             f"const char* {P}_arg_name(int i);", f"const char* {P}_arg_type(int i);",
             f"int {P}_arg_rank(int i);", f"const int64_t* {P}_arg_dims(int i);",
             f"size_t {P}_arg_bytes(int i);", f"int {P}_arg_is_variable(int i);",
             f"const char* {P}_result_name(int i);", f"const char* {P}_result_type(int i);",
             f"int {P}_result_rank(int i);", f"const int64_t* {P}_result_dims(int i);",
             f"size_t {P}_result_bytes(int i);", "",
             "/* Stateless entry: the caller owns every buffer (the arena: 64-byte aligned, arena_bytes at",
             "   least ARENA_BYTES, checked); runs on the calling thread. Safe to call concurrently with",
             "   distinct buffers. */",
             f"int {P}_run_with(void* const* args, void* const* results, void* arena, size_t arena_bytes);", "",
             *weights_header(p, M),
             "/* Typed accessors by name. */"]
    for i, a in enumerate(p.args):
        lines.append(f"{c_storage(a)}* {P}_arg_{a.name}_data({P}_instance* m);  /* arg {i} */")
    for i, r in enumerate(p.results):
        lines.append(f"{c_storage(r)}* {P}_result_{r.name}_data({P}_instance* m);  /* result {i} */")
    lines += prof.header_decls(p) if profile else []
    lines += fat.header_lines(P, M, fat_levels) if fat_levels else []
    lines = _exported(lines, P, M)
    lines += host.header_decls(p)
    lines += ["", "#ifdef __cplusplus", '}  /* extern "C" */', "#endif"]
    if p.cpp_class:
        lines += ["", _cpp_class(p)]
    lines += ["", f"#endif  /* {guard} */", ""]
    return "\n".join(lines)


def _accessors(P: str, kind: str, i: int, port: Port, label: str) -> list[str]:
    t = c_storage(port)
    out = [f"  {t}* {label}_data() {{ return static_cast<{t}*>({P}_{kind}_data(m_, {i})); }}",
           f"  const {t}* {label}_data() const {{ return static_cast<const {t}*>({P}_{kind}_data(m_, {i})); }}"]
    out.append(f"  void set_{label}_data(const void* data) {{ {P}_set_{kind}_data(m_, {i}, const_cast<void*>(data)); }}")
    dims = port.dims
    params = ", ".join(f"size_t dim{d}" for d in range(len(dims)))
    idx, stride = [], 1
    for d in range(len(dims) - 1, -1, -1):
        idx.append(f"dim{d}" if stride == 1 else f"dim{d} * {stride}u")
        stride *= dims[d]
    lin = " + ".join(reversed(idx)) if idx else "0"
    out.append(f"  {t}& {label}({params}) {{ return {label}_data()[{lin}]; }}")
    out.append(f"  const {t}& {label}({params}) const {{ return {label}_data()[{lin}]; }}")
    # as tfcompile: _size() in bytes, _count() in elements
    out.append(f"  static constexpr size_t {label}_size() {{ return {port.nbytes}u; }}")
    out.append(f"  static constexpr size_t {label}_count() {{ return {prod(dims)}u; }}")
    return out


def _cpp_class(p: Program) -> str:
    P = p.name
    parts = p.cpp_class.split("::")
    ns, cls = parts[:-1], parts[-1]
    L = ["#ifdef __cplusplus", *[f"namespace {n} {{" for n in ns], "",
         f"// C++ wrapper of {P}_*, shaped like tfcompile's generated class.",
         f"class {cls} {{", " public:",
         "  // tfcompile's names (aotc has no profiles); ARGS_VARIABLES_RESULTS_AND_TEMPS is kept",
         "  // as a synonym of the first.",
         "  enum class AllocMode {",
         "    ARGS_VARIABLES_RESULTS_PROFILES_AND_TEMPS = 0,  // the class allocates everything",
         "    RESULTS_PROFILES_AND_TEMPS_ONLY = 1,            // the caller sets every argument buffer",
         "    NONE = 2,                                       // the caller also sets results and the arena",
         "    ARGS_VARIABLES_RESULTS_AND_TEMPS = 0",
         "  };",
         f"  static constexpr size_t kNumArgs = {len(p.args)};",
         f"  static constexpr size_t kNumResults = {len(p.results)};",
         f"  static constexpr size_t kNumVariables = {sum(a.is_variable for a in p.args)};",
         f"  static constexpr size_t kArenaBytes = {p.arena_bytes};",
         f"  explicit {cls}(AllocMode mode = AllocMode::ARGS_VARIABLES_RESULTS_PROFILES_AND_TEMPS)",
         f"      : m_({P}_create(static_cast<{P}_alloc_mode>(static_cast<int>(mode)))) {{}}",
         f"  ~{cls}() {{ {P}_destroy(m_); }}",
         f"  {cls}(const {cls}&) = delete;",
         f"  {cls}& operator=(const {cls}&) = delete;",
         "  bool valid() const { return m_ != nullptr; }",
         f"  bool Run() {{ return {P}_run(m_) == {P}_OK; }}",
         f"  const char* error_msg() const {{ return {P}_error_msg(m_); }}",
         f"  bool set_num_threads(int n) {{ return {P}_set_num_threads(m_, n) == {P}_OK; }}",
         f"  bool set_arena(void* arena, size_t bytes) {{ return {P}_set_arena(m_, arena, bytes) == {P}_OK; }}",
         "  // tfcompile's set_thread_pool: an Eigen::ThreadPoolDevice, or any pool with its",
         "  // parallelFor(n, cost, f) that calls f(begin, end) over [0, n) and returns when done.",
         "  // The pool must outlive the runs; NULL returns to the calling thread.",
         "  template <typename Device>",
         "  bool set_thread_pool(const Device* device) {",
         f"    return {P}_set_parallel_for(m_, device ? &ParallelFor<Device> : nullptr,",
         "                               const_cast<void*>(static_cast<const void*>(device))) == " + f"{P}_OK;",
         "  }",
         *([f"  bool load_weights(const char* path) {{ return {P}_load_weights(m_, path) == {P}_OK; }}",
            f"  bool set_weights(const void* data, size_t size) {{ return {P}_set_weights(m_, data, size) == {P}_OK; }}"]
           if p.weights else []),
         f"  static int LookupArgIndex(const char* name) {{ return {P}_lookup_arg_index(name); }}",
         f"  static int LookupResultIndex(const char* name) {{ return {P}_lookup_result_index(name); }}",
         f"  void* arg_data(size_t i) {{ return {P}_arg_data(m_, static_cast<int>(i)); }}",
         f"  void set_arg_data(size_t i, const void* data) {{ {P}_set_arg_data(m_, static_cast<int>(i), const_cast<void*>(data)); }}",
         f"  void* result_data(size_t i) {{ return {P}_result_data(m_, static_cast<int>(i)); }}",
         f"  static size_t arg_size(size_t i) {{ return {P}_arg_bytes(static_cast<int>(i)); }}",
         f"  static size_t result_size(size_t i) {{ return {P}_result_bytes(static_cast<int>(i)); }}", ""]
    for i, a in enumerate(p.args):
        L += [f"  // arg {i}: {a.name} {a.dtype.name}[{','.join(map(str, a.dims))}]"]
        L += _accessors(P, "arg", i, a, f"arg{i}")
        L += _accessors(P, "arg", i, a, f"arg_{a.name}")
    for i, r in enumerate(p.results):
        L += [f"  // result {i}: {r.name} {r.dtype.name}[{','.join(map(str, r.dims))}]"]
        L += _accessors(P, "result", i, r, f"result{i}")
        L += _accessors(P, "result", i, r, f"result_{r.name}")
    L += ["", " private:",
          "  template <typename Device>",
          "  static void ParallelFor(void* user, int64_t n, void (*fn)(void* ctx, int64_t begin, int64_t end),",
          "                          void* ctx) {",
          "    // a high cost per index: the pool splits [0, n) into as many blocks as it has threads",
          "    static_cast<const Device*>(user)->parallelFor(",
          "        n, {1e6, 1e6, 1e6}, [fn, ctx](int64_t begin, int64_t end) { fn(ctx, begin, end); });",
          "  }",
          f"  {P}_instance* m_;", "};", "", *[f"}}  // namespace {n}" for n in reversed(ns)],
          "#endif  // __cplusplus"]
    return "\n".join(L)
