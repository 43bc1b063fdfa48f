"""The `aotc` command line: argument parsing only.

Each command turns its options into calls of library functions (`aotc.info`,
...) and prints their result. Every user-facing failure is an `AotcError`
that `_fail` prints as `FILE:LINE:COL: error: ...` on stderr with exit code 1;
no traceback reaches the user for bad input.
"""
from __future__ import annotations

import functools
import json
import sys
from typing import Callable, NoReturn

import click

from . import __version__
from .errors import AotcError


def _fail(err: AotcError) -> NoReturn:
    click.echo(err.format(), err=True)
    sys.exit(1)


def _handles_errors(fn: Callable) -> Callable:
    """Turn AotcError and unreadable files into a clean message and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AotcError as e:
            _fail(e)
        except OSError as e:
            _fail(AotcError(e.strerror or str(e), file=e.filename))

    return wrapper


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


# ---------------------------------------------------------------- commands


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="aotc")
def main() -> None:
    """aotc: compile XLA HLO text modules to self-contained C libraries."""


@main.command()
@model_argument
@config_option
@constants_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@_handles_errors
def info(model: str, config: str | None, elided_constants: str, bind_constants: str | None, as_json: bool) -> None:
    """Show a model's signature, computations, opcodes, constants and memory plan."""
    from .info import build_report, format_report, load_model

    loaded = load_model(model, config, elided_constants, bind_constants, keep_elided=True)
    report = build_report(loaded)
    if as_json:
        click.echo(json.dumps(report, indent=1, default=str))
    else:
        click.echo(format_report(report), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
