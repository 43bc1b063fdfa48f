"""aotc's cache of generated sources, objects and runner programs: content-addressed
entries under one private directory (0700, files 0600, whatever the umask), each file
checked against its recorded SHA-256 and size before it is used, and rebuilt when it does
not match (truncated, edited, replaced). It never executes or reads a file it did not verify.
It stores bytes; what they are is the caller's business."""
from __future__ import annotations

import hashlib
import os
import secrets
import stat
from pathlib import Path

from ..errors import ToolchainError

DIR_MODE, FILE_MODE, EXEC_MODE = 0o700, 0o600, 0o700
MANIFEST = "MANIFEST"  # of an entry directory: "<sha256> <size> <name>" per file
SIDECAR = ".sha256"  # of a single file: "<sha256> <size>"


def cache_dir() -> Path:
    """Root of aotc's cache: `$XDG_CACHE_HOME/aotc`, else `~/.cache/aotc`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aotc"


def private_dir(path: str | os.PathLike) -> Path:
    """`path` as a directory only its owner (this user) can use: created 0700, or an existing
    one of ours tightened to 0700; a directory of another user, or a symlink, is refused."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            pass
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise ToolchainError(f"the cache directory {path} is not a directory of this user; remove it or "
                                 "set XDG_CACHE_HOME to another place")
        if stat.S_IMODE(st.st_mode) != DIR_MODE:
            os.chmod(path, DIR_MODE)
    except OSError as e:
        raise ToolchainError(f"cannot use the cache directory {path}: {e.strerror or e}") from None
    return path


def write_private(path: str | os.PathLike, data: bytes, executable: bool = False) -> None:
    """Write `data` to `path` atomically (a temporary file renamed over it), mode 0600 (0700
    for a program) whatever the umask."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        os.fchmod(fd, EXEC_MODE if executable else FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)


def file_digest(path: str | os.PathLike) -> tuple[str, int] | None:
    """(SHA-256 hex, size) of a regular file of this user that nobody else may write;
    None for anything else (missing, a symlink, a directory, another user's)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest(), st.st_size
    finally:
        os.close(fd)


def holds(path: str | os.PathLike, data: bytes) -> bool:
    """Whether `path` is a verified file with exactly `data`."""
    return file_digest(path) == (hashlib.sha256(data).hexdigest(), len(data))


def record(path: str | os.PathLike) -> None:
    """Record the digest of `path` (a file this process just wrote) in its sidecar."""
    d = file_digest(path)
    if d is None:
        raise ToolchainError(f"cannot record {path} in the cache: not a private regular file")
    write_private(str(path) + SIDECAR, f"{d[0]} {d[1]}\n".encode())


def verified(path: str | os.PathLike) -> bool:
    """Whether `path` still has the digest its sidecar recorded."""
    try:
        want = Path(str(path) + SIDECAR).read_text().split()
    except (OSError, UnicodeDecodeError):
        return False
    d = file_digest(path)
    return d is not None and len(want) == 2 and want == [d[0], str(d[1])]


def seal(entry: Path) -> None:
    """Write the MANIFEST of every file in the entry directory `entry`."""
    lines = []
    for p in sorted(entry.iterdir()):
        if p.name != MANIFEST:
            d = file_digest(p)
            if d is None:
                raise ToolchainError(f"cannot record {p} in the cache: not a private regular file")
            lines.append(f"{d[0]} {d[1]} {p.name}\n")
    write_private(entry / MANIFEST, "".join(lines).encode())


def entry_ok(entry: Path) -> bool:
    """Whether every file of `entry` has the digest its MANIFEST recorded, and no file is
    missing or added."""
    try:
        text = (entry / MANIFEST).read_text()
        names = sorted(p.name for p in entry.iterdir() if p.name != MANIFEST)
    except (OSError, UnicodeDecodeError):
        return False
    listed = []
    for line in text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) != 3 or file_digest(entry / parts[2]) != (parts[0], int(parts[1]) if parts[1].isdigit() else -1):
            return False
        listed.append(parts[2])
    return sorted(listed) == names
