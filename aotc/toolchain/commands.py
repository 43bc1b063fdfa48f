"""The build commands run with a found `Toolchain`: compile to an object, link a shared
library or an executable, archive objects, each failure one `ToolchainError` carrying the
command and the compiler's (trimmed) output. It finds no compiler (`cc.py` does) and decides
no flags a model needs (`build.py` and `runner.py` do).
"""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import ToolchainError
from .cc import Toolchain
from .targets import system_libs

_MAX_OUTPUT_LINES = 40
_MAX_OUTPUT_CHARS = 4000


def compile_object(tc: Toolchain, c_path: str | os.PathLike, obj_path: str | os.PathLike,
                   cflags: Sequence[str] = ()) -> Path:
    """`cc <isa flags> <cflags> -c C -o OBJ`."""
    cmd = [*tc.argv, *tc.flags, *cflags, "-c", str(c_path), "-o", str(obj_path)]
    run_tool(cmd, f"compiling {Path(c_path).name}")
    return Path(obj_path)


def compile_shared(tc: Toolchain, inputs: str | os.PathLike | Iterable[str | os.PathLike],
                   so_path: str | os.PathLike, cflags: Sequence[str] = (),
                   libs: Sequence[str] | None = None) -> Path:
    """A shared library from C sources and/or objects (`-shared`, then `-lm -lpthread`)."""
    libs = system_libs(tc.target) if libs is None else libs
    cmd = [*tc.argv, *tc.flags, *cflags, "-shared", *_paths(inputs), "-o", str(so_path),
           *tc.link_flags, *libs]
    run_tool(cmd, f"linking {Path(so_path).name}")
    return Path(so_path)


def archive_static(tc: Toolchain, obj_paths: str | os.PathLike | Iterable[str | os.PathLike],
                   a_path: str | os.PathLike) -> Path:
    """A static archive (`ar rcs`) of the objects, replacing any existing one."""
    a_path = Path(a_path)
    if a_path.exists():
        a_path.unlink()  # `ar r` would add to a stale archive
    run_tool([*tc.ar, "rcs", str(a_path), *_paths(obj_paths)], f"archiving {a_path.name}")
    return a_path


def link_executable(tc: Toolchain, inputs: str | os.PathLike | Iterable[str | os.PathLike],
                    exe_path: str | os.PathLike, cflags: Sequence[str] = (),
                    libs: Sequence[str] | None = None, static: bool = False) -> Path:
    """An executable from C sources and/or objects; `static` adds `-static`."""
    libs = system_libs(tc.target) if libs is None else libs
    cmd = [*tc.argv, *tc.flags, *cflags, *_paths(inputs), "-o", str(exe_path), *tc.link_flags,
           *(["-static"] if static else []), *libs]
    run_tool(cmd, f"linking {Path(exe_path).name}")
    return Path(exe_path)


def run_tool(cmd: Sequence[str], what: str, timeout: float | None = None) -> str:
    """Run a build command; its stdout on success, else an AotcError with the command
    and the trimmed output."""
    try:
        proc = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, errors="replace", timeout=timeout)
    except FileNotFoundError:
        raise ToolchainError(f"{what}: '{cmd[0]}' was not found\n  $ {shlex.join(cmd)}") from None
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{what}: timed out after {timeout:g} s\n  $ {shlex.join(cmd)}") from None
    if proc.returncode != 0:
        out = trim_output(proc.stderr + proc.stdout)
        raise ToolchainError(f"{what} failed (exit {proc.returncode})\n  $ {shlex.join(cmd)}"
                        + (f"\n{out}" if out else ""))
    return proc.stdout


def trim_output(text: str) -> str:
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    extra = len(lines) - _MAX_OUTPUT_LINES
    out = "\n".join(lines[:_MAX_OUTPUT_LINES])
    if len(out) > _MAX_OUTPUT_CHARS:
        out = out[:_MAX_OUTPUT_CHARS] + " …"
    if extra > 0:
        out += f"\n… ({extra} more lines)"
    return out


def _paths(p) -> list[str]:
    if isinstance(p, (str, os.PathLike)):
        return [str(p)]
    return [str(x) for x in p]
