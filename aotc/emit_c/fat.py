"""The parts of a fat `.c` (targets with run-time ISA levels, `targets.FAT_LEVELS`): the table
of constants every level reads, each level's entry point, and the CPUID dispatcher with its
`P_isa`/`P_set_isa` API. The same file is compiled once plainly (the API, the constants and
the baseline kernels) and once per level with `-DAOTC_FAT_LEVEL=N` and that level's `-march`
(only the kernels); it decides nothing about what the kernels compute, which is the same
text at every level.
"""
from __future__ import annotations

from ..lower.program import ConstArray, Program

Levels = tuple[tuple[int, str], ...]  # (AOTC_FAT_LEVEL, -march name), as Target.fat_levels

# CPUID bits of each level beyond the one below it (the x86-64 psABI levels; the -march the
# level is compiled with may use any of them): (leaf, subleaf, register, bit, name).
_V2 = ((1, 0, "c", 0, "sse3"), (1, 0, "c", 9, "ssse3"), (1, 0, "c", 13, "cx16"),
       (1, 0, "c", 19, "sse4.1"), (1, 0, "c", 20, "sse4.2"), (1, 0, "c", 23, "popcnt"))
_V3 = ((1, 0, "c", 12, "fma"), (1, 0, "c", 22, "movbe"), (1, 0, "c", 28, "avx"), (1, 0, "c", 29, "f16c"),
       (7, 0, "b", 3, "bmi1"), (7, 0, "b", 5, "avx2"), (7, 0, "b", 8, "bmi2"), (0x80000001, 0, "c", 5, "lzcnt"))
_V4 = ((7, 0, "b", 16, "avx512f"), (7, 0, "b", 17, "avx512dq"), (7, 0, "b", 28, "avx512cd"),
       (7, 0, "b", 30, "avx512bw"), (7, 0, "b", 31, "avx512vl"))
_LEVEL_BITS = {3: _V2 + _V3, 4: _V2 + _V3 + _V4}
# XCR0 state the OS saves on a context switch, per level: SSE and AVX (ymm); plus opmask and
# the upper zmm halves and registers
_XCR0 = {3: 0x6, 4: 0xE6}
# what each level requires the compiler to have enabled, checked when the level is compiled
_LEVEL_MACROS = {3: ("__AVX2__", "__FMA__"), 4: ("__AVX2__", "__FMA__", "__AVX512F__")}


def table_name(p: Program) -> str:
    return f"{p.name}_fat_consts_"


def const_index(consts: list[ConstArray]) -> dict[str, int]:
    """Each constant's position in the table (first occurrence of a name)."""
    out: dict[str, int] = {}
    for c in consts:
        out.setdefault(c.cname, len(out))
    return out


def prologue(levels: Levels) -> list[str]:
    """Checks and macros ahead of the runtime: a level is compiled with its ISA, and only by
    gcc or clang for x86-64 (the dispatcher reads CPUID with inline assembly)."""
    out = ["/* A fat file: compile it once as it is (-march=x86-64, the baseline), and once per level",
           "   below with -DAOTC_FAT_LEVEL=N and that level's -march (only its kernels), then link all:",
           *[f"     level {n}: -DAOTC_FAT_LEVEL={n} -march={m}" for n, m in levels],
           "   The model runs the highest level this CPU and its OS support (CPUID, XGETBV); P_set_isa",
           "   forces one. Every level computes the same bits. */",
           "#if !(defined(__GNUC__) || defined(__clang__)) || !defined(__x86_64__) || defined(_WIN32)",
           '#error "a fat aotc model (x86_64-fat) is built by gcc or clang for x86-64 Linux or macOS"',
           "#endif",
           "#if defined(AOTC_SIMD_SCALAR)",
           '#error "a fat aotc model chooses its SIMD code per level: do not define AOTC_SIMD_SCALAR"',
           "#endif"]
    for n, _ in levels:
        need = " && ".join(f"defined({m})" for m in _LEVEL_MACROS[n])
        out += [f"#if defined(AOTC_FAT_LEVEL) && AOTC_FAT_LEVEL == {n} && !({need})",
                f'#error "AOTC_FAT_LEVEL={n} is compiled with -march={dict(levels)[n]}"', "#endif"]
    known = " && ".join(f"AOTC_FAT_LEVEL != {n}" for n, _ in levels)
    out += [f"#if defined(AOTC_FAT_LEVEL) && {known}", '#error "unknown AOTC_FAT_LEVEL"', "#endif",
            "#define AOTC_FAT_HIDDEN __attribute__((visibility(\"hidden\")))",
            "#define AOTC_GEMM_SAME_ORDER 1 /* every level's GEMM sums as the AVX2 kernels do */", ""]
    return out


def table(p: Program, consts: list[ConstArray], bare: frozenset[str]) -> list[str]:
    """The constants' addresses, for the level objects (defined in the plain object only)."""
    T = table_name(p)
    seen = const_index(consts)
    items = [f"(const void*){c}{'' if c in bare else '.v'}" for c in seen] or ["0"]
    return ["/* The constants' addresses: every level's kernels read the one copy through it. */",
            "#if !defined(AOTC_FAT_LEVEL)",
            f"extern AOTC_FAT_HIDDEN const void* const {T}[{len(items)}];",
            f"const void* const {T}[{len(items)}] = {{{', '.join(items)}}};",
            "#else",
            f"extern AOTC_FAT_HIDDEN const void* const {T}[{len(items)}];",
            "#endif", ""]


def _entry_decl(P: str, n: int | str) -> str:
    return (f"void {P}_fat_execute_v{n}(void* const* args, void* const* results, unsigned char* arena, "
            f"const aotc_par* par, aotc_budget* budget)")


def level_entry(p: Program) -> list[str]:
    """A level object's one external function: the entry program under the caller's budget."""
    P = p.name
    return ["/* ---------------------------------------------------------------- this level's entry */",
            "#define AOTC_FAT_CAT_(a, b) a##b",
            "#define AOTC_FAT_CAT(a, b) AOTC_FAT_CAT_(a, b)",
            f"#define {P}_fat_execute_this AOTC_FAT_CAT({P}_fat_execute_v, AOTC_FAT_LEVEL)",
            f"AOTC_FAT_HIDDEN {_entry_decl(P, 'X').replace(f'{P}_fat_execute_vX', f'{P}_fat_execute_this')};",
            _entry_decl(P, "X").replace(f"{P}_fat_execute_vX", f"{P}_fat_execute_this") + " {",
            "    aotc_budget* outer = aotc_budget_now;",
            "    aotc_budget_now = budget;",
            f"    {P}_execute(args, results, arena, par);",
            "    aotc_budget_now = outer;",
            "}", ""]


def _bits_test(bits) -> str:
    regs = {(1, 0): "l1", (7, 0): "l7", (0x80000001, 0): "e1"}
    terms = []
    for leaf, sub, reg, bit, name in bits:
        terms.append(f"(({regs[(leaf, sub)]}[{'abcd'.index(reg)}] >> {bit}) & 1u) /* {name} */")
    return "\n            && ".join(terms)


def dispatcher(p: Program, levels: Levels) -> list[str]:
    """The level choice (once per process, an atomic: any thread may detect it first, all find
    the same) and `P_fat_execute`, which the run calls instead of `P_execute`."""
    P = p.name
    out = ["/* ---------------------------------------------------------------- ISA levels */"]
    out += [f"AOTC_FAT_HIDDEN {_entry_decl(P, n)};" for n, _ in levels]
    out += [f"static void {P}_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {{",
            '    __asm__ __volatile__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));',
            "}",
            "/* The highest level this CPU runs and its OS saves the registers of (XCR0), else 1. */",
            f"static int {P}_isa_detect(void) {{",
            "    uint32_t l0[4], l1[4] = {0, 0, 0, 0}, l7[4] = {0, 0, 0, 0}, e0[4], e1[4] = {0, 0, 0, 0};",
            f"    {P}_cpuid(0, 0, l0);",
            f"    if (l0[0] >= 1) {P}_cpuid(1, 0, l1);",
            f"    if (l0[0] >= 7) {P}_cpuid(7, 0, l7);",
            f"    {P}_cpuid(0x80000000u, 0, e0);",
            f"    if (e0[0] >= 0x80000001u) {P}_cpuid(0x80000001u, 0, e1);",
            "    if (!((l1[2] >> 27) & 1u)) return 1; /* osxsave: XGETBV reads XCR0 */",
            "    uint32_t lo, hi;",
            '    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));',
            "    (void)hi;",
            "    int level = 1;"]
    for n, _ in levels:
        out += [f"    if ((lo & 0x{_XCR0[n]:X}u) == 0x{_XCR0[n]:X}u",
                f"            && {_bits_test(_LEVEL_BITS[n])})",
                f"        level = {n};"]
    out += ["    return level;", "}", "",
            f"static aotc__atomic_i64 {P}_isa_level_; /* 0 until the first run or P_set_isa */",
            f"static int {P}_isa_now(void) {{",
            f"    int64_t level = aotc__aload(&{P}_isa_level_, relaxed);",
            "    if (!level) {",
            f"        level = {P}_isa_detect();",
            f"        aotc__astore(&{P}_isa_level_, level, relaxed);",
            "    }",
            "    return (int)level;",
            "}",
            f"int {P}_isa(void) {{ return {P}_isa_now(); }}",
            f"int {P}_set_isa(int level) {{",
            f"    int best = {P}_isa_detect();",
            "    if (level == 0) level = best;",
            f"    if ({' && '.join(['level != 1'] + [f'level != {n}' for n, _ in levels])}) return {P}_ERR_INDEX;",
            f"    if (level > best) return {P}_ERR_ISA;",
            f"    aotc__astore(&{P}_isa_level_, (int64_t)level, relaxed);",
            f"    return {P}_OK;",
            "}",
            f"static void {P}_fat_execute(void* const* args, void* const* results, unsigned char* arena,",
            "                             const aotc_par* par) {",
            f"    switch ({P}_isa_now()) {{"]
    for n, _ in sorted(levels, reverse=True):
        out.append(f"    case {n}: {P}_fat_execute_v{n}(args, results, arena, par, aotc_budget_now); return;")
    out += [f"    default: {P}_execute(args, results, arena, par); return;", "    }", "}", ""]
    return out


def header_lines(P: str, M: str, levels: Levels) -> list[str]:
    names = ", ".join(f"{n} ({m})" for n, m in levels)
    return ["/* x86_64-fat: the kernels at several ISA levels, 1 (x86-64), " + names + ";",
            "   the highest this CPU supports runs, the same bits on each. P_isa: the level runs use.",
            "   P_set_isa(level): use that level from now on in this process (0: the highest again);",
            f"   {P}_ERR_ISA if this CPU lacks it, {P}_ERR_INDEX for no such level. */",
            f"#define {M}_FAT_LEVELS {len(levels) + 1}",
            f"enum {{ {P}_ERR_ISA = 11 }};",
            f"int {P}_isa(void);",
            f"int {P}_set_isa(int level);", ""]
