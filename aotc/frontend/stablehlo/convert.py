"""A parsed StableHLO module into `aotc.hlo.ir.Module`: each `func.func` becomes a
computation (`@main` the entry), callees ordered before their callers as in HLO text.

Parameters are named from `jax.arg_info` or a `loc("name")` when the text has them, else
`Arg_<i>` as XLA names them; `tf.aliasing_output` on an argument becomes an
input_output_alias. Results that several values make are a tuple root. Whether the module
makes sense beyond what conversion needs is the verifier's business.
"""
from __future__ import annotations

import re

from ...hlo.ir import Alias, Computation, Module
from ...hlo.opcodes import Op
from ..lexer import unquote
from .builder import Builder, ModuleBuilder, hlo_name
from .lexer import Lexer
from .chlo import HANDLERS as CHLO_HANDLERS
from .collectives import HANDLERS as COLLECTIVE_HANDLERS
from .op_more import HANDLERS as MORE_HANDLERS
from .op_table import HANDLERS as SIMPLE_HANDLERS
from .regions import HANDLERS as REGION_HANDLERS
from .syntax import Arg, Func, ModuleSyntax

HANDLERS = {**SIMPLE_HANDLERS, **MORE_HANDLERS, **REGION_HANDLERS, **COLLECTIVE_HANDLERS, **CHLO_HANDLERS}
_LOC_NAME = re.compile(r'loc\(\s*("(?:[^"\\]|\\.)*")')
_LOC_ALIAS = re.compile(r"loc\(\s*(#[A-Za-z0-9_$.\-]+)\s*\)")


def to_module(syn: ModuleSyntax, lx: Lexer) -> Module:
    mb = ModuleBuilder(lx, HANDLERS)
    funcs: dict[str, Func] = {}
    for f in syn.funcs:
        if f.name in funcs:
            raise lx.error(f"duplicate function @{f.name}", f.pos)
        funcs[f.name] = f
    if "main" in funcs:
        entry = funcs["main"]
    elif len(funcs) == 1:
        entry = syn.funcs[0]
    else:
        raise lx.error("the module has no function @main to compile", syn.pos)
    for f in syn.funcs:
        mb.funcs[f.name] = mb.fresh(f.name)
    for f in syn.funcs:
        _function(mb, f, f is entry, syn.loc_aliases)
    comps = _callees_first(mb.computations, mb.funcs[entry.name])
    return Module(hlo_name(syn.name), comps, mb.funcs[entry.name], aliases=_aliases(entry), source=lx.file)


def _function(mb: ModuleBuilder, f: Func, is_entry: bool, loc_aliases: dict[str, str]) -> None:
    b = Builder(mb, mb.funcs[f.name], what=f"@{f.name}")
    for i, a in enumerate(f.args):
        name = b.emit(Op.PARAMETER, a.shape, pos=a.pos, base=_param_name(a, i, loc_aliases), number=i)
        b.values[a.key] = (name, a.shape)
    vals, at = b.lower_block(f.body, f"function @{f.name}")
    if len(vals) != len(f.result_types):
        raise mb.error(f"@{f.name} returns {len(vals)} value{'s' if len(vals) != 1 else ''} but its type "
                       f"declares {len(f.result_types)}", at)
    for (_, got), want in zip(vals, f.result_types):
        if not got.same_logical(want):
            raise mb.error(f"@{f.name} returns {got.text(False)} where its type declares {want.text(False)}", at)
    if not vals:
        raise mb.error(f"aotc cannot compile @{f.name}: it returns nothing", at)
    root, _ = b.tuple_or_one(vals, at, ssa=f.name)
    b.finish(root, is_entry, pos=f.pos)


def _param_name(a: Arg, i: int, loc_aliases: dict[str, str]) -> str:
    info = a.attrs.get("jax.arg_info")
    if isinstance(info, str) and info:
        return hlo_name(info)
    loc = a.loc_name
    if loc and loc.startswith("loc("):
        m = _LOC_ALIAS.match(loc)
        loc = loc_aliases.get(m.group(1), "") if m else loc
        m = _LOC_NAME.match(loc)
        loc = unquote(m.group(1)) if m else None
    return hlo_name(loc) if loc else f"Arg_{i}"


def _aliases(entry: Func) -> tuple[Alias, ...]:
    out = []
    for i, a in enumerate(entry.args):
        k = a.attrs.get("tf.aliasing_output")
        if isinstance(k, int) and not isinstance(k, bool):
            out.append(Alias((k,) if len(entry.result_types) > 1 else (), i, ()))
    return tuple(out)


def _callees_first(comps: list[Computation], entry: str) -> tuple[Computation, ...]:
    """Computations in post order from the entry (callees before callers), then the rest."""
    by_name = {c.name: c for c in comps}
    done: set[str] = set()
    out: list[Computation] = []
    for start in [entry] + [c.name for c in comps]:
        if start in done:
            continue
        stack = [(start, iter(_callees(by_name[start])))]
        done.add(start)
        while stack:
            name, pending = stack[-1]
            nxt = next((c for c in pending if c in by_name and c not in done), None)
            if nxt is None:
                stack.pop()
                out.append(by_name[name])
            else:
                done.add(nxt)
                stack.append((nxt, iter(_callees(by_name[nxt]))))
    return tuple(out)


def _callees(comp: Computation) -> list[str]:
    return [c for i in comp.instructions for c in i.called_computations()]
