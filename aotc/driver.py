"""The compiler driver: HLO (or StableHLO) file + config -> checked module -> Program -> C text.

The stages in order: read, parse, verify, fill elided constants, resolve the
signature, lower, emit. Toolchain work (building objects, loading, running)
lives in `aotc.toolchain`; this module writes no files but the dumps. A caller may
pass a `Progress` callback to hear each stage's name as it starts.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, replace
from typing import Callable, Optional

from .emit_c.bench import emit_bench_program
from .emit_c.header import emit_header
from .emit_c.constants import ENCODINGS, Blob, ConstText, join_parts, resolve_encoding
from .emit_c.programs import emit_test_program
from .emit_c.source import describe_program, emit_source_parts
from .errors import AotcError
from .frontend import parse_model
from .frontend import read_model as read_model_file
from .frontend.c_names import prefix_problem
from .frontend.config import bound_as_feeds, load_config
from .frontend.constants import resolve_constants
from .frontend.signature import Signature, resolve_signature
from .frontend.tuple_params import flatten_tuple_parameters
from .hlo.ir import Module
from .hlo.printer import print_module
from .hlo.verifier import verify
from .ops.registry import shape_rule
from .lower.pipeline import LowerResult, STAGES, lower
from .lower.program import Program
from .options import CompileOptions
from .toolchain.isa import has_fma
from .toolchain.npz_data import read_test_data
from .toolchain.targets import resolve_target

PROGRAMS = {"test": "_test.c", "bench": "_benchmark.c"}  # --emit kind -> file suffix of PREFIX


# progress(stage, seconds): `seconds` is None when `stage` starts, the time it took when a
# timed step (the C compiler) is done
Progress = Callable[[str, Optional[float]], None]


def _quiet(stage: str, seconds: float | None = None) -> None:
    pass


@dataclass(frozen=True)
class Frontend:
    module: Module
    signature: Signature
    source_text: str
    path: str
    inputs: tuple[str, ...] = ()  # every file read: model, config, .npz files (for a depfile)


@dataclass(frozen=True)
class Generated:
    name: str  # C prefix
    header_name: str  # file name the .c includes
    c_parts: tuple[str | ConstText, ...]  # the .c: text, and constants streamed as it is written
    h_text: str
    lowered: LowerResult
    programs: tuple[tuple[str, str], ...] = ()  # (file suffix, text): PREFIX_test.c, PREFIX_benchmark.c
    blob: Blob | None = None  # with the incbin encoding: the constants of `PREFIX.c.bin`
    encoding: str = "array"  # the constants' encoding `auto` resolved to

    @property
    def c_text(self) -> str:
        """The whole .c in one string (small programs, tests; `write_parts` streams it)."""
        return join_parts(self.c_parts)


def read_model(path: str, options: CompileOptions = CompileOptions()) -> tuple[str, str]:
    """(text, the name its errors show) of a model file in any accepted format: text as it is,
    binary formats converted through jaxlib, symbolic dimensions set by `options.shapes`."""
    return read_model_file(path, dict(options.shapes))


def frontend(model: str, config=None, options: CompileOptions = CompileOptions(), text: str | None = None,
             keep_elided: bool = False, progress: Progress | None = None) -> Frontend:
    """Parse, verify and resolve a model; `config` is a path, a Config, or None. With
    `keep_elided` (reporting), elided constants nothing fills stay elided."""
    progress = progress or _quiet
    progress("read", None)
    source, shown = (text, model) if text is not None else read_model(model, options)  # any format -> text
    progress("parse", None)
    module = parse_model(source, shown)                                 # HLO or StableHLO text -> IR
    progress("verify", None)
    verify(module, source, shape_rule)                                  # structure, shapes
    if not (keep_elided and options.elided_constants == "error" and options.bind_constants is None):
        module = resolve_constants(module, options.elided_constants,    # elided constants
                                   options.bind_constants, source)
    module = flatten_tuple_parameters(module)                           # one feed per leaf of a tuple parameter
    progress("signature", None)
    inputs = [model] if text is None else []
    if options.bind_constants is not None:
        inputs.append(options.bind_constants)
    if isinstance(config, (str, os.PathLike)):
        inputs.append(os.fspath(config))
        config = load_config(config)
    if options.weights not in ("bound", "fed", "file"):
        raise AotcError(f"--weights: '{options.weights}' is not a weights mode (use bound, fed or file)")
    if config is not None and config.bound is not None:
        if options.weights == "fed":                                    # bound parameters become feeds
            config = bound_as_feeds(config)
        else:
            inputs.append(config.bound.path)
    sig = resolve_signature(module, config)                             # feeds, fetches, names
    return Frontend(module, sig, source, model, tuple(inputs))


def default_name(out: str | None, fe: Frontend, options: CompileOptions) -> str:
    """C prefix: --name, else the config's `name`, else the -o basename without `lib`."""
    if options.name:
        bad = prefix_problem(options.name)
        if bad:
            raise AotcError(f"--name: {bad}")
        return options.name
    if fe.signature.name:
        return fe.signature.name
    base = os.path.basename(out or fe.module.name)
    base = re.sub(r"\.(c|h|o|so|a)$", "", base)
    if base.startswith("lib") and len(base) > 3:
        base = base[3:]
    base = re.sub(r"[^A-Za-z0-9_]", "_", base) or "model"
    if base[0].isdigit() or prefix_problem(base):
        base = "m_" + base
    return base


def generate(fe: Frontend, out: str | None, options: CompileOptions, target_banner: str = "host",
             progress: Progress | None = None) -> Generated:
    progress = progress or _quiet
    name = default_name(out, fe, options)
    dumps = set(options.dump_after)
    unknown = dumps - set(STAGES)
    if unknown:
        raise AotcError(f"--dump-after: unknown stage {sorted(unknown)[0]!r} (stages: {', '.join(STAGES)})")

    def dump(stage: str, obj) -> None:  # called as each lowering stage ends
        if stage in dumps:
            _dump(stage, obj, options.dump_dir)
        progress(f"lower: after {stage}", None)

    if options.weights == "file" and not fe.signature.bound:
        raise AotcError("--weights file: the config binds no parameters; list the weights under `bound:` "
                        "(file: an .npz, params: the parameters)")
    progress("lower", None)
    target = resolve_target(options.target, options.target_cpu, options.target_features)
    # the targets the application implements: --custom-call and the config's `custom_calls`, in one field
    options = replace(options, custom_calls=tuple(sorted(set(options.custom_calls) | set(fe.signature.custom_calls))))
    custom_calls = options.custom_calls
    lowered = lower(fe.module, fe.signature, name=name, source=options.source_name or os.path.basename(fe.path),
                    target=target_banner, source_text=fe.source_text, dump=dump,
                    weights="file" if options.weights == "file" else "bound",
                    fma=has_fma(target),
                    custom_calls=custom_calls, conv_algorithm=options.conv_algorithm,
                    stream_min_bytes=options.stream_min_bytes)
    progress("emit C", None)
    header_name = os.path.basename(out or name) + ".h"
    guard = re.sub(r"[^A-Za-z0-9]", "_", header_name).upper() + "_INCLUDED"
    p = lowered.program
    encoding = const_encoding(p, options, target_banner)
    parts, blob = emit_source_parts(p, header_name, encoding, options.profile, target.fat_levels)
    return Generated(name, header_name, tuple(parts), emit_header(p, guard, options.profile, target.fat_levels), lowered,
                     _programs(p, header_name, options), blob, encoding)


def _programs(p: Program, header_name: str, options: CompileOptions) -> tuple[tuple[str, str], ...]:
    """The test and benchmark programs `options.programs` asks for, as (suffix, text)."""
    unknown = sorted(set(options.programs) - set(PROGRAMS))
    if unknown:
        raise AotcError(f"unknown program kind '{unknown[0]}' (programs: {', '.join(PROGRAMS)})")
    out = []
    if "test" in options.programs:
        data = read_test_data(p, options.test_inputs, options.test_expected, options.test_rtol, options.test_atol)
        out.append((PROGRAMS["test"], emit_test_program(p, header_name, data)))
    if "bench" in options.programs:
        out.append((PROGRAMS["bench"], emit_bench_program(p, header_name, options.profile)))
    return tuple(out)


def const_encoding(p: Program, options: CompileOptions, target_banner: str) -> str:
    """What `--const-encoding` stands for with this program and target."""
    if options.const_encoding not in ENCODINGS:
        raise AotcError(f"--const-encoding: unknown encoding '{options.const_encoding}' "
                        f"(use {', '.join(ENCODINGS)})")
    total = sum(c.data.nbytes for q in _with_subprograms(p) for c in q.constants)
    if options.const_encoding == "auto" and "-windows-" in target_banner:
        # C arrays: MSVC has neither GNU assembler syntax (incbin) nor string literals past
        # 64 KiB, and C++ (cl /TP) rejects a string literal without room for its NUL
        return "array"
    return resolve_encoding(options.const_encoding, target_banner.startswith("target generic"), total)


def _with_subprograms(p: Program) -> list[Program]:
    return [p] + [q for s in p.subprograms for q in _with_subprograms(s)]


def _dump(stage: str, obj, dump_dir: str | None) -> None:
    if isinstance(obj, Module):
        text = print_module(obj)
    elif isinstance(obj, Program):
        text = describe_program(obj)
    elif isinstance(obj, dict):  # sub-programs: computation -> Program
        text = "".join(f"{c} -> {q.name}_execute: {len(q.kernels)} kernels, arena {q.arena_bytes} bytes\n"
                       for c, q in sorted(obj.items())) or "(no control flow)\n"
    else:
        text = repr(obj) + "\n"
    if dump_dir:
        os.makedirs(dump_dir, exist_ok=True)
        with open(os.path.join(dump_dir, f"after_{stage}.txt"), "w") as f:
            f.write(text)
    else:
        sys.stderr.write(f"// ---- after {stage}\n{text}")
