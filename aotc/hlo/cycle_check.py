"""Cycle checks: an instruction that depends on itself within its computation, and a
computation that calls itself directly or through others. They add to a `Problems` report
(one per cycle, with its path) and never change the module."""
from __future__ import annotations

from .ir import Computation, Module
from .problems import Problems, callees


def _strongly_connected(nodes: list[str], edges: dict[str, list[str]]) -> dict[str, int]:
    """Tarjan's algorithm, iterative: node -> component id."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    comp_of: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0
    n_comps = 0
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succs = edges.get(node, [])
            if i < len(succs):
                work.append((node, i + 1))
                nxt = succs[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp_of[w] = n_comps
                    if w == node:
                        break
                n_comps += 1
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return comp_of


def _path(src: str, dst: str, edges: dict[str, list[str]], scc: dict[str, int]) -> list[str]:
    """Shortest path src -> ... -> dst inside one strongly connected component
    (a cycle when src == dst)."""
    prev: dict[str, str] = {}
    seen = {src}
    frontier = [src]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for succ in edges.get(node, []):
                if succ == dst:
                    path = [node]
                    while path[-1] != src:
                        path.append(prev[path[-1]])
                    return path[::-1] + [dst]
                if succ not in seen and scc.get(succ) == scc[src]:
                    seen.add(succ)
                    prev[succ] = node
                    following.append(succ)
        frontier = following
    return [src, dst]


def check_instruction_cycles(comp: Computation, problems: Problems, bad: set[str]) -> None:
    names = [i.name for i in comp.instructions]
    edges = {i.name: [o for o in i.operands if comp.has(o)] for i in comp.instructions}
    scc = _strongly_connected(names, edges)
    sizes: dict[int, int] = {}
    for c in scc.values():
        sizes[c] = sizes.get(c, 0) + 1
    reported: set[int] = set()
    for instr in comp.instructions:
        c = scc[instr.name]
        cyclic = sizes[c] > 1 or instr.name in edges[instr.name]
        if cyclic:
            bad.add(instr.name)
            if c not in reported:
                reported.add(c)
                path = _path(instr.name, instr.name, edges, scc)
                problems.add(f"{instr.name} depends on itself: {' -> '.join(path)}", instr.loc)


def check_call_cycles(module: Module, problems: Problems) -> None:
    names = [c.name for c in module.computations]
    edges: dict[str, list[str]] = {}
    for comp in module.computations:
        edges.setdefault(comp.name, []).extend(
            callee for i in comp.instructions for _, callee in callees(i) if module.has_computation(callee))
    scc = _strongly_connected(names, edges)
    sizes: dict[int, int] = {}
    for c in scc.values():
        sizes[c] = sizes.get(c, 0) + 1
    reported: set[int] = set()
    for comp in module.computations:
        c = scc.get(comp.name)
        for instr in comp.instructions:
            for key, callee in callees(instr):
                if c in reported or not module.has_computation(callee) or scc.get(callee) != c:
                    continue
                if sizes[c] == 1 and callee != comp.name:
                    continue
                reported.add(c)
                path = [comp.name] + (_path(callee, comp.name, edges, scc) if callee != comp.name else [comp.name])
                problems.add(f"recursive computation call via {key}={callee}: {' -> '.join(path)}", instr.loc)
