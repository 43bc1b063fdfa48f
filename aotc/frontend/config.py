"""The YAML feeds/fetches config: its specs, and reading a config file into them.

`load_config` turns a config file into frozen specs, checking everything that
can be checked without the HLO module (keys, value types, C identifiers,
duplicate names) and keeping each entry's YAML key path and line so that later
checks against the module (`aotc.frontend.signature`) report errors at the
right place. This module owns the sections (which keys each takes, what they
mean); reading typed values from YAML nodes is `config_reader`'s. Nothing here
looks at the module.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

import yaml
from yaml.nodes import Node

from ..errors import AotcError
from ..hlo.ir import Loc
from .c_names import identifier_problem, prefix_problem
from .config_reader import Id, NodeReader, config_error
from .files import CONFIG_LIMIT, read_input


@dataclass(frozen=True, slots=True)
class Spot:
    """Where a config entry sits: its key path ("feeds[2]") and YAML positions
    of the entry and of each of its keys' values."""

    path: str
    loc: Loc | None = None
    keys: tuple[tuple[str, Loc], ...] = ()

    def at(self, key: str | None = None) -> tuple[str, Loc | None]:
        """(key path, location) of one of the entry's keys, or of the entry."""
        if key is None:
            return self.path, self.loc
        for k, loc in self.keys:
            if k == key:
                return f"{self.path}.{key}", loc
        return f"{self.path}.{key}", self.loc


@dataclass(frozen=True, slots=True)
class FeedSpec:
    id: Id
    name: str | None = None
    shape: tuple[int, ...] | None = None
    type: str | None = None
    spot: Spot = field(default=Spot("feeds"), compare=False)


@dataclass(frozen=True, slots=True)
class FetchSpec:
    id: Id
    name: str | None = None
    spot: Spot = field(default=Spot("fetches"), compare=False)


@dataclass(frozen=True, slots=True)
class VariableSpec:
    id: Id
    name: str | None = None
    readonly: bool = False
    update: Id | None = None  # fetch id of the output that writes it back
    spot: Spot = field(default=Spot("variables"), compare=False)


@dataclass(frozen=True, slots=True)
class BoundParamSpec:
    id: Id
    key: str | None = None  # npz key; default: the parameter's derived name
    spot: Spot = field(default=Spot("bound.params"), compare=False)


@dataclass(frozen=True, slots=True)
class BoundSpec:
    file: str  # as written in the config
    path: str  # resolved against the config file's directory
    params: tuple[BoundParamSpec, ...]
    spot: Spot = field(default=Spot("bound"), compare=False)


@dataclass(frozen=True, slots=True)
class Config:
    file: str  # the config file name, as given
    name: str | None = None
    cpp_class: str | None = None
    feeds: tuple[FeedSpec, ...] | None = None  # None: every free parameter, in order
    fetches: tuple[FetchSpec, ...] | None = None  # None: every output of the root
    variables: tuple[VariableSpec, ...] = ()
    bound: BoundSpec | None = None
    custom_calls: tuple[str, ...] = ()  # custom-call targets the application implements (docs/custom_calls.md)
    text: str = field(default="", compare=False, repr=False)
    spots: tuple[tuple[str, Spot], ...] = field(default=(), compare=False, repr=False)  # top-level keys

    def error(self, message: str, path: str | None, loc: Loc | None = None) -> AotcError:
        """An AotcError about this config at key `path` (and YAML position `loc`)."""
        return config_error(self.text, self.file, message, path, loc)

    def spot(self, key: str) -> Spot:
        for k, s in self.spots:
            if k == key:
                return s
        return Spot(key)


# ---------------------------------------------------------------- loading


def load_config(path: str | os.PathLike) -> Config:
    """Read and validate a config file (AotcError on any problem)."""
    file = os.fspath(path)
    data = read_input(file, "config", CONFIG_LIMIT)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise AotcError("config is not UTF-8 text", Loc(file, line, col)) from None
    return parse_config(text, file, os.path.dirname(os.path.abspath(file)))


def parse_config(text: str, file: str = "<config>", base_dir: str | None = None) -> Config:
    """Validate config text; `base_dir` resolves `bound.file` (default: the current directory)."""
    reader = NodeReader(text, file)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise reader.error("invalid YAML: nested too deeply", None, None) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = e.problem or e.context or "invalid YAML"
        loc = Loc(file, mark.line + 1, mark.column + 1) if mark is not None else None
        raise reader.error(f"invalid YAML: {what}", None, loc) from None
    except yaml.reader.ReaderError as e:  # a character YAML refuses: at its position in the text
        pos = min(max(e.position, 0), len(text))
        line = text.count("\n", 0, pos) + 1
        loc = Loc(file, line, pos - (text.rfind("\n", 0, pos) + 1) + 1)
        raise reader.error(f"invalid YAML: character U+{e.character:04X} is not allowed", None, loc) from None
    except yaml.YAMLError as e:
        raise reader.error(f"invalid YAML: {e}", None, None) from None
    if root is None:  # an empty file: every key takes its default
        return Config(file, text=text)
    try:
        return _config(reader, root, base_dir or os.getcwd())
    except RecursionError:
        raise reader.error("invalid YAML: nested too deeply", None, None) from None


def bound_as_feeds(cfg: Config) -> Config:
    """`cfg` with its bound parameters made feeds (`--weights fed`): listed after the
    config's own feeds when it lists them, named as a feed without a name would be."""
    if cfg.bound is None:
        return cfg
    feeds = cfg.feeds
    if feeds is not None:
        feeds = feeds + tuple(FeedSpec(p.id, spot=p.spot) for p in cfg.bound.params)
    return replace(cfg, feeds=feeds, bound=None)


# ---------------------------------------------------------------- sections

_TOP_KEYS = ("name", "cpp_class", "feeds", "fetches", "variables", "bound", "custom_calls")
_FEED_KEYS = ("id", "name", "shape", "type")
_FETCH_KEYS = ("id", "name")
_VARIABLE_KEYS = ("id", "name", "readonly", "update")
_BOUND_KEYS = ("file", "params")
_BOUND_PARAM_KEYS = ("id", "key")


def _config(r: NodeReader, root: Node, base_dir: str) -> Config:
    top = r.mapping(root, "", _TOP_KEYS, "the config")
    name = r.identifier(top["name"], "name") if "name" in top else None
    if name is not None and prefix_problem(name):
        raise r.error(prefix_problem(name), "name", r.loc(top["name"]))
    cpp_class = _cpp_class(r, top["cpp_class"]) if "cpp_class" in top else None
    feeds = _feeds(r, top["feeds"]) if "feeds" in top else None
    fetches = _fetches(r, top["fetches"]) if "fetches" in top else None
    variables = _variables(r, top["variables"]) if "variables" in top else ()
    bound = _bound(r, top["bound"], base_dir) if "bound" in top else None
    custom_calls = _custom_calls(r, top["custom_calls"]) if "custom_calls" in top else ()
    cfg = Config(r.file, name, cpp_class, feeds, fetches, variables, bound, custom_calls, r.text,
                 tuple((k, Spot(k, r.loc(v))) for k, v in top.items()))
    _check_names(cfg)
    return cfg


def _spot(r: NodeReader, node: Node, path: str, entries: dict[str, Node]) -> Spot:
    return Spot(path, r.loc(node), tuple((k, r.loc(v)) for k, v in entries.items()))


def _cpp_class(r: NodeReader, node: Node) -> str:
    value = r.string(node, "cpp_class")
    for part in value.split("::"):
        problem = identifier_problem(part) if part else "empty name"
        if problem:
            raise r.error(f"'{value}' is not a C++ class name (ns::Class): {problem}",
                          "cpp_class", r.loc(node))
    return value


def _feeds(r: NodeReader, node: Node) -> tuple[FeedSpec, ...]:
    out = []
    for i, item in enumerate(r.sequence(node, "feeds", "feeds")):
        path = f"feeds[{i}]"
        e = r.mapping(item, path, _FEED_KEYS, "a feed")
        out.append(FeedSpec(
            id=r.required_id(item, e, path, "a parameter number"),
            name=r.identifier(e["name"], f"{path}.name") if "name" in e else None,
            shape=r.shape(e["shape"], f"{path}.shape") if "shape" in e else None,
            type=r.element_type(e["type"], f"{path}.type") if "type" in e else None,
            spot=_spot(r, item, path, e),
        ))
    return tuple(out)


def _fetches(r: NodeReader, node: Node) -> tuple[FetchSpec, ...]:
    out = []
    for i, item in enumerate(r.sequence(node, "fetches", "fetches")):
        path = f"fetches[{i}]"
        e = r.mapping(item, path, _FETCH_KEYS, "a fetch")
        out.append(FetchSpec(
            id=r.required_id(item, e, path, "a root tuple index"),
            name=r.identifier(e["name"], f"{path}.name") if "name" in e else None,
            spot=_spot(r, item, path, e),
        ))
    return tuple(out)


def _variables(r: NodeReader, node: Node) -> tuple[VariableSpec, ...]:
    out = []
    for i, item in enumerate(r.sequence(node, "variables", "variables")):
        path = f"variables[{i}]"
        e = r.mapping(item, path, _VARIABLE_KEYS, "a variable")
        readonly = r.boolean(e["readonly"], f"{path}.readonly") if "readonly" in e else False
        update = r.ident(e["update"], f"{path}.update", "a root tuple index") if "update" in e else None
        if readonly and update is not None:
            raise r.error("a readonly variable cannot have an update", f"{path}.update",
                          r.loc(e["update"]))
        out.append(VariableSpec(
            id=r.required_id(item, e, path, "a parameter number"),
            name=r.identifier(e["name"], f"{path}.name") if "name" in e else None,
            readonly=readonly,
            update=update,
            spot=_spot(r, item, path, e),
        ))
    return tuple(out)


def _bound(r: NodeReader, node: Node, base_dir: str) -> BoundSpec:
    e = r.mapping(node, "bound", _BOUND_KEYS, "bound parameters")
    if "file" not in e:
        raise r.error("missing key 'file' (the .npz with the parameters' values)", "bound", r.loc(node))
    file = r.string(e["file"], "bound.file")
    params = []
    for i, item in enumerate(r.sequence(e["params"], "bound.params", "parameters") if "params" in e else []):
        path = f"bound.params[{i}]"
        p = r.mapping(item, path, _BOUND_PARAM_KEYS, "a bound parameter")
        params.append(BoundParamSpec(
            id=r.required_id(item, p, path, "a parameter number"),
            key=r.string(p["key"], f"{path}.key") if "key" in p else None,
            spot=_spot(r, item, path, p),
        ))
    if not params:
        raise r.error("expected a non-empty list of parameters under 'params'", "bound", r.loc(node))
    return BoundSpec(file, os.path.join(base_dir, file), tuple(params), _spot(r, node, "bound", e))


def _custom_calls(r: NodeReader, node: Node) -> tuple[str, ...]:
    """custom_calls: [target, ...] -- each a custom_call_target string, listed once."""
    out: list[str] = []
    for i, item in enumerate(r.sequence(node, "custom_calls", "custom-call targets")):
        path = f"custom_calls[{i}]"
        target = r.string(item, path)
        if target in out:
            raise r.error(f"custom-call target '{target}' is listed twice", path, r.loc(item))
        if any(c in target for c in '"\\') or not target.isprintable():
            raise r.error(f"'{target}' is not a custom-call target name", path, r.loc(item))
        out.append(target)
    return tuple(sorted(out))


def _check_names(cfg: Config) -> None:
    seen: dict[str, str] = {}
    groups = [cfg.feeds or (), cfg.fetches or (), cfg.variables]
    for group in groups:
        for spec in group:
            if spec.name is None:
                continue
            path, loc = spec.spot.at("name")
            if spec.name in seen:
                raise cfg.error(f"duplicate name '{spec.name}' (also {seen[spec.name]})", path, loc)
            seen[spec.name] = path
