"""A tiny FileCheck: CHECK (in order), CHECK-NEXT (the very next line) and
CHECK-NOT (absent between the previous match and the next one, or to the end).
Patterns are plain substrings."""
from __future__ import annotations


def filecheck(text: str, checks: str) -> None:
    lines = text.splitlines()
    pos, pending_not = 0, []
    for raw in checks.strip().splitlines():
        kind, _, pat = raw.strip().partition(":")
        pat = pat.strip()
        if kind == "CHECK-NOT":
            pending_not.append(pat)
            continue
        if kind == "CHECK-NEXT":
            found = pos if pos < len(lines) and pat in lines[pos] else None
        elif kind == "CHECK":
            found = next((k for k in range(pos, len(lines)) if pat in lines[k]), None)
        else:
            raise ValueError(f"unknown directive {raw!r}")
        assert found is not None, f"{kind}: {pat!r} not found after line {pos}:\n{text}"
        for bad in pending_not:
            hit = [k for k in range(pos, found) if bad in lines[k]]
            assert not hit, f"CHECK-NOT: {bad!r} found at line {hit[0]}:\n{text}"
        pending_not, pos = [], found + 1
    for bad in pending_not:
        hit = [k for k in range(pos, len(lines)) if bad in lines[k]]
        assert not hit, f"CHECK-NOT: {bad!r} found at line {hit[0]}:\n{text}"


def run_pass(fn, hlo: str) -> str:
    """Parse, run one pass to its fixpoint (bounded), print the entry computation."""
    from aotc.frontend import parse_hlo
    from aotc.hlo.printer import print_computation
    m = parse_hlo(hlo)
    for _ in range(8):
        m, changed = fn(m)
        if not changed:
            break
    return print_computation(m.entry_computation)
