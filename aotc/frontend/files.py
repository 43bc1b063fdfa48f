"""Reading the files users name (models, configs): regular files only, and a size
limit where one makes sense, so that `--config /dev/zero` or a FIFO is an error
instead of a read without end.
"""
from __future__ import annotations

import os
import stat

from ..errors import AotcError

CONFIG_LIMIT = 16 << 20  # a config is a few lines; weights live in .npz files


def read_input(path: str | os.PathLike, what: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file `path` (AotcError naming `what` otherwise)."""
    file = os.fspath(path)
    try:
        # looked at before opening: opening a FIFO would wait for a writer
        mode = os.stat(file).st_mode
        if not stat.S_ISREG(mode):
            raise AotcError(f"cannot read {what}: {_kind(mode)}", file=file)
        with open(file, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise AotcError(f"cannot read {what}: {_kind(st.st_mode)}", file=file)
            if limit is not None and st.st_size > limit:
                raise AotcError(f"cannot read {what}: {st.st_size} bytes, more than the {limit >> 20} MiB "
                                f"a {what} may have", file=file)
            data = f.read(limit + 1) if limit is not None else f.read()
    except IsADirectoryError:
        raise AotcError(f"cannot read {what}: a directory", file=file) from None
    except OSError as e:
        raise AotcError(f"cannot read {what}: {e.strerror or e}", file=file) from None
    if limit is not None and len(data) > limit:
        raise AotcError(f"cannot read {what}: more than the {limit >> 20} MiB a {what} may have", file=file)
    return data


def not_regular(path: str | os.PathLike) -> str | None:
    """Why `path` cannot be read as a file ("a FIFO", "a device", ...), or None if it is a
    regular file (or missing: opening it then says so). Readers that open files themselves
    ask first, since opening a FIFO waits for a writer."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _kind(mode)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
