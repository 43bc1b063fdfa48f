"""YAML config validation: every error names the key path and YAML position;
every corpus config resolves to the signature its meta.json describes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from aotc.errors import AotcError
from aotc.frontend.config import Config, FeedSpec, FetchSpec, load_config, parse_config

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "cfg.yaml").exists())


def first_line(text: str) -> str:
    with pytest.raises(AotcError) as info:
        parse_config(text, "cfg.yaml")
    return info.value.format().splitlines()[0]


# (config text, expected first line of the error)
BAD = {
    "yaml_syntax": (
        "feeds:\n  - id: 0\n   name: x\n",
        "cfg.yaml:3:4: error: invalid YAML: expected <block end>, but found '<block mapping start>'",
    ),
    "yaml_tab": (
        "feeds:\n\t- id: 0\n",
        "cfg.yaml:2:1: error: invalid YAML: found character '\\t' that cannot start any token",
    ),
    "unknown_top_key": (
        "feed:\n  - id: 0\n",
        "cfg.yaml:1:1: error: feed: unknown key (did you mean 'feeds'?)",
    ),
    "unknown_feed_key": (
        "feeds:\n  - id: 0\n    shpe: [2]\n",
        "cfg.yaml:3:5: error: feeds[0].shpe: unknown key (did you mean 'shape'?)",
    ),
    "unknown_key_no_suggestion": (
        "fetches:\n  - id: 0\n    colour: red\n",
        "cfg.yaml:3:5: error: fetches[0].colour: unknown key (expected one of: id, name)",
    ),
    "duplicate_key": (
        "feeds:\n  - id: 0\n    id: 1\n",
        "cfg.yaml:3:5: error: feeds[0].id: duplicate key",
    ),
    "feeds_not_list": (
        "feeds: 3\n",
        "cfg.yaml:1:8: error: feeds: expected a list of feeds, got an integer (3)",
    ),
    "feed_not_mapping": (
        "feeds:\n  - x\n",
        "cfg.yaml:2:5: error: feeds[0]: expected a mapping (a feed), got a string ('x')",
    ),
    "missing_id": (
        "feeds:\n  - name: x\n",
        "cfg.yaml:2:5: error: feeds[0]: missing key 'id' (a parameter number or an instruction name)",
    ),
    "negative_id": (
        "feeds:\n  - id: -1\n",
        "cfg.yaml:2:9: error: feeds[0].id: a parameter number must be >= 0, got -1",
    ),
    "id_wrong_type": (
        "fetches:\n  - id: [1]\n",
        "cfg.yaml:2:9: error: fetches[0].id: expected a root tuple index or an instruction name, got a list",
    ),
    "shape_not_list": (
        "feeds:\n  - id: 0\n    shape: 2x3\n",
        "cfg.yaml:3:12: error: feeds[0].shape: expected a list of dimension sizes such as [2, 3], "
        "got a string ('2x3')",
    ),
    "shape_negative_dim": (
        "feeds:\n  - id: 0\n    shape: [2, -1]\n",
        "cfg.yaml:3:16: error: feeds[0].shape: dimension 1: expected a size >= 0, got an integer (-1)",
    ),
    "unknown_type": (
        "feeds:\n  - id: 0\n    type: f33\n",
        "cfg.yaml:3:11: error: feeds[0].type: unknown element type 'f33' (did you mean f32?)",
    ),
    "type_token": (
        "feeds:\n  - id: 0\n    type: token\n",
        "cfg.yaml:3:11: error: feeds[0].type: unknown element type 'token'",
    ),
    "name_not_identifier": (
        "feeds:\n  - id: 0\n    name: 2x\n",
        "cfg.yaml:3:11: error: feeds[0].name: '2x' is not a C identifier",
    ),
    "name_with_dot": (
        "fetches:\n  - id: 0\n    name: x.y\n",
        "cfg.yaml:3:11: error: fetches[0].name: 'x.y' is not a C identifier",
    ),
    "name_keyword": (
        "name: int\n",
        "cfg.yaml:1:7: error: name: 'int' is a C/C++ keyword",
    ),
    "name_cpp_keyword": (
        "fetches:\n  - id: 0\n    name: class\n",
        "cfg.yaml:3:11: error: fetches[0].name: 'class' is a C/C++ keyword",
    ),
    "name_number": (
        "feeds:\n  - id: 0\n    name: 12\n",
        "cfg.yaml:3:11: error: feeds[0].name: expected a non-empty string, got an integer (12)",
    ),
    "duplicate_name_feed_fetch": (
        "feeds:\n  - id: 0\n    name: x\nfetches:\n  - id: 0\n    name: x\n",
        "cfg.yaml:6:11: error: fetches[0].name: duplicate name 'x' (also feeds[0].name)",
    ),
    "duplicate_name_variable": (
        "feeds:\n  - id: 0\n    name: v\nvariables:\n  - id: 1\n    name: v\n",
        "cfg.yaml:6:11: error: variables[0].name: duplicate name 'v' (also feeds[0].name)",
    ),
    "cpp_class_bad_part": (
        "cpp_class: foo::3bar::Comp\n",
        "cfg.yaml:1:12: error: cpp_class: 'foo::3bar::Comp' is not a C++ class name (ns::Class): "
        "'3bar' is not a C identifier",
    ),
    "cpp_class_empty_part": (
        "cpp_class: foo::::Comp\n",
        "cfg.yaml:1:12: error: cpp_class: 'foo::::Comp' is not a C++ class name (ns::Class): empty name",
    ),
    "readonly_not_bool": (
        "variables:\n  - id: 0\n    readonly: yes please\n",
        "cfg.yaml:3:15: error: variables[0].readonly: expected true or false, got a string ('yes please')",
    ),
    "readonly_with_update": (
        "variables:\n  - id: 0\n    readonly: true\n    update: 0\n",
        "cfg.yaml:4:13: error: variables[0].update: a readonly variable cannot have an update",
    ),
    "bound_without_file": (
        "bound:\n  params:\n    - id: 0\n",
        "cfg.yaml:2:3: error: bound: missing key 'file' (the .npz with the parameters' values)",
    ),
    "bound_without_params": (
        "bound:\n  file: w.npz\n",
        "cfg.yaml:2:3: error: bound: expected a non-empty list of parameters under 'params'",
    ),
    "bound_param_unknown_key": (
        "bound:\n  file: w.npz\n  params:\n    - id: 0\n      kye: w\n",
        "cfg.yaml:5:7: error: bound.params[0].kye: unknown key (did you mean 'key'?)",
    ),
    "top_level_list": (
        "- id: 0\n",
        "cfg.yaml:1:1: error: expected a mapping (the config), got a list",
    ),
    "top_level_scalar": (
        "hello\n",
        "cfg.yaml:1:1: error: expected a mapping (the config), got a string ('hello')",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config(case):
    text, expected = BAD[case]
    assert first_line(text) == expected


def test_error_carries_path_file_and_caret():
    with pytest.raises(AotcError) as info:
        parse_config("feeds:\n  - id: 0\n    shape: [2, x]\n", "dir/cfg.yaml")
    err = info.value
    assert err.path == "feeds[0].shape"
    assert err.file == "dir/cfg.yaml"
    assert (err.loc.line, err.loc.col) == (3, 16)
    assert err.format().splitlines()[1:] == ["    shape: [2, x]", "               ^"]


def test_good_config_values():
    cfg = parse_config(
        "name: matmul\n"
        "cpp_class: foo::bar::MatMulComp\n"
        "feeds:\n"
        "  - id: x_hold\n"
        "    name: x\n"
        "    shape: [2, 3]\n"
        "    type: f32\n"
        "  - id: '%y.1'\n"
        "fetches:\n"
        "  - id: 0\n"
        "    name: x_y_prod\n"
        "variables:\n"
        "  - id: 2\n"
        "    readonly: true\n"
        "bound:\n"
        "  file: weights.npz\n"
        "  params:\n"
        "    - id: 3\n"
        "      key: w1\n",
        "cfg.yaml", base_dir="/models")
    assert cfg.name == "matmul"
    assert cfg.cpp_class == "foo::bar::MatMulComp"
    assert cfg.feeds == (FeedSpec("x_hold", "x", (2, 3), "f32"), FeedSpec("y.1"))
    assert cfg.fetches == (FetchSpec(0, "x_y_prod"),)
    assert cfg.variables[0].id == 2 and cfg.variables[0].readonly and cfg.variables[0].update is None
    assert cfg.bound.path == "/models/weights.npz" and cfg.bound.params[0].key == "w1"
    assert cfg.feeds[0].spot.at("shape")[0] == "feeds[0].shape"
    assert cfg.feeds[0].spot.at("shape")[1].line == 6


def test_feeds_and_fetches_are_optional():
    cfg = parse_config("name: m\n", "cfg.yaml")
    assert cfg == Config("cfg.yaml", name="m")
    assert parse_config("# nothing but a comment\n", "cfg.yaml") == Config("cfg.yaml")


def test_unreadable_config_file(tmp_path):
    with pytest.raises(AotcError) as info:
        load_config(tmp_path / "missing.yaml")
    assert info.value.format() == f"{tmp_path / 'missing.yaml'}: error: cannot read config: No such file or directory"


# ---------------------------------------------------------------- the corpus configs


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("form", ["model.hlo", "model.opt.hlo"])
def test_corpus_config_resolves(case, form):
    from aotc.frontend import parse_hlo_file
    from aotc.frontend.signature import resolve_signature

    module = parse_hlo_file(str(CORPUS / case / form))
    cfg = load_config(CORPUS / case / "cfg.yaml")
    meta = json.loads((CORPUS / case / "meta.json").read_text())
    sig = resolve_signature(module, cfg)
    assert [f.name for f in sig.feeds] == [f.name for f in cfg.feeds]
    for feed, spec in zip(sig.feeds, cfg.feeds):
        assert feed.param_number == spec.id
        assert list(feed.shape.dims) == list(spec.shape) and feed.shape.dtype.name == spec.type
        assert feed.shape.layout is not None  # from entry_computation_layout
    assert [(f.name, list(f.shape.dims), f.shape.dtype.name) for f in sig.fetches] == \
        [(m["name"], m["shape"], m["type"]) for m in meta["fetches"]]
    for fetch in sig.fetches:
        assert fetch.instruction == module.entry_computation.root
    donated = set(meta.get("donate_argnums", []))
    assert {f.param_number for f in sig.feeds if f.kind == "variable"} == donated


@pytest.mark.parametrize("name,why", [
    ("pthread", "would define pthread_create, a C library function"),
    ("sem", "would define sem_destroy, a C library function"),
    ("thrd", "would define thrd_create"),
    ("aotc_pool", "clash with the embedded runtime"),
    ("AOTCnet", "clash with the embedded runtime"),
    ("_model", "begins with an underscore"),
    ("int", "is a C/C++ keyword"),
])
def test_model_names_that_would_clash_in_c_are_refused(name, why):
    from aotc.frontend.c_names import prefix_problem
    assert why in prefix_problem(name)
    with pytest.raises(AotcError) as e:
        parse_config(f"name: {name}\n", "cfg.yaml")
    assert why in e.value.format() and "cfg.yaml:1:7" in e.value.format()


@pytest.mark.parametrize("name", ["model", "mobilenet", "pthread_pool_model", "semantic", "tokenizer"])
def test_ordinary_model_names_are_kept(name):
    from aotc.frontend.c_names import prefix_problem
    assert prefix_problem(name) is None


def test_a_clashing_name_from_the_output_file_gets_a_prefix():
    from aotc import driver
    from aotc.options import CompileOptions
    fe = driver.frontend("m.hlo", None, CompileOptions(),
                         text="HloModule m\n\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}\n")
    assert driver.default_name("build/libpthread", fe, CompileOptions()) == "m_pthread"


def test_a_control_character_is_located():
    with pytest.raises(AotcError) as e:
        parse_config("feeds:\n  - id: 0\n    name: a\x02b\n", "cfg.yaml")
    assert e.value.format().startswith("cfg.yaml:3:12: error: invalid YAML: character U+0002 is not allowed")
