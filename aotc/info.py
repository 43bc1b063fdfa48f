"""`aotc info`: what a model looks like to aotc, without compiling it.

`load_model` runs the frontend (read, parse, verify, constants, config,
signature); `build_report` turns its result into plain data (what `--json`
prints) and `format_report` into text for people. Nothing here lowers or emits
code; the memory plan comes from `aotc.lower.plan_for_info` when it exists.
"""
from __future__ import annotations

import os
from typing import Any

from .driver import Frontend, frontend
from .errors import AotcError
from .frontend.constants import elided_constants, resolve_constants
from .frontend.signature import Signature
from .hlo.dtypes import from_numpy
from .hlo.ir import Module
from .hlo.shape import ArrayShape, leaves
from .lower.pipeline import lower
from .ops import registry
from .options import CompileOptions
from .hlo.opcodes import Op


def load_model(path: str, config_path: str | None = None, elided: str = "error",
               bind: str | None = None, *, keep_elided: bool = False,
               shapes: tuple[tuple[str, int], ...] = ()) -> Frontend:
    """The driver's frontend (read, parse, verify, constants, config, signature). With
    `keep_elided` and no explicit way to fill them, elided constants stay elided instead
    of being an error (for reporting)."""
    opts = CompileOptions(elided_constants=elided, bind_constants=bind, shapes=shapes)
    return frontend(path, config_path, opts, keep_elided=keep_elided)


# ---------------------------------------------------------------- the report


def _shape_fields(s: ArrayShape) -> dict[str, Any]:
    return {"type": s.dtype.name, "shape": list(s.dims), "layout": list(s.minor_to_major)}


def build_report(model: Frontend) -> dict[str, Any]:
    """Everything `aotc info` shows, as JSON-ready data."""
    module, sig = model.module, model.signature
    counts: dict[str, int] = {}
    constant_bytes = 0
    for _, instr in module.instructions():
        counts[instr.opcode] = counts.get(instr.opcode, 0) + 1
        if instr.opcode == Op.CONSTANT:
            constant_bytes += sum(leaf.nbytes for _, leaf in leaves(instr.shape))
    return {
        "model": model.path,
        "module": module.name,
        "signature": {
            "text": sig.signature_text(),
            "name": sig.name,
            "cpp_class": sig.cpp_class,
            "feeds": [{"index": f.index, "name": f.name, "parameter": f.param_number, "hlo_name": f.hlo_name,
                       **_shape_fields(f.shape), "kind": f.kind, "readonly": f.readonly,
                       "update_output": None if f.update_output is None else list(f.update_output)}
                      for f in sig.feeds],
            "fetches": [{"index": f.index, "name": f.name, "instruction": f.instruction,
                         "shape_index": list(f.shape_index), **_shape_fields(f.shape)} for f in sig.fetches],
            "bound": [{"parameter": b.param_number, "hlo_name": b.hlo_name, "type": from_numpy(b.array.dtype).name,
                       "shape": list(b.array.shape), "bytes": int(b.array.nbytes)} for b in sig.bound],
        },
        "computations": [{"name": c.name, "instructions": len(c.instructions), "entry": c.name == module.entry}
                         for c in module.computations],
        "opcodes": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "constant_bytes": constant_bytes,
        "elided_constants": len(elided_constants(module)),
        "unsupported_opcodes": _unsupported(counts),
        "memory_plan": _memory_plan(module, sig),
    }


def _unsupported(counts: dict[str, int]) -> list[str]:
    return sorted(op for op in counts if not registry.compilable(op))


def _memory_plan(module: Module, sig: Signature) -> Any:
    try:
        return plan_for_info(module, sig)
    except AotcError as e:
        return {"error": e.message}


def plan_for_info(module: Module, sig: Signature) -> dict:
    """The static memory plan of a model: arena and peak bytes and one row per buffer
    (slot, place, offset, bytes, type, live range, HLO value)."""
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


# ---------------------------------------------------------------- text


def _table(rows: list[list[str]], indent: str = "  ") -> list[str]:
    if not rows:
        return []
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _type_text(entry: dict[str, Any]) -> str:
    s = f"{entry['type']}[{','.join(map(str, entry['shape']))}]"
    return s + "{" + ",".join(map(str, entry["layout"])) + "}" if entry.get("shape") else s


def format_report(report: dict[str, Any]) -> str:
    sig = report["signature"]
    out = [f"module {report['module']}  ({os.path.basename(report['model'])})",
           f"signature: {sig['text']}"]
    if sig["name"] or sig["cpp_class"]:
        out.append(f"C prefix: {sig['name'] or '-'}   C++ class: {sig['cpp_class'] or '-'}")
    out.append("")
    out.append(f"feeds ({len(sig['feeds'])}):")
    out += _table([[str(f["index"]), f["name"], _type_text(f), f"parameter {f['parameter']} ({f['hlo_name']})",
                    _feed_kind(f)] for f in sig["feeds"]])
    out.append(f"fetches ({len(sig['fetches'])}):")
    out += _table([[str(f["index"]), f["name"], _type_text(f),
                    f["instruction"] + ("{" + ",".join(map(str, f["shape_index"])) + "}" if f["shape_index"] else "")]
                   for f in sig["fetches"]])
    if sig["bound"]:
        out.append(f"bound ({len(sig['bound'])}):")
        out += _table([[f"parameter {b['parameter']}", b["hlo_name"], f"{b['type']}[{','.join(map(str, b['shape']))}]",
                        f"{b['bytes']} bytes"] for b in sig["bound"]])
    out.append("")
    comps = report["computations"]
    out.append(f"computations ({len(comps)}):")
    out += _table([[c["name"], f"{c['instructions']} instructions", "ENTRY" if c["entry"] else ""] for c in comps])
    total = sum(report["opcodes"].values())
    out.append(f"opcodes ({total} instructions):")
    out += _table([[op, str(n)] for op, n in report["opcodes"].items()])
    elided = report["elided_constants"]
    line = f"constants: {report['constant_bytes']} bytes"
    if elided:
        line += (f", {elided} elided (fill them with --elided-constants=zeros|random or "
                 "--bind-constants FILE.npz to compile)")
    out.append(line)
    unsupported = report["unsupported_opcodes"]
    out.append(f"not compilable yet: {', '.join(unsupported) if unsupported else 'none'}")
    out += _plan_lines(report["memory_plan"])
    return "\n".join(out) + "\n"


def _feed_kind(f: dict[str, Any]) -> str:
    if f["kind"] != "variable":
        return ""
    if f["readonly"]:
        return "readonly variable"
    if f["update_output"] is None:
        return "variable"
    return "variable, updated by output {" + ",".join(map(str, f["update_output"])) + "}"


def _plan_lines(plan: Any) -> list[str]:
    if plan is None:
        return ["memory plan: not available"]
    if isinstance(plan, dict) and "error" in plan:
        return [f"memory plan: not available ({plan['error']})"]
    head = []
    if isinstance(plan, dict):
        head = [f"memory plan: arena {plan['arena_bytes']} bytes, peak live {plan['peak_bytes']} bytes, "
                f"{plan['kernels']} kernels"]
        plan = plan["buffers"]
        if not plan:
            return head
    rows = list(plan)
    if head and rows:
        keys = list(rows[0])
        return head + _table([keys] + [[str(r.get(k, "")) for k in keys] for r in rows])
    if rows and all(isinstance(r, dict) for r in rows):
        keys = list(rows[0])
        return ["memory plan:"] + _table([keys] + [[str(r.get(k, "")) for k in keys] for r in rows])
    return ["memory plan:"] + ["  " + str(r) for r in rows]
