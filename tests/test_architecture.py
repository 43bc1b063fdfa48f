"""The package's shape: data flows one way, so no module imports from a later stage, and
imports sit at the top of modules (a function-local import hides a cycle). Read from the
source with `ast`; the few transitional exceptions are listed with their reason."""
from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "aotc"

# stage of each package: a module may import from its own stage and earlier ones
STAGE = {"errors": 0, "options": 0, "runtime_c": 0, "hlo": 1, "kernel": 2, "frontend": 2, "ops": 3,
         "passes": 3, "lower": 4, "emit_c": 5, "toolchain": 6, "driver": 7, "info": 8, "api": 8, "coverage": 8, "integrations": 9, "jax": 9, "keras": 9, "cli": 9,
         "__init__": 9, "__main__": 10}

UPWARD_OK: set[tuple[str, str]] = set()
LOCAL_IMPORT_OK = {
    "toolchain/loader.py",  # cffi is needed only to load a library into Python
    "frontend/jax_bridge.py",
    "integrations/lowering.py",  # jax is optional: imported when a function is compiled  # jax/jaxlib are optional: only binary formats and --shape need them
}


def _modules():
    for p in sorted(PKG.rglob("*.py")):
        yield p, p.relative_to(PKG).as_posix(), ast.parse(p.read_text())


def _stage_of(rel: str) -> int:
    head = rel.split("/")[0].removesuffix(".py")
    return STAGE[head]


def _targets(rel: str, node) -> list[str]:
    """The aotc packages an import statement reads from."""
    parts = rel.split("/")[:-1]
    if isinstance(node, ast.ImportFrom):
        if node.level == 0:
            mod = node.module or ""
            return [mod.split(".")[1]] if mod.startswith("aotc.") else []
        base = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
        mod = (node.module or "").split(".")
        full = base + [m for m in mod if m]
        if full:
            return [full[0]]
        return [n.name for n in node.names]  # `from . import x` at the top level
    return [a.name.split(".")[1] for a in node.names if a.name.startswith("aotc.")]


def _runtime_nodes(tree):
    """Every node but the bodies of `if TYPE_CHECKING:` blocks (annotations only)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    return [n for n in ast.walk(tree) if id(n) not in skip]


def test_no_module_imports_from_a_later_stage():
    bad = []
    for path, rel, tree in _modules():
        me = _stage_of(rel)
        for node in _runtime_nodes(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(rel, node):
                    if t in STAGE and STAGE[t] > me and (rel, t) not in UPWARD_OK:
                        bad.append(f"{rel}:{node.lineno} imports {t}")
    assert not bad, "\n".join(bad)


def test_imports_sit_at_module_level():
    bad = []
    for path, rel, tree in _modules():
        if rel in LOCAL_IMPORT_OK:
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        bad.append(f"{rel}:{node.lineno}")
    assert not bad, "imports inside functions: " + ", ".join(bad)


# C syntax in a string: a statement, a loop or branch header, a pointer member access
_C_TEXT = re.compile(r"\bfor \(|\bif \(|\bwhile \(|;\s*$|\bint64_t\b|\bconst float\b")
# the element types' C storage names are data of the type table, printed by emit_c
_C_TEXT_OK = {"hlo/dtypes.py"}


def _docstrings(tree) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_no_c_text_outside_the_printer():
    """Only emit_c (and the runtime and toolchain, which are about C files) write C."""
    bad = []
    for path, rel, tree in _modules():
        if rel.split("/")[0] in ("emit_c", "runtime_c", "toolchain") or rel in _C_TEXT_OK:
            continue
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                    and _C_TEXT.search(node.value)):
                bad.append(f"{rel}:{node.lineno}: {node.value[:60]!r}")
    assert not bad, "\n".join(bad)


def test_opcodes_are_enum_members_outside_the_table_and_the_op_definitions():
    """Opcodes are `Op` members (hlo/opcodes.py): outside the table and the op definitions
    (aotc/ops/), no opcode is compared with a string and no list of spellings classifies
    ops (a classification is a trait of the op or a fact of the table)."""
    from aotc.hlo.opcodes import OPCODES

    compare = re.compile(r'\bopcode\s*(?:==|!=)\s*"([a-z0-9-]+)"|\bopcode\s+(?:not\s+)?in\s+[\(\{\[]\s*"([a-z0-9-]+)"')

    def spellings(node, text: str) -> list | None:
        """The strings of a tuple, list or set of two or more string literals, or the keys of
        a dict of two or more string keys whose values are short (one line, no comma: a
        classification, not a table of programs or rules); None for anything else."""
        elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) or elts is None or len(elts) < 2:
            return None
        if isinstance(node, ast.Dict) and any(
                v is None or any(c in (ast.get_source_segment(text, v) or ",") for c in ",\n")
                for v in node.values):
            return None
        if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
            return None
        return [e.value for e in elts]

    bad = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).as_posix()
        if rel.startswith("aotc/ops/") or rel == "aotc/hlo/opcodes.py":
            continue
        text = path.read_text()
        for m in compare.finditer(text):
            if (m.group(1) or m.group(2)) in OPCODES:
                bad.append(f"{rel}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}")
        for node in ast.walk(ast.parse(text)):
            items = spellings(node, text)
            if items is not None and all(i in OPCODES for i in items):
                bad.append(f"{rel}:{node.lineno}: {ast.get_source_segment(text, node)[:60]}")
    assert not bad, "opcode spellings outside the table and the op definitions:\n" + "\n".join(bad)


def test_every_instruction_carries_an_op_member():
    from aotc.frontend import parse_hlo
    from aotc.hlo.ir import Instruction
    from aotc.hlo.opcodes import Op
    from aotc.hlo.dtypes import DTYPES
    from aotc.hlo.shape import ArrayShape

    m = parse_hlo("HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n")
    assert all(type(i.opcode) is Op for _, i in m.instructions())
    made = Instruction("z", "reduce-window", ArrayShape(DTYPES["f32"], ()))  # made by a pass, from a spelling
    assert made.opcode is Op.REDUCE_WINDOW and made.opcode == "reduce-window"
