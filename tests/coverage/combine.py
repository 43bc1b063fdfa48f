"""One module from many probes: each probe's entry becomes a computation the combined entry
calls with its own parameters, and the combined root is every probe's results in order, so
that one C build checks every element type of an opcode. Instruction and computation names
get the probe's index as a prefix (`p3_x`), keeping every name unique."""
from __future__ import annotations

import re

from aotc.frontend import parse_model
from aotc.coverage.probes import Probe

_COMP = re.compile(r"^(\w+) \{$", re.M)
_DEF = re.compile(r"^\s*(?:ROOT\s+)?(\w+)\s*=", re.M)


def _renamed(text: str, prefix: str) -> str:
    body = text.split("\n", 1)[1].replace("ENTRY main {", "main {")
    names = set(_COMP.findall(body)) | set(_DEF.findall(body))
    for n in sorted(names, key=len, reverse=True):
        e = re.escape(n)
        body = re.sub(rf"^(\s*(?:ROOT\s+)?){e}(?=\s*=)", rf"\g<1>{prefix}{n}", body, flags=re.M)
        body = re.sub(rf"(?<![\w.]){e}(?![\w.\[(]|\s*=)", f"{prefix}{n}", body)
    return body



def combine(probes: list[Probe], name: str) -> tuple[str, list[tuple[int, int]]]:
    """(module text, per probe (first parameter, first result) index in the combined module)."""
    comps, entry, params, results, where = [], [], 0, [], []
    for i, p in enumerate(probes):
        prefix = f"p{i}_"
        comps.append(_renamed(p.text, prefix).strip())
        m = parse_model(p.text, p.name + ".hlo")
        e = m.entry_computation
        args = []
        for q in sorted(e.parameters, key=lambda q: q.parameter_number):
            args.append(f"{prefix}arg{q.parameter_number}")
            entry.append(f"  {prefix}arg{q.parameter_number} = {q.shape} parameter({params + q.parameter_number})")
        root_shape = e.root_instruction.shape
        entry.append(f"  {prefix}out = {root_shape} call({', '.join(args)}), to_apply={prefix}main")
        where.append((params, len(results)))
        params += len(args)
        if root_shape.is_tuple:
            for k, s in enumerate(root_shape.elements):
                entry.append(f"  {prefix}out{k} = {s} get-tuple-element({prefix}out), index={k}")
                results.append((f"{prefix}out{k}", s))
        else:
            results.append((f"{prefix}out", root_shape))
    shape = "(" + ", ".join(str(s) for _, s in results) + ")"
    entry.append(f"  ROOT root = {shape} tuple({', '.join(n for n, _ in results)})")
    text = f"HloModule {name}\n\n" + "\n\n".join(comps) + "\n\nENTRY main {\n" + "\n".join(entry) + "\n}\n"
    return text, where
