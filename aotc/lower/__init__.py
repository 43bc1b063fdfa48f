"""Lowering: checked HLO module + signature -> Program (see pipeline.py)."""
from __future__ import annotations


def plan_for_info(module, sig) -> dict:
    """The static memory plan of a model, for `aotc info`: arena and peak bytes and
    one row per buffer (slot, place, offset, bytes, type, live range, HLO value)."""
    from ..frontend.constants import resolve_constants
    from .pipeline import lower

    module = resolve_constants(module, "zeros")  # elided values do not change the plan
    p = lower(module, sig, name="model", source=module.source).program
    rows = []
    for s in p.slots:
        rows.append({
            "slot": s.cname, "place": s.place,
            "offset": s.offset if s.place in ("arena", "scratch") else "-",
            "bytes": s.nbytes, "type": f"{s.dtype.name}[{','.join(map(str, s.dims))}]" if s.place != "scratch" else "scratch",
            "live": f"{s.live[0]}-{s.live[1]}", "hlo": s.hlo,
        })
    return {"arena_bytes": p.arena_bytes, "peak_bytes": p.peak_bytes, "kernels": len(p.kernels), "buffers": rows}
