"""The `aotc` command line: argument parsing only.

Each command turns its options into calls of library functions (`aotc.info`,
...) and prints their result. Every user-facing failure is an `AotcError`
that `_fail` prints as `FILE:LINE:COL: error: ...` on stderr with its exit
code (errors.py); no traceback reaches the user unless `--debug` asks for one.
"""
from __future__ import annotations

import contextlib
import functools
import json
import sys
import types
from typing import Callable, NoReturn

import click
import numpy as np

from . import __version__
from .api import bench as aotc_bench
from .api import compile as aotc_compile
from .api import run as aotc_run
from .errors import EXIT_INTERNAL, AotcError, ToolchainError
from .frontend.constants import read_npz
from .info import build_report, format_report, load_model
from .integrations.entry import load_object, parse_shapes
from .jax import export as jax_export
from .options import CompileOptions
from .toolchain.profile_table import format_profile
from .toolchain.build import model_cflags
from .toolchain.buildsys import cmake_dir, make_include, split_emit
from .toolchain.targets import resolve_target


def _fail(err: AotcError) -> NoReturn:
    click.echo(err.format(), err=True)
    sys.exit(err.exit_code)


def _debug() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return bool(root is not None and root.params.get("debug"))


def _handles_errors(fn: Callable) -> Callable:
    """Turn every failure into one message and its exit code (errors.py): bad input 1,
    toolchain or environment 3, a bug of aotc 4 (with --debug: the traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AotcError as e:
            _fail(e)
        except OSError as e:
            _fail(AotcError(e.strerror or str(e), file=e.filename))
        except RecursionError:
            if _debug():
                raise
            _fail(AotcError("the input nests too deeply for aotc (calls, tuples, regions or YAML "
                            "nested hundreds of levels)"))
        except MemoryError:
            if _debug():
                raise
            _fail(ToolchainError("out of memory"))
        except Exception as e:  # a bug: one line, and a way to see more
            if _debug():
                raise
            what = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            click.echo(f"aotc: internal error ({what})\nThis is a bug in aotc: please report it with the input "
                       "that triggers it. `aotc --debug ...` shows the traceback.", err=True)
            sys.exit(EXIT_INTERNAL)

    return wrapper


class _TerminalProgress:
    """The `progress` callback of compile, run and bench on a terminal: the running stage on one
    status line of stderr, timed steps (the C compiler) as lines that stay."""

    def __init__(self, stream):
        self.stream = stream

    def __call__(self, stage: str, seconds: float | None = None) -> None:
        if seconds is None:
            self.stream.write(f"\r\x1b[Kaotc: {stage} ...")
        else:
            self.stream.write(f"\r\x1b[Kaotc: {stage}: {seconds:.2f} s\n")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\r\x1b[K")
        self.stream.flush()


@contextlib.contextmanager
def _progress():
    """A progress callback when stderr is a terminal, else None (pipes, files, tests stay quiet)."""
    stream = sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        yield None
        return
    shown = _TerminalProgress(stream)
    try:
        yield shown
    finally:
        shown.close()


def _print_outputs(outs: dict, print_all: bool) -> None:
    """Each output: name, shape, dtype, then its values as numpy prints them (summarized
    beyond 1000 elements unless `print_all`)."""
    for name, a in outs.items():
        a = np.asarray(a)
        click.echo(f"{name}: shape {tuple(a.shape)}, dtype {a.dtype}")
        click.echo(np.array2string(a, threshold=sys.maxsize if print_all else 1000, max_line_width=100))


# ---------------------------------------------------------------- shared options


def model_argument(fn: Callable) -> Callable:
    return click.argument("model", metavar="MODEL.hlo", type=click.Path())(fn)


def config_option(fn: Callable) -> Callable:
    return click.option("--config", "-c", "config", metavar="CFG.yaml", type=click.Path(),
                        help="Feeds/fetches config (default: every parameter in, every output out).")(fn)


def constants_options(fn: Callable) -> Callable:
    fn = click.option("--bind-constants", "bind_constants", metavar="NPZ", type=click.Path(),
                      help="Values for elided constants, keyed by instruction name.")(fn)
    fn = click.option("--elided-constants", "elided_constants", type=click.Choice(["error", "zeros", "random"]),
                      default="error", show_default=True,
                      help="What to do with constants printed as {...}: refuse, or fill for benchmarking.")(fn)
    return fn


def shape_option(fn: Callable) -> Callable:
    return click.option("--shape", "shape", metavar="NAME=SIZE", multiple=True,
                        help="Size of a symbolic dimension of a shape-polymorphic export, e.g. --shape b=1 "
                             "(repeat it, or separate with commas).")(fn)


def _shapes(values: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """`("b=1", "n=4,m=2")` as sorted (name, size) pairs; AotcError for a malformed one."""
    out: dict[str, int] = {}
    for item in (p.strip() for v in values for p in v.split(",")):
        name, eq, size = item.partition("=")
        name, size = name.strip(), size.strip()
        if not eq or not name.isidentifier() or not size.isdigit():
            raise AotcError(f"--shape: expected NAME=SIZE such as b=1, not {item!r}")
        if name in out and out[name] != int(size):
            raise AotcError(f"--shape: '{name}' is given twice ({out[name]} and {size})")
        out[name] = int(size)
    return tuple(sorted(out.items()))


# ---------------------------------------------------------------- commands


def _print_path(path: Callable[[], str]) -> Callable:
    """An eager flag's callback: print `path()` and exit, like --version."""

    def callback(ctx: click.Context, _param, value: bool) -> None:
        if value and not ctx.resilient_parsing:
            click.echo(path())
            ctx.exit()

    return callback


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="aotc")
@click.option("--cmake-dir", is_flag=True, expose_value=False, is_eager=True, callback=_print_path(cmake_dir),
              help="Print the directory of aotcConfig.cmake (for aotc_DIR or CMAKE_PREFIX_PATH) and exit.")
@click.option("--make-include", is_flag=True, expose_value=False, is_eager=True, callback=_print_path(make_include),
              help="Print the path of the Makefile fragment (include $(shell aotc --make-include)) and exit.")
@click.option("--debug", is_flag=True, help="Show the Python traceback of an internal error.")
def main(debug: bool) -> None:
    """aotc: compile XLA HLO text modules to self-contained C libraries.

    Exit codes: 0 success, 1 bad input, 2 usage, 3 toolchain or environment, 4 internal
    error (a bug)."""


@main.command()
@model_argument
@config_option
@constants_options
@shape_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@_handles_errors
def info(model: str, config: str | None, elided_constants: str, bind_constants: str | None, shape, as_json: bool) -> None:
    """Show a model's signature, computations, opcodes, constants and memory plan."""

    loaded = load_model(model, config, elided_constants, bind_constants, keep_elided=True, shapes=_shapes(shape))
    report = build_report(loaded)
    if as_json:
        click.echo(json.dumps(report, indent=1, default=str))
    else:
        click.echo(format_report(report), nl=False)


def target_options(fn: Callable, default_target: str = "host") -> Callable:
    fn = click.option("--cflags", "cflags", metavar="FLAGS", default="",
                      help="Extra flags for the C compiler (one string, split on spaces).")(fn)
    fn = click.option("--cc", "cc", metavar="CMD", default=None,
                      help="C compiler command, used or an error (default: $CC when it builds for the target, "
                           "else discovered).")(fn)
    fn = click.option("--target-features", "target_features", metavar="FEATURES", default=None,
                      help="ISA features like tfcompile's, e.g. +avx2,+fma or +neon.")(fn)
    fn = click.option("--target-cpu", "target_cpu", metavar="CPU", default=None,
                      help="CPU to tune for, e.g. znver4 or cortex-a76.")(fn)
    fn = click.option("--target", "target", metavar="TARGET", default=default_target, show_default=True,
                      help="host, native, x86_64, x86_64-fat, aarch64, generic, or a triple such as "
                           "aarch64-linux-android.")(fn)
    return fn


def machine_target_options(fn: Callable) -> Callable:
    """`run` and `bench` execute on this machine, so by default they compile for this
    machine's ISA (`native`: AVX-512 where there is AVX-512), not for the portable default
    of `compile`, whose artifact's target stays explicit."""
    return target_options(fn, default_target="native")


def sanitize_option(fn: Callable) -> Callable:
    return click.option("--sanitize", "sanitize", type=click.Choice(["address", "thread"]), is_flag=False,
                        flag_value="address", default=None, metavar="[address|thread]",
                        help="Build the model and runner with AddressSanitizer+UndefinedBehaviorSanitizer "
                             "(default; any report fails the run) or ThreadSanitizer.")(fn)


def conv_algorithm_option(fn: Callable) -> Callable:
    return click.option("--conv-algorithm", "conv_algorithm",
                        type=click.Choice(["direct", "winograd2", "winograd4"]), default="direct", show_default=True,
                        help="How stride-1 3x3 f32 convolutions run: direct (XLA's sums: GEMM or loops) or by "
                             "Winograd F(2x2,3x3) / F(4x4,3x3), faster but rounded differently (errors up to "
                             "~1e-5 / ~1e-4 relative; docs/winograd.md).")(fn)


def stream_option(fn: Callable) -> Callable:
    return click.option("--stream-min-bytes", "stream_min_bytes", type=click.IntRange(min=0), default=16 << 20,
                        show_default=True, metavar="BYTES",
                        help="Write f32 outputs of at least BYTES with non-temporal stores, around the caches "
                             "(x86-64 with AVX2 or AVX-512; same bits either way); 0: never.")(fn)


def run_weights_option(fn: Callable) -> Callable:
    return click.option("--weights", "weights", type=click.Choice(["bound", "fed", "file"]), default="bound",
                        show_default=True,
                        help="As for compile: bound: the config's `bound` parameters frozen in; fed: they are "
                             "inputs (keys of --inputs); file: written to a weights file in the cache that the "
                             "runner loads (P_load_weights): the same results as bound.")(fn)


def _compile_options(**kw):

    cflags = tuple((kw.pop("cflags", "") or "").split())
    return CompileOptions(cflags=cflags, **{k: v for k, v in kw.items() if v is not None})


def _read_inputs(path: str | None) -> dict | None:
    if path is None:
        return None

    return read_npz(path, lambda message: AotcError(f"inputs: {message}", file=path))


@main.command("compile")
@model_argument
@config_option
@constants_options
@shape_option
@target_options
@click.option("-o", "--output", "out", metavar="PREFIX", default="libmodel", show_default=True,
              help="Output path prefix: writes PREFIX.c, PREFIX.h, PREFIX.o.")
@click.option("--name", "name", metavar="IDENT", default=None,
              help="C symbol prefix (default: config `name`, else the -o basename without `lib`).")
@click.option("--emit", "emit", metavar="KINDS", default="o", show_default=True,
              help="What to write besides .c/.h: the object always, plus so and/or a (e.g. --emit so,a); "
                   "d: a Make-style depfile PREFIX.d; pc: a pkg-config file PREFIX.pc; 'none' or only "
                   "c,h (e.g. --emit c,h,d): no binary. 'test' writes PREFIX_test.c (needs --test-inputs "
                   "and --test-expected), 'bench' PREFIX_benchmark.c.")
@click.option("--weights", "weights", type=click.Choice(["bound", "fed", "file"]), default="bound", show_default=True,
              help="bound: the config's `bound` parameters are frozen into the library; fed: they are feeds; "
                   "file: they are written to PREFIX.weights and loaded at run time (P_load_weights).")
@conv_algorithm_option
@stream_option
@click.option("--test-inputs", "test_inputs", metavar="IN.npz", type=click.Path(), default=None,
              help="Argument values PREFIX_test.c runs the model on, keyed by argument name.")
@click.option("--test-expected", "test_expected", metavar="OUT.npz", type=click.Path(), default=None,
              help="Expected results PREFIX_test.c compares with, keyed by result name (e.g. XLA's).")
@click.option("--rtol", "test_rtol", type=click.FloatRange(min=0), default=None,
              help="PREFIX_test.c's relative tolerance for floats [default: 1e-5; 1e-2 for f16/bf16].")
@click.option("--atol", "test_atol", type=click.FloatRange(min=0), default=None,
              help="PREFIX_test.c's absolute tolerance for floats [default: 1e-6; 1e-2 for f16/bf16]. "
                   "Integers and pred are compared exactly.")
@click.option("--profile", "profile", is_flag=True,
              help="Time every kernel of the run function (the header's P_profile_* table).")
@click.option("--dump-after", "dump_after", metavar="STAGE", multiple=True,
              help="Print the IR after a lowering stage (bind, inline, delayout, simplify, fusion, program).")
@click.option("--dump-dir", "dump_dir", metavar="DIR", default=None, help="Write dumps to DIR instead of stderr.")
@click.option("--const-encoding", "const_encoding", type=click.Choice(["auto", "incbin", "string", "array"]),
              default="auto", show_default=True,
              help="How constants are written: incbin (a blob PREFIX.c.bin the assembler includes), string "
                   "(string literals), array (hex C arrays, any compiler); auto: arrays when small, else incbin "
                   "(string for --target generic).")
@click.option("--custom-call", "custom_calls", metavar="TARGET", multiple=True,
              help="A custom-call target your application implements in C (repeatable): the header declares "
                   "PREFIX_cc_TARGET for you to define (docs/custom_calls.md). Also the config's `custom_calls`.")
@_handles_errors
def compile_cmd(model, config, elided_constants, bind_constants, shape, target, target_cpu, target_features, cc, cflags,
                out, name, emit, weights, conv_algorithm, stream_min_bytes, test_inputs, test_expected, test_rtol, test_atol, profile, dump_after,
                dump_dir, const_encoding, custom_calls) -> None:
    """Compile MODEL.hlo to a self-contained C library (PREFIX.c, PREFIX.h, PREFIX.o)."""

    listed = [k.strip() for k in emit.split(",") if k.strip()]
    programs = tuple(k for k in ("test", "bench") if k in listed)
    if "test" in listed and not (test_inputs and test_expected):
        raise AotcError("--emit test needs --test-inputs IN.npz and --test-expected OUT.npz")
    kinds = split_emit([k for k in listed if k not in programs])
    opts = _compile_options(target=target, target_cpu=target_cpu, target_features=target_features, cc=cc,
                            cflags=cflags, name=name, elided_constants=elided_constants,
                            bind_constants=bind_constants, emit=kinds, weights=weights, dump_after=tuple(dump_after),
                            dump_dir=dump_dir, shapes=_shapes(shape), programs=programs, test_inputs=test_inputs,
                            test_expected=test_expected, test_rtol=test_rtol, test_atol=test_atol, profile=profile,
                            const_encoding=const_encoding, custom_calls=tuple(sorted(set(custom_calls))),
                            conv_algorithm=conv_algorithm, stream_min_bytes=stream_min_bytes)
    with _progress() as progress:
        res = aotc_compile(model, config=config, out=out, options=opts, progress=progress)
    for path in (res.h_path, res.c_path, res.blob_path, res.weights_path, *res.program_paths, res.obj_path,
                 res.so_path, res.a_path, res.d_path, res.pc_path):
        if path:
            click.echo(path)


@main.command("cflags")
@click.option("--cflags", "cflags", metavar="FLAGS", default="", help="Flags to append (one string).")
@click.option("--target-features", "target_features", metavar="FEATURES", default=None,
              help="ISA features like tfcompile's, e.g. +avx2,+fma or +neon.")
@click.option("--target-cpu", "target_cpu", metavar="CPU", default=None, help="CPU to tune for.")
@click.option("--target", "target", metavar="TARGET", default="host", show_default=True,
              help="host, native, x86_64, x86_64-fat, aarch64, generic, or a triple such as "
                           "aarch64-linux-android.")
@_handles_errors
def cflags_cmd(target, target_cpu, target_features, cflags) -> None:
    """Print the C compiler flags for compiling a generated PREFIX.c for TARGET in your own
    build (optimization, numeric and ISA flags, GCC/Clang spelling; --cflags appended)."""

    opts = _compile_options(target=target, target_cpu=target_cpu, target_features=target_features, cflags=cflags)
    click.echo(" ".join(model_cflags(resolve_target(opts.target, opts.target_cpu, opts.target_features), opts)))


@main.command("run")
@model_argument
@config_option
@constants_options
@shape_option
@machine_target_options
@sanitize_option
@run_weights_option
@conv_algorithm_option
@stream_option
@click.option("--inputs", "inputs", metavar="IN.npz", type=click.Path(), required=True,
              help="Feed values keyed by feed name (bf16 as ml_dtypes.bfloat16 or uint16 bits).")
@click.option("--output", "output", metavar="OUT.npz", type=click.Path(), default=None,
              help="Write the fetches, keyed by fetch name, to OUT.npz instead of printing them.")
@click.option("--print-all", "print_all", is_flag=True,
              help="Print every value (default: arrays over 1000 elements are summarized).")
@click.option("--timeout", "timeout", metavar="SECONDS", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop a run that takes longer (the model checks its deadline between kernels and in loops).")
@_handles_errors
def run_cmd(model, config, elided_constants, bind_constants, shape, target, target_cpu, target_features, cc, cflags,
            sanitize, weights, conv_algorithm, stream_min_bytes, inputs, output, print_all, timeout) -> None:
    """Compile (cached) and execute MODEL on IN.npz, natively or under the target's emulator;
    print each fetch (name, shape, dtype, values), or write them to --output."""

    opts = _compile_options(target=target, target_cpu=target_cpu, target_features=target_features, cc=cc,
                            cflags=cflags, elided_constants=elided_constants, bind_constants=bind_constants,
                            shapes=_shapes(shape), sanitize=sanitize, weights=weights,
                            conv_algorithm=conv_algorithm, stream_min_bytes=stream_min_bytes)
    with _progress() as progress:
        outs = aotc_run(model, config=config, inputs=_read_inputs(inputs), options=opts, progress=progress,
                        timeout=timeout)
    if output is None:
        _print_outputs(outs, print_all)
        return
    try:
        np.savez(output, **outs)
    except OSError as e:
        raise AotcError(f"cannot write output: {e.strerror or e}", file=output) from None


@main.command("bench")
@model_argument
@config_option
@constants_options
@shape_option
@machine_target_options
@sanitize_option
@run_weights_option
@conv_algorithm_option
@stream_option
@click.option("--inputs", "inputs", metavar="IN.npz", type=click.Path(), default=None,
              help="Feed values (default: deterministic random inputs).")
@click.option("--threads", "threads", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--iters", "iters", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--warmup", "warmup", type=click.IntRange(min=0), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--profile", "profile", is_flag=True,
              help="Time every kernel too, and print the kernels by time: share, GFLOP/s, GB/s, HLO.")
@click.option("--top", "top", type=click.IntRange(min=1), default=20, show_default=True,
              help="Kernels listed by --profile (the rest on one line).")
@_handles_errors
def bench_cmd(model, config, elided_constants, bind_constants, shape, target, target_cpu, target_features, cc, cflags,
              sanitize, weights, conv_algorithm, stream_min_bytes, inputs, threads, iters, warmup, as_json, profile, top) -> None:
    """Time the compiled function with a timing loop in C (no Python in the measured region)."""

    opts = _compile_options(target=target, target_cpu=target_cpu, target_features=target_features, cc=cc,
                            cflags=cflags, elided_constants=elided_constants, bind_constants=bind_constants,
                            shapes=_shapes(shape), profile=profile, sanitize=sanitize, weights=weights,
                            conv_algorithm=conv_algorithm, stream_min_bytes=stream_min_bytes)
    with _progress() as progress:
        res = aotc_bench(model, config=config, inputs=_read_inputs(inputs), options=opts, threads=threads,
                         iters=iters, warmup=warmup, progress=progress)
    if as_json:
        click.echo(json.dumps(res))
    else:
        click.echo(f"median {res['median_us']:.2f} us, min {res['min_us']:.2f} us "
                   f"({res['iters']} iterations, {res['threads']} thread(s), target {target})")
        if profile:
            click.echo(format_profile(res, top), nl=False)


@main.command("export")
@click.argument("function", metavar="MODULE:FUNCTION")
@click.option("--shapes", "shapes", metavar="SPEC", required=True,
              help="The inputs, in order: [NAME=]TYPE[DIMS] separated by commas, e.g. 'x=f32[8,64]'.")
@click.option("--params", "params", metavar="MODULE:NAME", default=None,
              help="A pytree of weights (or a function returning one), passed as the last argument.")
@click.option("--weights", "weights", type=click.Choice(["bound", "fed", "file"]), default="bound",
              show_default=True, help="bound: frozen into the library (weights.npz); fed: arguments; file: "
                                      "weights.npz for `aotc compile --weights file`.")
@click.option("--dialect", "dialect", type=click.Choice(["stablehlo", "hlo"]), default="stablehlo",
              show_default=True, help="Write model.mlir (StableHLO text) or model.hlo (HLO text).")
@click.option("--name", "name", metavar="IDENT", default=None, help="The config's `name` (C symbol prefix).")
@click.option("-o", "--output", "out_dir", metavar="DIR", required=True, help="Directory for the files.")
@_handles_errors
def export_cmd(function, shapes, params, weights, dialect, name, out_dir) -> None:
    """Lower a JAX function (MODULE:FUNCTION) with jax and write model.mlir (or .hlo), cfg.yaml
    and weights.npz into DIR: the files `aotc compile` reads."""

    fn = load_object(function, "MODULE:FUNCTION")
    if not callable(fn):
        raise AotcError(f"{function} is not a function")
    tree = load_object(params, "--params") if params else None
    if callable(tree):
        tree = tree()
    specs = parse_shapes(shapes)
    inputs = tuple(types.SimpleNamespace(shape=dims, dtype=dt) for _, dims, dt in specs)
    names = [n for n, _, _ in specs]
    files = jax_export(fn, inputs, tree, out_dir, weights=weights, name=name, dialect=dialect,
                       input_names=None if not any(names) else [n or f"x{i}" for i, n in enumerate(names)])
    for path in (files.model, files.config, files.weights):
        if path:
            click.echo(path)


if __name__ == "__main__":  # pragma: no cover
    main()
