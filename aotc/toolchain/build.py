"""Turning a generated `.c` into the requested binaries (`.o`, `.so`, `.a`) for a
target, and the content-hash build cache. This module picks the flags every
build shares; it never reads or changes the C text.
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from .. import __version__
from ..errors import AotcError
from ..options import CompileOptions
from . import cc, commands
from .cache import cache_dir, entry_ok, private_dir, seal
from .targets import Target, resolve_target

EMIT_KINDS = ("o", "so", "a")


def base_cflags(options: CompileOptions) -> list[str]:
    """Flags of every model compile; the target's ISA flags are added by `cc` and
    `options.cflags` come last so they can override anything."""
    # -fno-math-errno, -fno-trapping-math: libm calls need not set errno and selects may
    # evaluate both arms, so kernel loops vectorize; no result changes (FP exception
    # flags are never read)
    # -ffp-contract=off: a*b+c rounds twice on every target, as the runtime's tests expect
    # (the generated .c also turns contraction off and refuses fast-math itself; no result
    # depends on these flags, see aotc_rt.h)
    return ["-std=c11", options.opt_level, *_NUMERIC_CFLAGS, "-fPIC", *sanitizer_flags(options.sanitize),
            *options.cflags]


_NUMERIC_CFLAGS = ("-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off")


def model_cflags(target: Target, options: CompileOptions) -> tuple[str, ...]:
    """What a build system that compiles a generated `.c` itself (CMake's `aotc_add_library`)
    adds to its own flags, in GCC/Clang spelling: the optimization level and flags of
    `base_cflags`, the target's ISA flags (the runtime picks its SIMD code from the macros
    they define), then `options.cflags`. The language level and -fPIC are the build
    system's own settings. A fat target has no such flags: its file is compiled once per level."""
    if target.fat_levels:
        raise AotcError(f"--target {target.name} compiles the .c once per ISA level; build it with "
                        f"`aotc compile --emit o` (or a): docs/portability.md, \"The fat target\"")
    return (options.opt_level, *_NUMERIC_CFLAGS, *target.simd_cflags, *options.cflags)


SANITIZERS = ("address", "thread")


def sanitizer_flags(sanitize: str | None) -> list[str]:
    """Compile and link flags of a sanitized build: `address` is AddressSanitizer with
    UndefinedBehaviorSanitizer, where any report aborts the program; `thread` is
    ThreadSanitizer (a report makes the program exit with status 66)."""
    if sanitize is None:
        return []
    if sanitize == "address":
        return ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"]
    if sanitize == "thread":
        return ["-fsanitize=thread", "-fno-omit-frame-pointer", "-g"]
    raise AotcError(f"unknown sanitizer '{sanitize}' (use {' or '.join(SANITIZERS)})")


def compile_model_object(tc: cc.Toolchain, c_path: str | os.PathLike, obj_path: str | os.PathLike,
                         flags: list[str]) -> Path:
    """The model's object: one compile, or for a fat target (`Target.fat_levels`) the plain
    object and one per level (`-DAOTC_FAT_LEVEL=N` and its `-march`, which overrides the
    target's), joined by a relocatable link (`cc -r`) into one object."""
    levels = tc.target.fat_levels
    if not levels:
        return commands.compile_object(tc, c_path, obj_path, flags)
    obj_path = Path(obj_path)
    with tempfile.TemporaryDirectory(prefix="aotc-fat-") as tmp:
        objs = [commands.compile_object(tc, c_path, Path(tmp) / "plain.o", flags)]
        for n, march in levels:
            objs.append(commands.compile_object(tc, c_path, Path(tmp) / f"level{n}.o",
                                                [*flags, f"-march={march}", f"-DAOTC_FAT_LEVEL={n}"]))
        commands.run_tool([*tc.argv, "-r", "-nostdlib", *map(str, objs), "-o", str(obj_path)],
                          f"joining the levels of {Path(c_path).name}")
    return obj_path


def build_outputs(c_path: str | os.PathLike, out_prefix: str | os.PathLike,
                  target: Target | str | None, options: CompileOptions,
                  toolchain: cc.Toolchain | None = None) -> dict[str, str]:
    """Build each kind in `options.emit` from `c_path`: {"o": "<out>.o", "so":
    "<out>.so" (".dylib" on Darwin, ".dll" on Windows, plus "implib": "<out>.lib",
    its import library), "a": "<out>.a"}. One object is compiled and reused for the
    shared library and the archive."""
    target = _as_target(target, options)
    unknown = [k for k in options.emit if k not in EMIT_KINDS]
    if unknown:
        raise AotcError(f"unknown --emit kind {', '.join(unknown)}; known: {', '.join(EMIT_KINDS)}")
    if not options.emit:
        return {}
    tc = toolchain or cc.find_toolchain(target, options.cc)
    out_prefix = str(out_prefix)
    Path(out_prefix).parent.mkdir(parents=True, exist_ok=True)
    flags = base_cflags(options)
    outputs: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="aotc-build-") as tmp:
        obj = out_prefix + ".o" if "o" in options.emit else os.path.join(tmp, "model.o")
        compile_model_object(tc, c_path, obj, flags)
        if "o" in options.emit:
            outputs["o"] = obj
        if "so" in options.emit:
            so = out_prefix + target.so_suffix
            if target.os == "windows":  # the DLL and its import library, for MinGW and MSVC links
                implib = out_prefix + ".lib"
                commands.compile_shared(tc, [obj], so, [*flags, f"-Wl,--out-implib,{implib}"])
                outputs["so"], outputs["implib"] = so, implib
            else:
                commands.compile_shared(tc, [obj], so, flags)
                outputs["so"] = so
        if "a" in options.emit:
            a = out_prefix + ".a"
            commands.archive_static(tc, [obj], a)
            outputs["a"] = a
    return outputs


def build_outputs_cached(c_path: str | os.PathLike, out_prefix: str | os.PathLike,
                         target: Target | str | None, options: CompileOptions,
                         root: str | os.PathLike | None = None) -> dict[str, str]:
    """`build_outputs` through the cache (`cached_build`, keyed by the C text and the header
    beside it, the compiler and its version, the target and the flags): a rebuild of
    unchanged C copies verified binaries instead of compiling again. The build runs on
    files of the same names, so the binaries are those `build_outputs` makes."""
    target = _as_target(target, options)
    if not options.emit:
        return {}
    tc = cc.find_toolchain(target, options.cc)
    c_path = Path(c_path)
    h_path = c_path.with_suffix(".h")
    # the .c, its header, and what it includes beside it (PREFIX.c.bin: constants for .incbin)
    companions = sorted(p for p in c_path.parent.glob(glob.escape(c_path.name) + ".*") if p.is_file())
    sources = {p.name: p.read_bytes() for p in (c_path, h_path, *companions) if p.is_file()}
    stem = Path(str(out_prefix)).name

    def builder(d: Path) -> None:
        for name, data in sources.items():
            (d / name).write_bytes(data)
        build_outputs(d / c_path.name, d / stem, target, options, toolchain=tc)
        for name in sources:
            (d / name).unlink()

    key = build_key_material(c_path, target, options, tc) + b"".join(
        hashlib.sha256(name.encode() + b"\0" + data).digest() for name, data in sorted(sources.items()))
    entry = cached_build(key + stem.encode(), builder, root)
    suffixes = {"o": ".o", "so": target.so_suffix, "a": ".a"}
    umask = os.umask(0o077)
    os.umask(umask)
    outputs = {}
    for kind in EMIT_KINDS:
        if kind in options.emit:
            outputs[kind] = str(out_prefix) + suffixes[kind]
            shutil.copyfile(entry / (stem + suffixes[kind]), outputs[kind])
            os.chmod(outputs[kind], (0o777 if kind == "so" else 0o666) & ~umask)  # as the linker makes them
            if kind == "so" and target.os == "windows":  # the DLL's import library
                outputs["implib"] = str(out_prefix) + ".lib"
                shutil.copyfile(entry / (stem + ".lib"), outputs["implib"])
    return outputs


def build_key_material(c_path: str | os.PathLike, target: Target, options: CompileOptions,
                       toolchain: cc.Toolchain) -> bytes:
    """Everything that decides the bytes of a build: the C text, the compiler
    command and version, the target and flags, the emitted kinds."""
    version = commands.run_tool([*toolchain.argv, "--version"], "asking the compiler its version")
    parts = [Path(c_path).read_bytes(), repr(toolchain.argv).encode(), version.encode(),
             repr((target, toolchain.flags, toolchain.link_flags)).encode(),
             repr((base_cflags(options), options.emit)).encode()]
    return b"\0".join(hashlib.sha256(p).digest() for p in parts)


def cached_build(key_material: bytes, builder: Callable[[Path], object],
                 root: str | os.PathLike | None = None) -> Path:
    """The cache entry directory for `key_material`, calling `builder(dir)` to fill
    it on a miss. The entry is built in a private temporary directory, sealed with the
    digests of its files and renamed into place, so concurrent builders never see half
    an entry; a builder that raises leaves nothing behind. An entry whose files no longer
    match their digests (truncated, edited) is built again."""
    digest = hashlib.sha256(b"aotc " + __version__.encode() + b"\0" + key_material).hexdigest()
    root = private_dir(root if root is not None else cache_dir())
    shard = private_dir(private_dir(root / "builds") / digest[:2])
    entry = shard / digest
    if entry_ok(entry):
        return entry
    tmp = Path(tempfile.mkdtemp(prefix=f".{digest[:16]}-", dir=shard))  # 0700
    try:
        builder(tmp)
        for p in tmp.iterdir():  # whatever the builder's umask gave them
            os.chmod(p, 0o700 if os.access(p, os.X_OK) else 0o600)
        seal(tmp)
        try:
            os.rename(tmp, entry)
        except OSError:
            if not entry_ok(entry):  # a stale or damaged entry: replace it
                shutil.rmtree(entry, ignore_errors=True)
                os.rename(tmp, entry)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)  # lost a race, or the builder failed
    return entry


def _as_target(target: Target | str | None, options: CompileOptions) -> Target:
    if isinstance(target, Target):
        return target
    return resolve_target(target or options.target, options.target_cpu, options.target_features)
