"""The kernel table of `aotc bench --profile`: the runner's per-kernel rows (calls,
nanoseconds, estimated flops and bytes per call) sorted by time, with each kernel's share,
GFLOP/s, GB/s and the HLO instructions it implements. Text only; runs nothing.
"""
from __future__ import annotations


def profile_rows(res: dict) -> list[dict]:
    """The runner's rows with `share` (percent of all kernel time), `us_per_run`,
    `gflops` and `gbps` added, largest time first (ties in execution order)."""
    rows = [dict(r) for r in res.get("profile", [])]
    total = sum(r["ns"] for r in rows)
    runs = max(int(res.get("iters", 1)), 1)
    for r in rows:
        ns = r["ns"]
        r["share"] = 100.0 * ns / total if total else 0.0
        r["us_per_run"] = ns / 1e3 / runs
        r["gflops"] = r["flops"] * r["calls"] / ns if ns else 0.0
        r["gbps"] = r["bytes"] * r["calls"] / ns if ns else 0.0
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["ns"], i))
    return [rows[i] for i in order]


def format_profile(res: dict, top: int = 20) -> str:
    """The table: the `top` kernels, then one line for the rest, so the shares add up to
    100%; GFLOP/s and GB/s come from aotc's estimates of each kernel's work."""
    rows = profile_rows(res)
    if not rows:
        return "no kernels were timed (the model has none)\n"
    total_us = sum(r["us_per_run"] for r in rows)
    lines = [f"kernels: {total_us:.3f} us per run of {res.get('median_us', 0.0):.3f} us (median), "
             f"{len(rows)} kernel(s), {res.get('iters')} timed run(s)",
             f"{'#':>3} {'kernel':<32} {'share':>7} {'us/run':>10} {'GFLOP/s':>9} {'GB/s':>9}  HLO"]
    for i, r in enumerate(rows[:top]):
        lines.append(f"{i + 1:>3} {r['kernel']:<32} {r['share']:>6.2f}% {r['us_per_run']:>10.3f} "
                     f"{r['gflops']:>9.3f} {r['gbps']:>9.3f}  {r['hlo']}")
    rest = rows[top:]
    if rest:
        lines.append(f"{'':>3} {f'({len(rest)} more kernels)':<32} {sum(r['share'] for r in rest):>6.2f}% "
                     f"{sum(r['us_per_run'] for r in rest):>10.3f}")
    return "\n".join(lines) + "\n"
