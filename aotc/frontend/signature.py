"""The program signature: which entry parameters are feeds, variables or bound,
which values are fetched, and the C names of all of them.

`resolve_signature` combines a verified module with an optional config
(`aotc.frontend.config`) and checks the config against the module. Without a
config every parameter is a feed and every output of the root a fetch. Names
are derived from HLO names; nothing here decides memory layout or C code.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np

from ..errors import AotcError, located
from ..hlo.ir import Computation, Instruction, Module, Raw
from ..hlo.shape import ArrayShape, Shape, TupleShape, leaves, subshape
from .c_names import C_KEYWORDS
from .config import Config, Spot
from .config_reader import Id
from .constants import as_dtype, describe, read_npz
from ..hlo.opcodes import Op


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
        outs = [f"{f.name}: {ty(f.shape)}" for f in self.fetches]
        return f"({', '.join(ins)}) -> ({', '.join(outs)})"


# ---------------------------------------------------------------- names

_SUFFIX = re.compile(r"\.\d+\Z")


def c_name(hlo_name: str) -> str:
    """`x.1` -> `x_1`: any HLO name as a C identifier."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", hlo_name) or "v"
    if s[0].isdigit():
        s = "_" + s
    return s + "_" if s in C_KEYWORDS else s


def derive_names(hlo_names: list[str], taken: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Unique C identifiers for HLO names: `x.1` -> `x` when no other name strips to `x`,
    else `x_1`; remaining collisions (with each other or `taken`) get `_2`, `_3`, ..."""
    bases = [c_name(_SUFFIX.sub("", n)) for n in hlo_names]
    counts: dict[str, int] = {}
    for b in bases:
        counts[b] = counts.get(b, 0) + 1
    used = set(taken)
    out = []
    for n, b in zip(hlo_names, bases):
        cand = b if counts[b] == 1 and b not in used else c_name(n)
        out.append(_unique(cand, used))
    return out


def _unique(cand: str, used: set[str]) -> str:
    name, k = cand, 2
    while name in used:
        name, k = f"{cand}_{k}", k + 1
    used.add(name)
    return name


# ---------------------------------------------------------------- resolution


def resolve_signature(module: Module, config: Config | None = None) -> Signature:
    """The signature of `module` under `config` (AotcError on any mismatch)."""
    return _Resolver(module, config).run()


def _op_name(instr: Instruction) -> str | None:
    """`metadata={op_name="x" ...}` of an instruction, if any."""
    meta = instr.attr("metadata")
    if isinstance(meta, dict):
        value = meta.get("op_name")
        return value if isinstance(value, str) else None
    text = meta.text if isinstance(meta, Raw) else meta if isinstance(meta, str) else ""
    m = re.search(r'op_name="((?:[^"\\]|\\.)*)"', text)
    return m.group(1) if m else None


class _Resolver:
    def __init__(self, module: Module, config: Config | None):
        self.module = module
        self.config = config
        self.entry: Computation = module.entry_computation
        self.params: list[Instruction] = list(self.entry.parameters)
        self.root = self.entry.root_instruction
        self.param_names = derive_names([p.name for p in self.params])  # default names, params alone
        self.aliases: dict[int, tuple[int, ...]] = {}
        for a in module.aliases:
            if a.param_index == () and a.param_number not in self.aliases:
                self.aliases[a.param_number] = a.output_index

    # ------------------------------------------------------------ errors

    def fail(self, message: str, spot: Spot | None, key: str | None = None) -> AotcError:
        if self.config is None or spot is None:
            return AotcError(message, file=self.module.source)
        path, loc = spot.at(key)
        return self.config.error(message, path, loc)

    # ------------------------------------------------------------ shapes

    def param_shape(self, p: Instruction, spot: Spot | None, key: str | None = None) -> ArrayShape:
        n = p.parameter_number or 0
        shape: Shape = p.shape
        if self.module.entry_params is not None and n < len(self.module.entry_params):
            laid = self.module.entry_params[n]
            if isinstance(laid, ArrayShape) and laid.same_logical(shape):
                shape = laid if laid.layout is not None else laid.with_layout(p.shape.layout)  # type: ignore[union-attr]
        if isinstance(shape, ArrayShape) and not shape.is_token:
            return _concrete(shape)
        message = (f"parameter {p.name} has {'tuple' if isinstance(shape, TupleShape) else 'token'} shape "
                   f"{shape.text(False)}; feeds, variables and bound parameters must be arrays")
        if spot is None and self.config is None:
            raise located(message, p.loc)
        raise self.fail(message, spot, key)

    def output_shape(self, instr: Instruction, index: tuple[int, ...]) -> Shape:
        """A value's shape, with the entry result layout for outputs of the root."""
        shape = subshape(instr.shape, index)
        if instr.name == self.root.name and self.module.entry_result is not None \
                and self.module.entry_result.same_logical(self.root.shape):
            shape = subshape(self.module.entry_result, index)
        return _concrete(shape) if isinstance(shape, ArrayShape) and not shape.is_token else shape

    # ------------------------------------------------------------ lookups

    def param(self, ident: Id, spot: Spot) -> Instruction:
        if isinstance(ident, int):
            if ident >= len(self.params):
                raise self.fail(f"no parameter {ident}: ENTRY {self.entry.name} has {len(self.params)} "
                                f"parameter{'s' if len(self.params) != 1 else ''}", spot, "id")
            return self.params[ident]
        if self.entry.has(ident):
            instr = self.entry.get(ident)
            if instr.opcode != Op.PARAMETER:
                raise self.fail(f"{ident} is not a parameter of ENTRY {self.entry.name} (it is a {instr.opcode})",
                                spot, "id")
            return instr
        by_op = [p for p in self.params if _op_name(p) == ident]
        if len(by_op) > 1:
            raise self.fail(f"op_name '{ident}' matches several parameters: "
                            + ", ".join(p.name for p in by_op) + "; use the parameter number", spot, "id")
        if by_op:
            return by_op[0]
        if ident in self.param_names:
            return self.params[self.param_names.index(ident)]
        choices = [p.name for p in self.params]
        near = difflib.get_close_matches(ident, choices + self.param_names, n=1)
        hint = f" (did you mean {near[0]}?)" if near else f" (parameters: {', '.join(choices)})" if choices else ""
        raise self.fail(f"no parameter named '{ident}'{hint}", spot, "id")

    def root_index(self, k: int, spot: Spot, key: str) -> tuple[int, ...]:
        if isinstance(self.root.shape, TupleShape):
            n = len(self.root.shape.elements)
            if k >= n:
                raise self.fail(f"no output {k}: ROOT {self.root.name} has {n} element{'s' if n != 1 else ''}",
                                spot, key)
            return (k,)
        if k != 0:
            raise self.fail(f"no output {k}: ROOT {self.root.name} is a single array "
                            f"{self.root.shape.text(False)}; its index is 0", spot, key)
        return ()

    def instruction(self, ident: str, spot: Spot, key: str) -> Instruction:
        if self.entry.has(ident):
            return self.entry.get(ident)
        names = [i.name for i in self.entry.instructions]
        near = difflib.get_close_matches(ident, names, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise self.fail(f"no instruction named '{ident}' in ENTRY {self.entry.name}{hint}", spot, key)

    def output_of(self, ident: Id, spot: Spot, key: str) -> tuple[Instruction, tuple[int, ...], ArrayShape]:
        """A fetch id: root tuple index, or the name of an ENTRY instruction."""
        if isinstance(ident, int):
            instr, index = self.root, self.root_index(ident, spot, key)
        else:
            instr, index = self.instruction(ident, spot, key), ()
        shape = self.output_shape(instr, index)
        if isinstance(shape, TupleShape) or shape.is_token:
            what = f"output {ident} of ROOT {self.root.name}" if isinstance(ident, int) else f"instruction {instr.name}"
            raise self.fail(f"{what} has {'tuple' if isinstance(shape, TupleShape) else 'token'} shape "
                            f"{shape.text(False)}; fetches must be arrays", spot, key)
        return instr, index, shape

    def update_index(self, ident: Id, spot: Spot) -> tuple[int, ...]:
        """The root shape index named by a variable's `update:`."""
        if isinstance(ident, int):
            return self.root_index(ident, spot, "update")
        if ident == self.root.name:
            return ()
        if self.root.opcode == Op.TUPLE and ident in self.root.operands:
            return (self.root.operands.index(ident),)
        self.instruction(ident, spot, "update")
        raise self.fail(f"{ident} is not an output of ROOT {self.root.name}; only outputs can update a variable",
                        spot, "update")

    # ------------------------------------------------------------ the signature

    def run(self) -> Signature:
        cfg = self.config
        claimed: dict[int, str] = {}  # parameter number -> config path that claimed it

        def claim(p: Instruction, spot: Spot) -> None:
            n = p.parameter_number or 0
            if n in claimed:
                raise self.fail(f"parameter {p.name} is listed twice (also at {claimed[n]})", spot, "id")
            claimed[n] = spot.path

        # feeds: (param, spot or None, explicit name or None)
        feed_items: list[tuple[Instruction, Spot | None, str | None]] = []
        if cfg is not None and cfg.feeds is not None:
            for spec in cfg.feeds:
                p = self.param(spec.id, spec.spot)
                claim(p, spec.spot)
                shape = self.param_shape(p, spec.spot, "id")
                if spec.shape is not None and spec.shape != shape.dims:
                    raise self.fail(f"[{', '.join(map(str, spec.shape))}] does not match parameter "
                                    f"{p.name} {shape.text(False)}", spec.spot, "shape")
                if spec.type is not None and spec.type != shape.dtype.name:
                    raise self.fail(f"{spec.type} does not match parameter {p.name} {shape.text(False)}",
                                    spec.spot, "type")
                feed_items.append((p, spec.spot, spec.name))

        var_items: list[tuple[Instruction, Spot | None, str | None, bool, tuple[int, ...] | None]] = []
        for vspec in cfg.variables if cfg is not None else ():
            p = self.param(vspec.id, vspec.spot)
            claim(p, vspec.spot)
            shape = self.param_shape(p, vspec.spot, "id")
            update = None
            if vspec.update is not None:
                update = self.update_index(vspec.update, vspec.spot)
                alias = self.aliases.get(p.parameter_number or 0)
                if alias is not None and alias != update:
                    raise self.fail(f"update is output {_index_text(update)} but input_output_alias "
                                    f"writes parameter {p.name} from output {_index_text(alias)}",
                                    vspec.spot, "update")
            elif not vspec.readonly:
                update = self.aliases.get(p.parameter_number or 0)
            if update is not None:
                out = self.output_shape(self.root, update)
                if not out.same_logical(shape):
                    raise self.fail(f"output {_index_text(update)} is {out.text(False)} but variable {p.name} is "
                                    f"{shape.text(False)}", vspec.spot, "update" if vspec.update is not None else "id")
            var_items.append((p, vspec.spot, vspec.name, vspec.readonly, update))

        bound = self.bound(claim) if cfg is not None and cfg.bound is not None else ()

        if cfg is None or cfg.feeds is None:
            feed_items = [(p, None, None) for p in self.params if (p.parameter_number or 0) not in claimed]
        else:
            unfed = [p for p in self.params if (p.parameter_number or 0) not in claimed]
            if unfed:
                p = unfed[0]
                spot = cfg.spot("feeds")
                raise self.fail(f"parameter {p.parameter_number} ({p.name} {p.shape.text(False)}) is not fed: "
                                "list it under feeds, variables or bound"
                                + (f" ({len(unfed) - 1} more unfed)" if len(unfed) > 1 else ""), spot)

        # explicit names first, then derived defaults around them
        explicit_fetch = cfg is not None and cfg.fetches is not None
        taken = {n for _, _, n in feed_items if n} | {v[2] for v in var_items if v[2]}
        if explicit_fetch:
            taken |= {s.name for s in cfg.fetches if s.name}  # type: ignore[union-attr]

        feeds: list[Feed] = []
        default_feed = cfg is None or cfg.feeds is None
        for k, (p, spot, name) in enumerate(feed_items):
            n = p.parameter_number or 0
            update = self.aliases.get(n)
            shape = self.param_shape(p, spot, "id")
            if update is not None and not self.output_shape(self.root, update).same_logical(shape):
                update = None
            feeds.append(Feed(k, name or "", n, shape, p.name,
                              "variable" if update is not None else "arg", False, update))
        for p, spot, name, readonly, update in var_items:
            feeds.append(Feed(len(feeds), name or "", p.parameter_number or 0, self.param_shape(p, spot, "id"),
                              p.name, "variable", readonly, update))

        fetch_items: list[tuple[Instruction, tuple[int, ...], ArrayShape, str | None, str]] = []
        if explicit_fetch:
            for spec in cfg.fetches:  # type: ignore[union-attr]
                instr, index, shape = self.output_of(spec.id, spec.spot, "id")
                fetch_items.append((instr, index, shape, spec.name, ""))
        else:
            updates = {f.update_output for f in feeds if f.update_output is not None}
            for index, _ in leaves(self.root.shape):
                if index in updates:
                    continue
                shape = self.output_shape(self.root, index)
                if isinstance(shape, TupleShape) or shape.is_token:
                    continue
                fetch_items.append((self.root, index, shape, None, self.leaf_source(index)))

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
            feed_names = [f.name or _unique(f"arg{k}", used) for k, f in enumerate(feeds[:n_feeds])]
        var_names = fill([f.name for f in feeds[n_feeds:]], [f.hlo_name for f in feeds[n_feeds:]])
        for k, name in enumerate(feed_names + var_names):
            feeds[k] = _renamed_feed(feeds[k], name)
        if explicit_fetch:
            fetch_names = [item[3] or _unique(f"result{k}", used) for k, item in enumerate(fetch_items)]
        else:
            fetch_names = fill(["" for _ in fetch_items], [item[4] for item in fetch_items])
        fetches = tuple(Fetch(k, fetch_names[k], instr.name, index, shape)
                        for k, (instr, index, shape, _, _) in enumerate(fetch_items))
        return Signature(tuple(feeds), fetches, bound,
                         cfg.name if cfg is not None else None, cfg.cpp_class if cfg is not None else None)

    def leaf_source(self, index: tuple[int, ...]) -> str:
        """The HLO name a root output is derived from: the tuple operand that produces it."""
        instr = self.root
        rest = index
        while rest and instr.opcode == Op.TUPLE and self.entry.has(instr.operands[rest[0]]):
            instr = self.entry.get(instr.operands[rest[0]])
            rest = rest[1:]
        return instr.name + "".join(f"_{i}" for i in rest)

    # ------------------------------------------------------------ bound parameters

    def bound(self, claim) -> tuple[Bound, ...]:
        spec = self.config.bound  # type: ignore[union-attr]
        file_spot = spec.spot
        arrays = read_npz(spec.path, lambda message: self.fail(f"{spec.file}: {message}", file_spot, "file"))
        out = []
        for pspec in spec.params:
            p = self.param(pspec.id, pspec.spot)
            claim(p, pspec.spot)
            shape = self.param_shape(p, pspec.spot, "id")
            n = p.parameter_number or 0
            key = pspec.key
            if key is None:
                key = p.name if p.name in arrays and self.param_names[n] not in arrays else self.param_names[n]
            if key not in arrays:
                near = difflib.get_close_matches(key, list(arrays), n=1)
                hint = f"did you mean '{near[0]}'?" if near else "it has: " + (", ".join(sorted(arrays)) or "nothing")
                raise self.fail(f"no array '{key}' in {spec.file} ({hint})", pspec.spot,
                                "key" if pspec.key is not None else "id")
            array = as_dtype(arrays[key], shape.dtype)
            if array is None or array.shape != shape.dims:
                have = describe(arrays[key])
                raise self.fail(f"array '{key}' in {spec.file} is {have}, parameter {p.name} is "
                                f"{shape.text(False)}", pspec.spot, "key" if pspec.key is not None else "id")
            out.append(Bound(n, p.name, np.ascontiguousarray(array)))
        return tuple(out)


def _concrete(shape: ArrayShape) -> ArrayShape:
    """The shape with its layout spelled out (row-major when none was printed)."""
    return shape if shape.layout is not None else shape.with_layout(shape.minor_to_major)


def _renamed_feed(f: Feed, name: str) -> Feed:
    return Feed(f.index, name, f.param_number, f.shape, f.hlo_name, f.kind, f.readonly, f.update_output)


def _index_text(index: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, index)) + "}"
