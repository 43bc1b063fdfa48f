"""Binary model formats into text through jaxlib: MLIR bytecode (StableHLO/VHLO) and
serialized `jax.export` blobs into StableHLO text, HLO protos into HLO text, and the
refinement of shape-polymorphic modules to the sizes `--shape` gives.

jax and jaxlib are optional: they are imported only here, inside the functions that need
them, and their absence is one `AotcError` naming the format and what to install. Nothing
here parses the text it returns; `formats.py` hands it to the front end.
"""
from __future__ import annotations

import re

from ..errors import AotcError

INSTALL_HINT = "pip install 'aotc[jax]' (or pip install jax jaxlib)"
_GLOBAL_CONSTANT = re.compile(r'jax\.global_constant\s*=\s*"([^"]*)"')


def _jax(what: str, path: str, size: int):
    """The jax module, or an AotcError naming the format and what to install."""
    try:
        import jax  # optional: only binary formats and polymorphic shapes need it
        from jax import export  # noqa: F401  (jax.export is a submodule since 0.4.30)
    except ImportError:
        raise AotcError(f"{what} ({size} bytes): reading it needs jax and jaxlib, which are not installed: "
                        f"{INSTALL_HINT}", file=path) from None
    return jax


def _context():
    from jax._src.interpreters import mlir  # the MLIR context jax registers its dialects in
    return mlir.make_ir_context()


def _print(module) -> str:
    """A module as StableHLO pretty text, with the locations that name arguments."""
    return module.operation.get_asm(enable_debug_info=True)


def bytecode_to_text(data: bytes, path: str) -> str:
    """MLIR bytecode (portable VHLO artifact, or plain StableHLO bytecode) as StableHLO text."""
    _jax("MLIR bytecode", path, len(data))
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    with _context() as ctx:
        try:
            return _print(stablehlo.deserialize_portable_artifact(ctx, data))
        except Exception:  # not a VHLO artifact: maybe bytecode of the StableHLO dialect itself
            pass
        try:
            return _print(ir.Module.parse(data))
        except Exception as e:
            raise AotcError(f"MLIR bytecode ({len(data)} bytes) that jaxlib cannot read: "
                            f"{_first_line(e)}", file=path) from None


def exported_symbols(data: bytes, path: str) -> tuple[object, list[str]]:
    """A deserialized `jax.export.Exported` and the names of its symbolic dimensions."""
    jax = _jax("a serialized jax.export artifact", path, len(data))
    try:
        exp = jax.export.deserialize(bytearray(data))
    except ImportError as e:  # jax reads the flatbuffer with the `flatbuffers` package
        raise AotcError(f"a serialized jax.export artifact ({len(data)} bytes): reading it needs "
                        f"{_first_line(e)}: pip install flatbuffers", file=path) from None
    except Exception as e:
        raise AotcError(f"a serialized jax.export artifact ({len(data)} bytes) that jax cannot read: "
                        f"{_first_line(e)}", file=path) from None
    names: list[str] = []
    for aval in exp.in_avals:
        for d in aval.shape:
            if jax.export.is_symbolic_dim(d):
                for s in re.findall(r"[A-Za-z_]\w*", str(d)):
                    if s not in names:
                        names.append(s)
    return exp, names


def exported_to_text(data: bytes, path: str, shapes: dict[str, int]) -> str:
    """A serialized `Exported` as StableHLO text; a polymorphic one refined to `shapes`."""
    exp, names = exported_symbols(data, path)
    if not names:
        return exp.mlir_module()
    missing = [n for n in names if n not in shapes]
    if missing:
        where = ", ".join(f"input {i} {_aval_text(a)}" for i, a in enumerate(exp.in_avals)
                          if any(n in str(d) for n in missing for d in a.shape))
        raise AotcError(f"a shape-polymorphic jax.export artifact: symbolic dimension "
                        f"{_names(missing)} ({where}) needs a size: pass {_flags(missing)}", file=path)
    concrete = [tuple(_evaluate(d, shapes, path) for d in a.shape) for a in exp.in_avals]
    return refine_text(exp.mlir_module(), path, shapes, concrete)


def hlo_proto_to_text(data: bytes, path: str, what: str) -> str:
    """A serialized `HloModuleProto` as HLO text (large constants printed in full)."""
    _jax(what, path, len(data))
    from jax._src.lib import xla_client
    try:
        return xla_client.XlaComputation(data).as_hlo_text(print_large_constants=True)
    except Exception as e:
        raise AotcError(f"{what} ({len(data)} bytes) that jaxlib cannot read: {_first_line(e)}",
                        file=path) from None


# ---------------------------------------------------------------- polymorphic MLIR text


def symbolic_names(text: str) -> list[str]:
    """The symbolic dimension names a jax export records (`jax.global_constant = "b"`)."""
    out: list[str] = []
    for n in _GLOBAL_CONSTANT.findall(text):
        if n and n not in out:
            out.append(n)
    return out


def refine_text(text: str, path: str, shapes: dict[str, int],
                concrete: list[tuple[int, ...]] | None = None) -> str:
    """Shape-polymorphic StableHLO text (a jax export's) with each symbolic dimension set to
    its size in `shapes`: main's argument types are made static, then jaxlib's shape
    refinement propagates the sizes through the module. `concrete`: the static shapes of
    main's arguments when they are known (an Exported's `in_avals`)."""
    _jax("shape-polymorphic StableHLO", path, len(text))
    from jaxlib.mlir import ir
    with _context():
        try:
            canonical = _print(ir.Module.parse(text))
        except Exception as e:
            raise AotcError(f"jaxlib cannot read the module to refine it: {_first_line(e)}", file=path) from None
    return _refine(_static_main(canonical, path, shapes, concrete), path, shapes)


_MAIN = re.compile(r"func\.func\s+public\s+@main\((.*?)\)\s*->\s*(.*?)\s*\{\s*$", re.S | re.M)
_ARG = re.compile(r"%arg(\d+)\s*:\s*(tensor<[^>]*>|!stablehlo\.token)")
_RESULT_TYPE = re.compile(r"tensor<[^>]*>|!stablehlo\.token")
_DIM_SIZE = re.compile(r"(%[\w#.]+)\s*=\s*stablehlo\.get_dimension_size\s+%arg(\d+),\s*dim\s*=\s*(\d+)")
_CALL = re.compile(r"call\s+@([\w.$]+)\(([^)]*)\)")
_POLY_MAIN = "_aotc_polymorphic_main"


def _static_main(text: str, path: str, shapes: dict[str, int],
                 concrete: list[tuple[int, ...]] | None = None) -> str:
    """`text` with a new static `@main` that converts its arguments to the polymorphic ones
    and calls the old main (as `jax.jit(exported.call)` does). Main's `?` dimensions get the
    sizes of the symbols they stand for, found as jax writes them: `get_dimension_size %argK,
    dim = D` passed to the wrapped main where its argument says `jax.global_constant = "NAME"`."""
    main = _MAIN.search(text)
    if main is None:
        raise AotcError("no public @main function to refine", file=path)
    body = text[main.end():]
    sizes = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in _DIM_SIZE.finditer(body)}
    dims: dict[tuple[int, int], str] = {}
    names: dict[str, str] = {}  # main's argument -> the name its callee's location gives it
    aliases = dict(re.findall(r'^(#loc\d*)\s*=\s*loc\("([^"]*)"\)\s*$', text, re.M))
    for call in _CALL.finditer(body):
        callee = re.search(r"func\.func\s+\w*\s*@" + re.escape(call.group(1)) + r"\((.*?)\)\s*->", text, re.S)
        if callee is None:
            continue
        params = re.split(r",\s*(?=%arg\d+\s*:)", callee.group(1))
        operands = [o.strip() for o in call.group(2).split(",")]
        for param, operand in zip(params, operands):
            g = _GLOBAL_CONSTANT.search(param)
            if g and g.group(1) and operand in sizes:  # jax marks helper arguments with ""
                dims[sizes[operand]] = g.group(1)
            where = re.search(r'loc\((?:"([^"]*)"|(#loc\d*))\)\s*$', param.strip())
            if where and operand.startswith("%arg") and operand not in names:
                name = where.group(1) or aliases.get(where.group(2) or "")
                if name:
                    names[operand] = name
    for name in sorted(set(dims.values()) - set(shapes)):
        raise AotcError(f"symbolic dimension '{name}' needs a size: pass --shape {name}=N", file=path)

    args = [(int(m.group(1)), m.group(2)) for m in _ARG.finditer(main.group(1))]
    results = _RESULT_TYPE.findall(main.group(2))
    lines, operands, params = [], [], []
    for k, ty in args:
        parts = ty[len("tensor<"):-1].split("x") if ty.startswith("tensor<") else []
        for d, p in enumerate(parts):
            if p.strip() == "?" and concrete is not None and k < len(concrete) and d < len(concrete[k]):
                parts[d] = str(concrete[k][d])
            elif p.strip() == "?":
                if (k, d) not in dims:
                    raise AotcError(f"main's argument {k} has a dynamic dimension {d} that is no symbolic "
                                    "dimension alone (an expression such as 2*b, or not a jax export): "
                                    "compile the serialized jax.export artifact instead, whose input shapes "
                                    "say what each dimension is", file=path)
                parts[d] = str(shapes[dims[(k, d)]])
        static = f"tensor<{'x'.join(parts)}>" if parts else ty
        loc = f' loc("{names[f"%arg{k}"]}")' if f"%arg{k}" in names else ""
        params.append(f"%arg{k}: {static}{loc}")
        if static != ty:
            lines.append(f"    %c{k} = stablehlo.convert %arg{k} : ({static}) -> {ty}")
            operands.append(f"%c{k}")
        else:
            operands.append(f"%arg{k}")
    res = ", ".join(results)
    n = len(results)
    lines.append(f"    %r{':' + str(n) if n > 1 else ''} = call @{_POLY_MAIN}({', '.join(operands)}) : "
                 f"({', '.join(t for _, t in args)}) -> ({res})")
    lines.append(f"    return {', '.join(f'%r#{i}' if n > 1 else '%r' for i in range(n))} : {res}")
    new_main = (f"  func.func public @main({', '.join(params)}) -> ({res}) {{\n" + "\n".join(lines) + "\n  }\n")
    renamed = text[:main.start()] + f"func.func private @{_POLY_MAIN}(" + text[main.start(1):]
    head = re.search(r"^module\b[^\n]*\{\s*$", renamed, re.M)
    if head is None:
        raise AotcError("no module to refine", file=path)
    return renamed[:head.end() + 1] + new_main + renamed[head.end() + 1:]


def _refine(text: str, path: str, shapes: dict[str, int]) -> str:
    """jaxlib's shape refinement of a module whose main has static argument shapes."""
    from jax._src.interpreters import mlir
    from jaxlib.mlir import ir
    import jaxlib._jax as jax_ext
    with _context():
        try:
            bytecode = mlir.module_to_bytecode(ir.Module.parse(text))
            refined = jax_ext.mlir.refine_polymorphic_shapes(bytecode, enable_shape_assertions=True,
                                                            validate_static_shapes=True)
            return _print(ir.Module.parse(refined))
        except Exception as e:
            raise AotcError(f"cannot refine the module to {_sizes(shapes)}: {_first_line(e)}",
                            file=path) from None


# ---------------------------------------------------------------- messages


def _evaluate(d, shapes: dict[str, int], path: str) -> int:
    if isinstance(d, int):
        return d
    expr = str(d)
    if not re.fullmatch(r"[\w\s+*()-]+", expr):  # jax prints sums and products: 2*b + 1
        raise AotcError(f"cannot evaluate the symbolic dimension '{expr}'", file=path)
    numeric = re.sub(r"[A-Za-z_]\w*", lambda m: str(shapes[m.group(0)]), expr)
    if not re.fullmatch(r"[\d\s+*()-]+", numeric):
        raise AotcError(f"cannot evaluate the symbolic dimension '{expr}'", file=path)
    value = eval(numeric, {"__builtins__": {}})  # digits and + - * ( ) only
    if value < 0:
        raise AotcError(f"dimension '{expr}' is {value} with {_sizes(shapes)}", file=path)
    return int(value)


def _aval_text(aval) -> str:
    return f"{aval.dtype}[{', '.join(str(d) for d in aval.shape)}]"


def _names(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _flags(names: list[str]) -> str:
    return " ".join(f"--shape {n}=N" for n in names)


def _sizes(shapes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(shapes.items()))


def _first_line(e: BaseException) -> str:
    """The first line of jax's message, printable characters only (it may quote the file)."""
    text = str(e).strip().splitlines()
    line = (text[0] if text else type(e).__name__)[:300]
    return "".join(c if c.isprintable() else "?" for c in line)
