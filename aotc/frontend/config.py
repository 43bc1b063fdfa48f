"""The YAML feeds/fetches config: reading and validating it on its own.

`load_config` turns a config file into frozen specs, checking everything that
can be checked without the HLO module (keys, value types, C identifiers,
duplicate names) and keeping each entry's YAML key path and line so that later
checks against the module (`aotc.frontend.signature`) report errors at the
right place. Nothing here looks at the module.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import AotcError
from ..hlo.dtypes import DTYPES
from ..hlo.ir import Loc
from .files import CONFIG_LIMIT, read_input

Id = int | str  # a parameter number / root tuple index, or an instruction name / op_name


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
    text: str = field(default="", compare=False, repr=False)
    spots: tuple[tuple[str, Spot], ...] = field(default=(), compare=False, repr=False)  # top-level keys

    def error(self, message: str, path: str | None, loc: Loc | None = None) -> AotcError:
        """An AotcError about this config at key `path` (and YAML position `loc`)."""
        line = None
        if loc is not None:
            lines = self.text.split("\n")
            if 1 <= loc.line <= len(lines):
                line = lines[loc.line - 1]
        return AotcError(message, loc, line, path=path, file=self.file)

    def spot(self, key: str) -> Spot:
        for k, s in self.spots:
            if k == key:
                return s
        return Spot(key)


C_KEYWORDS = frozenset(
    # C11
    "auto break case char const continue default do double else enum extern float for goto if inline "
    "int long register restrict return short signed sizeof static struct switch typedef union "
    "unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary "
    "_Noreturn _Static_assert _Thread_local "
    # C++ (the optional wrapper class uses the same names)
    "alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl "
    "concept consteval constexpr constinit const_cast co_await co_return co_yield decltype delete "
    "dynamic_cast explicit export false friend mutable namespace new noexcept not not_eq nullptr "
    "operator or or_eq private protected public reinterpret_cast requires static_assert "
    "static_cast template this thread_local throw true try typeid typename using virtual wchar_t "
    "xor xor_eq".split()
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def identifier_problem(name: str) -> str | None:
    """Why `name` cannot be a C identifier, or None if it can."""
    if not _IDENT.match(name):
        return f"'{name}' is not a C identifier"
    if name in C_KEYWORDS:
        return f"'{name}' is a C/C++ keyword"
    return None


# The functions a model's prefix P gets (P_create, P_run, ...), and the C library, POSIX
# threads and C11 threads functions one of them would be for some prefix: a model named
# `pthread` would define pthread_create.
API_SUFFIXES = ("create", "destroy", "run", "run_with", "error_msg", "set_num_threads", "set_parallel_for",
                "arg_data", "set_arg_data", "result_data", "set_result_data", "set_arena", "lookup_arg_index",
                "lookup_result_index", "arg_name", "arg_type", "arg_rank", "arg_dims", "arg_bytes",
                "arg_is_variable", "result_name", "result_type", "result_rank", "result_dims", "result_bytes",
                "instance", "alloc_mode", "parallel_for_fn")
SYSTEM_SYMBOLS = frozenset((
    "pthread_create pthread_key_create pthread_attr_destroy pthread_mutex_destroy pthread_mutexattr_destroy "
    "pthread_cond_destroy pthread_condattr_destroy pthread_rwlock_destroy pthread_rwlockattr_destroy "
    "pthread_barrier_destroy pthread_barrierattr_destroy pthread_spin_destroy sem_destroy timer_create "
    "thrd_create mtx_destroy cnd_destroy tss_create posix_spawnattr_destroy posix_spawn_file_actions_destroy "
    "pthread_attr_destroy").split())


def prefix_problem(name: str) -> str | None:
    """Why `name` cannot prefix a model's C symbols (P_create, P_instance, ...), or None."""
    bad = identifier_problem(name)
    if bad:
        return bad
    if name.startswith("_"):
        return f"'{name}' begins with an underscore (reserved for the C implementation)"
    if name.lower().startswith("aotc"):
        return f"'{name}' would clash with the embedded runtime's aotc_* names"
    clash = sorted(f"{name}_{s}" for s in API_SUFFIXES if f"{name}_{s}" in SYSTEM_SYMBOLS)
    if clash:
        return f"'{name}' would define {clash[0]}, a C library function"
    return None


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
    reader = _Reader(text, file)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise reader.error("invalid YAML: nested too deeply", None, None) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = e.problem or e.context or "invalid YAML"
        loc = Loc(file, mark.line + 1, mark.column + 1) if mark is not None else None
        raise reader.error(f"invalid YAML: {what}", None, loc) from None
    except yaml.YAMLError as e:
        raise reader.error(f"invalid YAML: {e}", None, None) from None
    if root is None:  # an empty file: every key takes its default
        return Config(file, text=text)
    try:
        return reader.config(root, base_dir or os.getcwd())
    except RecursionError:
        raise reader.error("invalid YAML: nested too deeply", None, None) from None


_TOP_KEYS = ("name", "cpp_class", "feeds", "fetches", "variables", "bound")
_FEED_KEYS = ("id", "name", "shape", "type")
_FETCH_KEYS = ("id", "name")
_VARIABLE_KEYS = ("id", "name", "readonly", "update")
_BOUND_KEYS = ("file", "params")
_BOUND_PARAM_KEYS = ("id", "key")


def _kind(value: Any, node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ('{value}')"
    return f"a {type(value).__name__}"


class _Reader:
    """Walks the composed YAML node tree, raising located errors."""

    def __init__(self, text: str, file: str):
        self.text = text
        self.file = file
        self.constructor = yaml.constructor.SafeConstructor()

    def error(self, message: str, path: str | None, loc: Loc | None) -> AotcError:
        return Config(self.file, text=self.text).error(message, path, loc)

    def loc(self, node: Node) -> Loc:
        return Loc(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def scalar(self, node: Node) -> Any:
        if not isinstance(node, ScalarNode):
            return None
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as e:
            raise self.error(f"invalid value: {e}", None, self.loc(node)) from None

    def fail_type(self, node: Node, path: str, expected: str) -> AotcError:
        return self.error(f"expected {expected}, got {_kind(self.scalar(node), node)}", path, self.loc(node))

    def mapping(self, node: Node, path: str, allowed: tuple[str, ...], what: str) -> dict[str, Node]:
        if not isinstance(node, MappingNode):
            raise self.fail_type(node, path, f"a mapping ({what})")
        out: dict[str, Node] = {}
        for knode, vnode in node.value:
            key = self.scalar(knode)
            kpath = f"{path}.{key}" if path else str(key)
            if not isinstance(key, str):
                raise self.error(f"keys must be strings, got {_kind(key, knode)}", path or None, self.loc(knode))
            if key not in allowed:
                near = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean '{near[0]}'?" if near else "expected one of: " + ", ".join(allowed)
                raise self.error(f"unknown key ({hint})", kpath, self.loc(knode))
            if key in out:
                raise self.error("duplicate key", kpath, self.loc(knode))
            out[key] = vnode
        return out

    def spot(self, node: Node, path: str, entries: dict[str, Node]) -> Spot:
        return Spot(path, self.loc(node), tuple((k, self.loc(v)) for k, v in entries.items()))

    def sequence(self, node: Node, path: str, what: str) -> list[Node]:
        if not isinstance(node, SequenceNode):
            raise self.fail_type(node, path, f"a list of {what}")
        return list(node.value)

    def string(self, node: Node, path: str) -> str:
        value = self.scalar(node)
        if not isinstance(value, str) or not value:
            raise self.fail_type(node, path, "a non-empty string")
        return value

    def identifier(self, node: Node, path: str) -> str:
        value = self.string(node, path)
        problem = identifier_problem(value)
        if problem:
            raise self.error(problem, path, self.loc(node))
        return value

    def boolean(self, node: Node, path: str) -> bool:
        value = self.scalar(node)
        if not isinstance(value, bool):
            raise self.fail_type(node, path, "true or false")
        return value

    def ident(self, node: Node, path: str, what: str) -> Id:
        value = self.scalar(node)
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise self.error(f"{what} must be >= 0, got {value}", path, self.loc(node))
            return value
        if isinstance(value, str) and value.lstrip("%"):
            return value.lstrip("%")
        raise self.fail_type(node, path, f"{what} or an instruction name")

    def shape(self, node: Node, path: str) -> tuple[int, ...]:
        if not isinstance(node, SequenceNode):
            raise self.fail_type(node, path, "a list of dimension sizes such as [2, 3]")
        dims = []
        for i, item in enumerate(node.value):
            d = self.scalar(item)
            if not isinstance(d, int) or isinstance(d, bool) or d < 0:
                raise self.error(f"dimension {i}: expected a size >= 0, got {_kind(d, item)}", path, self.loc(item))
            dims.append(d)
        return tuple(dims)

    def element_type(self, node: Node, path: str) -> str:
        value = self.scalar(node)
        if not isinstance(value, str):
            raise self.fail_type(node, path, "an element type such as f32")
        if value not in DTYPES or value == "token":
            names = [n for n in DTYPES if n != "token"]
            near = difflib.get_close_matches(value, names, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise self.error(f"unknown element type '{value}'{hint}", path, self.loc(node))
        return value

    # ------------------------------------------------------------ sections

    def config(self, root: Node, base_dir: str) -> Config:
        top = self.mapping(root, "", _TOP_KEYS, "the config")
        name = self.identifier(top["name"], "name") if "name" in top else None
        if name is not None and prefix_problem(name):
            raise self.error(prefix_problem(name), "name", self.loc(top["name"]))
        cpp_class = self.cpp_class(top["cpp_class"]) if "cpp_class" in top else None
        feeds = self.feeds(top["feeds"]) if "feeds" in top else None
        fetches = self.fetches(top["fetches"]) if "fetches" in top else None
        variables = self.variables(top["variables"]) if "variables" in top else ()
        bound = self.bound(top["bound"], base_dir) if "bound" in top else None
        cfg = Config(self.file, name, cpp_class, feeds, fetches, variables, bound, self.text,
                     tuple((k, Spot(k, self.loc(v))) for k, v in top.items()))
        self.check_names(cfg)
        return cfg

    def cpp_class(self, node: Node) -> str:
        value = self.string(node, "cpp_class")
        for part in value.split("::"):
            problem = identifier_problem(part) if part else "empty name"
            if problem:
                raise self.error(f"'{value}' is not a C++ class name (ns::Class): {problem}",
                                 "cpp_class", self.loc(node))
        return value

    def feeds(self, node: Node) -> tuple[FeedSpec, ...]:
        out = []
        for i, item in enumerate(self.sequence(node, "feeds", "feeds")):
            path = f"feeds[{i}]"
            e = self.mapping(item, path, _FEED_KEYS, "a feed")
            out.append(FeedSpec(
                id=self.required_id(item, e, path, "a parameter number"),
                name=self.identifier(e["name"], f"{path}.name") if "name" in e else None,
                shape=self.shape(e["shape"], f"{path}.shape") if "shape" in e else None,
                type=self.element_type(e["type"], f"{path}.type") if "type" in e else None,
                spot=self.spot(item, path, e),
            ))
        return tuple(out)

    def fetches(self, node: Node) -> tuple[FetchSpec, ...]:
        out = []
        for i, item in enumerate(self.sequence(node, "fetches", "fetches")):
            path = f"fetches[{i}]"
            e = self.mapping(item, path, _FETCH_KEYS, "a fetch")
            out.append(FetchSpec(
                id=self.required_id(item, e, path, "a root tuple index"),
                name=self.identifier(e["name"], f"{path}.name") if "name" in e else None,
                spot=self.spot(item, path, e),
            ))
        return tuple(out)

    def variables(self, node: Node) -> tuple[VariableSpec, ...]:
        out = []
        for i, item in enumerate(self.sequence(node, "variables", "variables")):
            path = f"variables[{i}]"
            e = self.mapping(item, path, _VARIABLE_KEYS, "a variable")
            readonly = self.boolean(e["readonly"], f"{path}.readonly") if "readonly" in e else False
            update = self.ident(e["update"], f"{path}.update", "a root tuple index") if "update" in e else None
            if readonly and update is not None:
                raise self.error("a readonly variable cannot have an update", f"{path}.update",
                                 self.loc(e["update"]))
            out.append(VariableSpec(
                id=self.required_id(item, e, path, "a parameter number"),
                name=self.identifier(e["name"], f"{path}.name") if "name" in e else None,
                readonly=readonly,
                update=update,
                spot=self.spot(item, path, e),
            ))
        return tuple(out)

    def bound(self, node: Node, base_dir: str) -> BoundSpec:
        e = self.mapping(node, "bound", _BOUND_KEYS, "bound parameters")
        if "file" not in e:
            raise self.error("missing key 'file' (the .npz with the parameters' values)", "bound", self.loc(node))
        file = self.string(e["file"], "bound.file")
        params = []
        for i, item in enumerate(self.sequence(e["params"], "bound.params", "parameters") if "params" in e else []):
            path = f"bound.params[{i}]"
            p = self.mapping(item, path, _BOUND_PARAM_KEYS, "a bound parameter")
            params.append(BoundParamSpec(
                id=self.required_id(item, p, path, "a parameter number"),
                key=self.string(p["key"], f"{path}.key") if "key" in p else None,
                spot=self.spot(item, path, p),
            ))
        if not params:
            raise self.error("expected a non-empty list of parameters under 'params'", "bound", self.loc(node))
        return BoundSpec(file, os.path.join(base_dir, file), tuple(params), self.spot(node, "bound", e))

    def required_id(self, node: Node, entries: dict[str, Node], path: str, what: str) -> Id:
        if "id" not in entries:
            raise self.error(f"missing key 'id' ({what} or an instruction name)", path, self.loc(node))
        return self.ident(entries["id"], f"{path}.id", what)

    def check_names(self, cfg: Config) -> None:
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
