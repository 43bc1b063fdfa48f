"""The per-kernel profile of `--profile`: a monotonic clock read around each kernel call of
the run function, the instance's table of calls and nanoseconds, and the `P_profile_*` API
that reads it. Without `--profile` none of this is printed. Formatting only: the work
estimates come from `lower/cost.py`.
"""
from __future__ import annotations

from ..lower.cost import program_costs
from ..lower.program import Program
from .common import macro

_SHOWN = 8  # HLO names listed per kernel in the table, as in the provenance comments


def c_string(text: str) -> str:
    """`text` as a C string literal (HLO names are printable; escape what C needs)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\{ord(ch) & 0xff:03o}")
    return '"' + "".join(out) + '"'


def provenance_text(prov: tuple[str, ...]) -> str:
    shown = ", ".join(prov[:_SHOWN])
    return shown + (f", ... ({len(prov)} instructions)" if len(prov) > _SHOWN else "")


def execute_param() -> str:
    """The run function's extra parameter: the instance's table (NULL: nothing timed)."""
    return ", uint64_t* prof"


def execute_arg(P: str) -> str:
    """What `P_run` passes for it; the stateless `P_run_with` has no instance."""
    return ", m ? m->prof : 0"


def instance_fields(p: Program) -> list[str]:
    return [f"    uint64_t prof[{2 * max(len(p.kernels), 1)}];  /* kernel i: calls at 2i, nanoseconds at 2i+1 */"]


def clock_source() -> list[str]:
    return ["/* ---------------------------------------------------------------- profile clock */",
            "#if defined(_WIN32)",  # windows.h came with the runtime's threads (aotc_thread.h)
            "static uint64_t aotc_prof_now(void) {",
            "    LARGE_INTEGER t, f;",
            "    QueryPerformanceCounter(&t);",
            "    QueryPerformanceFrequency(&f);",
            "    return (uint64_t)((double)t.QuadPart * (1e9 / (double)f.QuadPart));",
            "}",
            "#else",
            "#include <time.h>",
            "static uint64_t aotc_prof_now(void) {",
            "    struct timespec ts;",
            "    clock_gettime(CLOCK_MONOTONIC, &ts);",
            "    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;",
            "}",
            "#endif", ""]


def timed_calls(p: Program, emit_call) -> list[str]:
    """The run function's kernel calls, each followed by its clock read: the time between
    two reads is the kernel's, threads included (the pool returns when it is done)."""
    out: list[str] = []
    if not p.kernels:
        return out
    out.append("    uint64_t t0 = prof ? aotc_prof_now() : 0;")
    for i, k in enumerate(p.kernels):
        emit_call(k, out)
        out.append(f"    if (prof) {{ const uint64_t t1 = aotc_prof_now(); prof[{2 * i}] += 1u; "
                   f"prof[{2 * i + 1}] += t1 - t0; t0 = t1; }}")
    return out


def header_decls(p: Program) -> list[str]:
    P, M = p.name, macro(p)
    return ["",
            "/* Per-kernel profile (compiled with --profile). Row i: kernel i's C function, the HLO",
            "   instructions it implements, its calls and nanoseconds since the instance was created",
            "   or reset (timed on the calling thread around the whole kernel, threads included; only",
            f"   {P}_run is timed, not {P}_run_with), and aotc's estimates of one call's floating-point",
            "   operations and of the bytes of the buffers it reads and writes. */",
            f"#define {M}_PROFILE_KERNELS {len(p.kernels)}",
            "typedef struct {",
            "    const char* kernel;",
            "    const char* hlo;",
            "    uint64_t calls;",
            "    uint64_t total_ns;",
            "    uint64_t flops;",
            "    uint64_t bytes;",
            f"}} {P}_profile_row;",
            f"int {P}_profile_count(void);",
            f"int {P}_profile_entry(const {P}_instance* m, int i, {P}_profile_row* row);  /* {P}_OK or an error code */",
            f"int {P}_profile_reset({P}_instance* m);"]


def api_source(p: Program) -> list[str]:
    P, n = p.name, len(p.kernels)
    N = max(n, 1)
    costs = program_costs(p)

    def table(ctype: str, name: str, vals: list[str]) -> str:
        return f"static const {ctype} {P}_profile_{name}_[{N}] = {{{', '.join(vals) or '0'}}};"

    return ["/* ---------------------------------------------------------------- profile */",
            table("char* const", "kernels", [c_string(k.cname) for k in p.kernels]),
            table("char* const", "hlo", [c_string(provenance_text(k.provenance)) for k in p.kernels]),
            table("uint64_t", "flops", [f"UINT64_C({c.flops})" for c in costs]),
            table("uint64_t", "bytes", [f"UINT64_C({c.bytes})" for c in costs]),
            f"int {P}_profile_count(void) {{ return {n}; }}",
            f"int {P}_profile_entry(const {P}_instance* m, int i, {P}_profile_row* row) {{",
            f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
            f"    if (!row) return {P}_ERR_NULL_RESULT;",
            f"    if (i < 0 || i >= {n}) return {P}_ERR_INDEX;",
            f"    row->kernel = {P}_profile_kernels_[i];",
            f"    row->hlo = {P}_profile_hlo_[i];",
            "    row->calls = m->prof[2 * i];",
            "    row->total_ns = m->prof[2 * i + 1];",
            f"    row->flops = {P}_profile_flops_[i];",
            f"    row->bytes = {P}_profile_bytes_[i];",
            f"    return {P}_OK;",
            "}",
            f"int {P}_profile_reset({P}_instance* m) {{",
            f"    if (!m) return {P}_ERR_NULL_INSTANCE;",
            "    memset(m->prof, 0, sizeof m->prof);",
            f"    return {P}_OK;",
            "}", ""]
