"""`PREFIX_benchmark.c`: a standalone program that times `P_run` on deterministic
pseudo-random inputs (warm-up runs, then timed runs on a monotonic clock) and prints
min/median/max in microseconds; with `--profile` it also prints the kernel table.
Formatting only; it uses the public API of the header.
"""
from __future__ import annotations

from ..lower.program import Port, Program
from .programs import c_string, load_weights_lines, program_prologue, weights_name

# per element type: the fill function of the program (values are small and exact in the type)
_FILL = {"f16": "fill_f16", "bf16": "fill_bf16", "f32": "fill_f32", "f64": "fill_f64", "c64": "fill_f32",
         "c128": "fill_f64", "pred": "fill_pred"}

_FILL_SOURCE = {
    "fill_f64": """static void fill_f64(void* p, size_t n, uint64_t* s) {
    for (size_t i = 0; i < n; ++i) { double v = rng_unit(s); memcpy((char*)p + 8 * i, &v, 8); }
}""",
    "fill_f32": """static void fill_f32(void* p, size_t n, uint64_t* s) {
    for (size_t i = 0; i < n; ++i) { float v = (float)rng_unit(s); memcpy((char*)p + 4 * i, &v, 4); }
}""",
    "fill_bf16": """static void fill_bf16(void* p, size_t n, uint64_t* s) {  /* +-[0.5, 1) */
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rng_next(s);
        uint16_t h = (uint16_t)(0x3f00u | (r & 0x7fu) | (r & 0x100u ? 0x8000u : 0u));
        memcpy((char*)p + 2 * i, &h, 2);
    }
}""",
    "fill_f16": """static void fill_f16(void* p, size_t n, uint64_t* s) {  /* +-[0.5, 1) */
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rng_next(s);
        uint16_t h = (uint16_t)(0x3800u | (r & 0x3ffu) | (r & 0x400u ? 0x8000u : 0u));
        memcpy((char*)p + 2 * i, &h, 2);
    }
}""",
    "fill_pred": """static void fill_pred(void* p, size_t n, uint64_t* s) {
    for (size_t i = 0; i < n; ++i) ((unsigned char*)p)[i] = (unsigned char)(rng_next(s) & 1u);
}""",
    "fill_int": """static void fill_int(void* p, size_t n, size_t width, uint64_t* s) {  /* 0..3: valid as indices too */
    for (size_t i = 0; i < n; ++i) {
        uint64_t v = rng_next(s) & 3u;
        char* q = (char*)p + width * i;
        if (width == 1) { uint8_t x = (uint8_t)v; memcpy(q, &x, 1); }
        else if (width == 2) { uint16_t x = (uint16_t)v; memcpy(q, &x, 2); }
        else if (width == 4) { uint32_t x = (uint32_t)v; memcpy(q, &x, 4); }
        else memcpy(q, &v, 8);
    }
}""",
}

_RNG = """static uint64_t rng_next(uint64_t* s) {  /* xorshift64*: the same inputs on every run */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}"""

_BENCH_RUNTIME = r"""
static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

static long option(const char* prog, const char* flag, const char* text, long lo, long hi) {
    char* end = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || !*text || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s needs a number in [%ld, %ld]\n", prog, flag, lo, hi);
        exit(2);
    }
    return v;
}
"""


def _fill(i: int, port: Port, P: str) -> str:
    n = port.nbytes // port.dtype.nbytes * (2 if port.dtype.kind == "complex" else 1)
    fn = _FILL.get(port.dtype.name)
    if fn is None:  # integers
        return f"    fill_int({P}_arg_data(m, {i}), {n}u, {port.dtype.nbytes}u, &seed);"
    return f"    {fn}({P}_arg_data(m, {i}), {n}u, &seed);"


def _profile_report(P: str) -> list[str]:
    return ["",
            "/* The kernels by time, as aotc bench --profile prints them. */",
            f"static void print_profile({P}_instance* m, long iters) {{",
            f"    int n = {P}_profile_count();",
            "    if (n <= 0) return;",
            f"    {P}_profile_row* rows = ({P}_profile_row*)calloc((size_t)n, sizeof *rows);",
            "    if (!rows) return;",
            "    uint64_t total = 0;",
            "    for (int i = 0; i < n; ++i) {",
            f"        {P}_profile_entry(m, i, &rows[i]);",
            "        total += rows[i].total_ns;",
            "    }",
            "    for (int i = 1; i < n; ++i)  /* by time, largest first (insertion sort: stable) */",
            f"        for (int j = i; j > 0 && rows[j].total_ns > rows[j - 1].total_ns; --j) {{",
            f"            {P}_profile_row t = rows[j]; rows[j] = rows[j - 1]; rows[j - 1] = t;",
            "        }",
            '    printf("\\n%-32s %7s %12s %9s %9s  %s\\n", "kernel", "share", "us/run", "GFLOP/s", "GB/s", "HLO");',
            "    for (int i = 0; i < n; ++i) {",
            "        double ns = (double)rows[i].total_ns, calls = (double)(rows[i].calls ? rows[i].calls : 1);",
            "        double per = ns / calls;",
            "        printf(\"%-32s %6.2f%% %12.3f %9.3f %9.3f  %s\\n\", rows[i].kernel, total ? 100.0 * ns / (double)total : 0.0,",
            "               ns / 1e3 / (double)iters, per > 0 ? (double)rows[i].flops / per : 0.0,",
            "               per > 0 ? (double)rows[i].bytes / per : 0.0, rows[i].hlo);",
            "    }",
            "    free(rows);",
            "}"]


def emit_bench_program(p: Program, header_name: str, profile: bool = False) -> str:
    P = p.name
    wname = weights_name(header_name)
    w_usage = " [-W WEIGHTS]" if p.weights else ""
    usage = ["", "Times the model on deterministic pseudo-random inputs: WARMUP runs, then ITERS timed",
             "runs (a monotonic clock around each run), and prints min, median and max in microseconds.",
             f"usage: {P}_benchmark [-i ITERS] [-w WARMUP] [-t THREADS]{w_usage}   (defaults: 100, 10, 1)",
             *([f"WEIGHTS: the weights file to load (default: {wname} in the current directory)"]
               if p.weights else []),
             "exit status: 0 ok, 1 the model failed" + (" or its weights did not load" if p.weights else "")
             + ", 2 usage"]
    out = program_prologue(p, header_name, "Benchmark program", usage)
    out.append(_BENCH_RUNTIME)
    used = sorted({_FILL.get(a.dtype.name, "fill_int") for a in p.args if a.nbytes})
    out += [_RNG] if used else []
    if any(f in ("fill_f32", "fill_f64") for f in used):
        out.append("/* floats in [-1, 1) with 16 random bits: exact in every float type */")
        out.append("static double rng_unit(uint64_t* s) { return ((double)(rng_next(s) >> 48) - 32768.0) / 32768.0; }")
    out += [_FILL_SOURCE[f] for f in used]
    if profile:
        out += _profile_report(P)
    usage_line = f'"usage: %s [-i ITERS] [-w WARMUP] [-t THREADS]{w_usage}\\n"'
    out += ["",
            "int main(int argc, char** argv) {",
            "    long iters = 100, warmup = 10, threads = 1;",
            *([f"    const char* weights = {c_string(wname)};"] if p.weights else []),
            "    for (int a = 1; a < argc; ++a) {",
            "        const char* next = a + 1 < argc ? argv[a + 1] : 0;",
            '        if (strcmp(argv[a], "-i") == 0 || strcmp(argv[a], "--iters") == 0)',
            '            iters = option(argv[0], argv[a], next, 1, 100000000), ++a;',
            '        else if (strcmp(argv[a], "-w") == 0 || strcmp(argv[a], "--warmup") == 0)',
            '            warmup = option(argv[0], argv[a], next, 0, 100000000), ++a;',
            '        else if (strcmp(argv[a], "-t") == 0 || strcmp(argv[a], "--threads") == 0)',
            f'            threads = option(argv[0], argv[a], next, 1, {P.upper()}_MAX_THREADS), ++a;',
            *(['        else if ((strcmp(argv[a], "-W") == 0 || strcmp(argv[a], "--weights") == 0) && next)',
               "            weights = next, ++a;"] if p.weights else []),
            '        else if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {',
            f"            printf({usage_line}, argv[0]);",
            "            return 0;",
            "        } else {",
            f"            fprintf(stderr, {usage_line}, argv[0]);",
            "            return 2;",
            "        }",
            "    }",
            f"    {P}_instance* m = {P}_create({P}_ALLOC_ALL);",
            "    uint64_t* ns = (uint64_t*)calloc((size_t)iters, sizeof *ns);",
            "    if (!m || !ns) {",
            '        fprintf(stderr, "%s: out of memory\\n", argv[0]);',
            "        return 1;",
            "    }",
            *load_weights_lines(p, "argv[0]", 1, ["free(ns);", f"{P}_destroy(m);"]),
            "    uint64_t seed = UINT64_C(0x9e3779b97f4a7c15);",
            "    (void)seed;",
            *[_fill(i, a, P) for i, a in enumerate(p.args) if a.nbytes],
            f"    int rc = {P}_set_num_threads(m, (int)threads);",
            f"    for (long i = 0; i < warmup && rc == {P}_OK; ++i) rc = {P}_run(m);",
            *([f"    {P}_profile_reset(m);"] if profile else []),
            f"    for (long i = 0; i < iters && rc == {P}_OK; ++i) {{",
            "        uint64_t t0 = now_ns();",
            f"        rc = {P}_run(m);",
            "        ns[i] = now_ns() - t0;",
            "    }",
            f"    if (rc != {P}_OK) {{",
            f'        fprintf(stderr, "%s: the model failed (error %d): %s\\n", argv[0], rc, {P}_error_msg(m));',
            "        return 1;",
            "    }",
            "    qsort(ns, (size_t)iters, sizeof *ns, cmp_u64);",
            "    double median = iters % 2 ? (double)ns[iters / 2] : 0.5 * ((double)ns[iters / 2 - 1] + (double)ns[iters / 2]);",
            f'    printf("model {P}: %ld timed runs after %ld warm-up runs, %ld thread(s)\\n", iters, warmup, threads);',
            '    printf("%12s %12s %12s\\n", "min_us", "median_us", "max_us");',
            '    printf("%12.3f %12.3f %12.3f\\n", (double)ns[0] / 1e3, median / 1e3, (double)ns[iters - 1] / 1e3);',
            *(["    print_profile(m, iters);"] if profile else []),
            "    free(ns);",
            f"    {P}_destroy(m);",
            "    return 0;",
            "}", ""]
    return "\n".join(out)
