"""The program signature: which entry parameters are feeds, variables or bound,
which values are fetched, and the C names of all of them.

`resolve_signature` combines a verified module with an optional config
(`aotc.frontend.config`) and checks the config against the module. Without a
config every parameter is a feed and every output of the root a fetch. Names
are derived from HLO names (`c_names`); what a config entry refers to is found by
`entry_lookup`. Nothing here decides memory layout or C code.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from ..hlo.ir import Instruction, Module
from ..hlo.shape import ArrayShape, TupleShape, leaves
from .c_names import derive_names, unique_name
from .config import Config, Spot
from .constants import as_dtype, describe, read_npz
from .entry_lookup import EntryLookup


@dataclass(frozen=True, slots=True)
class Feed:
    index: int  # position among the generated function's inputs
    name: str  # C identifier
    param_number: int
    shape: ArrayShape  # with the entry computation layout when known
    hlo_name: str
    kind: str = "arg"  # "arg" | "variable"
    readonly: bool = False
    update_output: tuple[int, ...] | None = None  # root shape index that writes the variable back


@dataclass(frozen=True, slots=True)
class Fetch:
    index: int  # position among the outputs
    name: str  # C identifier
    instruction: str  # ENTRY instruction name
    shape_index: tuple[int, ...]  # into that instruction's shape
    shape: ArrayShape


@dataclass(frozen=True, slots=True, eq=False)
class Bound:
    param_number: int
    hlo_name: str
    array: np.ndarray  # logical (row-major) values with the parameter's element type
    key: str = ""  # its array's key in the .npz (the tensor's name in a weights file)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Bound) and self.param_number == other.param_number
                and self.hlo_name == other.hlo_name and self.array.dtype == other.array.dtype
                and self.array.shape == other.array.shape and self.array.tobytes() == other.array.tobytes())

    def __hash__(self) -> int:
        return hash((self.param_number, self.hlo_name))


@dataclass(frozen=True, slots=True)
class Signature:
    feeds: tuple[Feed, ...]
    fetches: tuple[Fetch, ...]
    bound: tuple[Bound, ...] = ()
    name: str | None = None  # C symbol prefix from the config
    cpp_class: str | None = None
    custom_calls: tuple[str, ...] = ()  # custom-call targets the application implements (config `custom_calls`)
    token_params: tuple[str, ...] = ()  # entry token parameters: no argument in the API (no data)
    token_results: int = 0  # token leaves of the entry result: no result in the API

    @property
    def variables(self) -> tuple[Feed, ...]:
        return tuple(f for f in self.feeds if f.kind == "variable")

    def signature_text(self) -> str:
        """`(x: f32[2,3], v: variable f32[2]) -> (prod: f32[2,2])`; layouts only when not row-major."""
        def ty(s: ArrayShape) -> str:
            return s.text(with_layout=not s.is_row_major)

        ins = []
        for f in self.feeds:
            qual = ("readonly variable " if f.readonly else "variable ") if f.kind == "variable" else ""
            ins.append(f"{f.name}: {qual}{ty(f.shape)}")
        ins += [f"{n}: token" for n in self.token_params]
        outs = [f"{f.name}: {ty(f.shape)}" for f in self.fetches] + ["token"] * self.token_results
        return f"({', '.join(ins)}) -> ({', '.join(outs)})"


def resolve_signature(module: Module, config: Config | None = None) -> Signature:
    """The signature of `module` under `config` (AotcError on any mismatch)."""
    look = EntryLookup(module, config)
    claimed: dict[int, str] = {}  # parameter number -> config path that claimed it

    def claim(p: Instruction, spot: Spot) -> None:
        n = p.parameter_number or 0
        if n in claimed:
            raise look.fail(f"parameter {p.name} is listed twice (also at {claimed[n]})", spot, "id")
        claimed[n] = spot.path

    # feeds: (param, spot or None, explicit name or None)
    feed_items: list[tuple[Instruction, Spot | None, str | None]] = []
    if config is not None and config.feeds is not None:
        for spec in config.feeds:
            p = look.param(spec.id, spec.spot)
            claim(p, spec.spot)
            shape = look.param_shape(p, spec.spot, "id")
            if spec.shape is not None and spec.shape != shape.dims:
                raise look.fail(f"[{', '.join(map(str, spec.shape))}] does not match parameter "
                                f"{p.name} {shape.text(False)}", spec.spot, "shape")
            if spec.type is not None and spec.type != shape.dtype.name:
                raise look.fail(f"{spec.type} does not match parameter {p.name} {shape.text(False)}",
                                spec.spot, "type")
            feed_items.append((p, spec.spot, spec.name))

    var_items: list[tuple[Instruction, Spot | None, str | None, bool, tuple[int, ...] | None]] = []
    for vspec in config.variables if config is not None else ():
        p = look.param(vspec.id, vspec.spot)
        claim(p, vspec.spot)
        shape = look.param_shape(p, vspec.spot, "id")
        update = None
        if vspec.update is not None:
            update = look.update_index(vspec.update, vspec.spot)
            alias = look.aliases.get(p.parameter_number or 0)
            if alias is not None and alias != update:
                raise look.fail(f"update is output {_index_text(update)} but input_output_alias "
                                f"writes parameter {p.name} from output {_index_text(alias)}",
                                vspec.spot, "update")
        elif not vspec.readonly:
            update = look.aliases.get(p.parameter_number or 0)
        if update is not None:
            out = look.output_shape(look.root, update)
            if not out.same_logical(shape):
                raise look.fail(f"output {_index_text(update)} is {out.text(False)} but variable {p.name} is "
                                f"{shape.text(False)}", vspec.spot, "update" if vspec.update is not None else "id")
        var_items.append((p, vspec.spot, vspec.name, vspec.readonly, update))

    bound = _bound(look, claim) if config is not None and config.bound is not None else ()

    tokens = tuple(p.name for p in look.params if _is_token(p.shape) and (p.parameter_number or 0) not in claimed)
    if config is None or config.feeds is None:
        feed_items = [(p, None, None) for p in look.params
                      if (p.parameter_number or 0) not in claimed and p.name not in tokens]
    else:
        unfed = [p for p in look.params if (p.parameter_number or 0) not in claimed and p.name not in tokens]
        if unfed:
            p = unfed[0]
            spot = config.spot("feeds")
            raise look.fail(f"parameter {p.parameter_number} ({p.name} {p.shape.text(False)}) is not fed: "
                            "list it under feeds, variables or bound"
                            + (f" ({len(unfed) - 1} more unfed)" if len(unfed) > 1 else ""), spot)

    # explicit names first, then derived defaults around them
    explicit_fetch = config is not None and config.fetches is not None
    taken = {n for _, _, n in feed_items if n} | {v[2] for v in var_items if v[2]}
    if explicit_fetch:
        taken |= {s.name for s in config.fetches if s.name}  # type: ignore[union-attr]

    feeds: list[Feed] = []
    default_feed = config is None or config.feeds is None
    for k, (p, spot, name) in enumerate(feed_items):
        n = p.parameter_number or 0
        update = look.aliases.get(n)
        shape = look.param_shape(p, spot, "id")
        if update is not None and not look.output_shape(look.root, update).same_logical(shape):
            update = None
        feeds.append(Feed(k, name or "", n, shape, p.name,
                          "variable" if update is not None else "arg", False, update))
    for p, spot, name, readonly, update in var_items:
        feeds.append(Feed(len(feeds), name or "", p.parameter_number or 0, look.param_shape(p, spot, "id"),
                          p.name, "variable", readonly, update))

    fetch_items: list[tuple[Instruction, tuple[int, ...], ArrayShape, str | None, str]] = []
    if explicit_fetch:
        for spec in config.fetches:  # type: ignore[union-attr]
            instr, index, shape = look.output_of(spec.id, spec.spot, "id")
            fetch_items.append((instr, index, shape, spec.name, ""))
    else:
        updates = {f.update_output for f in feeds if f.update_output is not None}
        for index, _ in leaves(look.root.shape):
            if index in updates:
                continue
            shape = look.output_shape(look.root, index)
            if isinstance(shape, TupleShape) or shape.is_token:
                continue
            fetch_items.append((look.root, index, shape, None, look.leaf_source(index)))

    # default names, around the explicit ones: feeds, then variables, then fetches
    used = set(taken)

    def fill(names: list[str], hlo_names: list[str]) -> list[str]:
        missing = [k for k, n in enumerate(names) if not n]
        derived = derive_names([hlo_names[k] for k in missing], used)
        used.update(derived)
        out = list(names)
        for k, d in zip(missing, derived):
            out[k] = d
        return out

    n_feeds = len(feed_items)
    if default_feed:
        feed_names = fill([f.name for f in feeds[:n_feeds]], [f.hlo_name for f in feeds[:n_feeds]])
    else:
        feed_names = [f.name or unique_name(f"arg{k}", used) for k, f in enumerate(feeds[:n_feeds])]
    var_names = fill([f.name for f in feeds[n_feeds:]], [f.hlo_name for f in feeds[n_feeds:]])
    for k, name in enumerate(feed_names + var_names):
        feeds[k] = _renamed_feed(feeds[k], name)
    if explicit_fetch:
        fetch_names = [item[3] or unique_name(f"result{k}", used) for k, item in enumerate(fetch_items)]
    else:
        fetch_names = fill(["" for _ in fetch_items], [item[4] for item in fetch_items])
    fetches = tuple(Fetch(k, fetch_names[k], instr.name, index, shape)
                    for k, (instr, index, shape, _, _) in enumerate(fetch_items))
    n_tokens = sum(1 for _, leaf in leaves(look.root.shape) if _is_token(leaf))
    return Signature(tuple(feeds), fetches, bound, config.name if config is not None else None,
                     config.cpp_class if config is not None else None,
                     config.custom_calls if config is not None else (), tokens, n_tokens)


def _is_token(shape) -> bool:
    return isinstance(shape, ArrayShape) and shape.is_token


def _bound(look: EntryLookup, claim) -> tuple[Bound, ...]:
    """The bound parameters' values from the config's .npz, checked against the parameters."""
    spec = look.config.bound  # type: ignore[union-attr]
    file_spot = spec.spot
    arrays = read_npz(spec.path, lambda message: look.fail(f"{spec.file}: {message}", file_spot, "file"))
    out = []
    for pspec in spec.params:
        p = look.param(pspec.id, pspec.spot)
        claim(p, pspec.spot)
        shape = look.param_shape(p, pspec.spot, "id")
        n = p.parameter_number or 0
        key = pspec.key
        if key is None:
            key = p.name if p.name in arrays and look.param_names[n] not in arrays else look.param_names[n]
        if key not in arrays:
            near = difflib.get_close_matches(key, list(arrays), n=1)
            hint = f"did you mean '{near[0]}'?" if near else "it has: " + (", ".join(sorted(arrays)) or "nothing")
            raise look.fail(f"no array '{key}' in {spec.file} ({hint})", pspec.spot,
                            "key" if pspec.key is not None else "id")
        array = as_dtype(arrays[key], shape.dtype)
        if array is None or array.shape != shape.dims:
            have = describe(arrays[key])
            raise look.fail(f"array '{key}' in {spec.file} is {have}, parameter {p.name} is "
                            f"{shape.text(False)}", pspec.spot, "key" if pspec.key is not None else "id")
        out.append(Bound(n, p.name, np.ascontiguousarray(array), key))
    return tuple(out)


def _renamed_feed(f: Feed, name: str) -> Feed:
    return Feed(f.index, name, f.param_number, f.shape, f.hlo_name, f.kind, f.readonly, f.update_output)


def _index_text(index: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, index)) + "}"
