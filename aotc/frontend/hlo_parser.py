"""The HLO text parser: recursive descent from text to an `aotc.hlo.ir.Module`.

It owns the grammar of modules, stack-frame tables, computations, instructions
and shapes, with the production above each method. Attribute values and
constant literals are decoded by `attributes` and `literals`. It reports the
first syntax error at its line:col and stops; it never checks meaning (operand
names, shapes of results), which is the verifier's job.

Tiled layouts (`{1,0:T(8,128)}`) and memory spaces (`S(1)`) are accepted and
their part after ':' is ignored: aotc targets CPU memory, where only the
minor-to-major order matters.
"""
from __future__ import annotations

import re
from math import prod
from pathlib import Path

from ..errors import AotcError, located
from ..hlo.dtypes import DTYPES
from ..hlo.ir import Alias, Computation, Instruction, Loc, Module, Raw, StackFrames
from ..hlo.opcodes import is_opcode
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .attributes import decode_attribute
from .lexer import MAX_NESTING, Lexer, describe, unquote
from .literals import parse_literal

INT64_MAX = (1 << 63) - 1
# element type, dims, layout of a shape without spaces, comments, dynamic dims or tiles
_PLAIN_SHAPE = re.compile(r"([a-z][a-z0-9]*)\[(\d{1,15}(?:,\d{1,15})*)?\](\{(?:\d{1,3}(?:,\d{1,3})*)?\})?(?![{:\w])")
SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def parse_hlo(text: str, filename: str = "<string>") -> Module:
    """Parse HLO module text; raises `AotcError` at the first syntax error."""
    return _Parser(text, filename).module()


def parse_hlo_file(path: str | Path) -> Module:
    """Parse an HLO text file (UTF-8); raises `AotcError` for unreadable or malformed files."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise AotcError(f"cannot read file: {e.strerror or e}", file=str(path)) from None
    return parse_hlo(decode_hlo(data, str(path)), str(path))


def decode_hlo(data: bytes, path: str) -> str:
    """The text of an HLO file's bytes; bytes that are not UTF-8 are a located error (or the
    syntax error before them, whichever comes first)."""
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line_start = before.rfind(b"\n") + 1
        col = len(before[line_start:].decode("utf-8", "replace")) + 1
        loc = Loc(path, before.count(b"\n") + 1, col)
        source = data.decode("utf-8", "replace")
        try:  # a syntax error before the bad byte is the first error
            parse_hlo(before.decode("utf-8"), path)
        except AotcError as earlier:
            if earlier.loc is not None and (earlier.loc.line, earlier.loc.col) < (loc.line, loc.col):
                raise located(earlier.message, earlier.loc, source) from None
        raise located(f"invalid UTF-8 byte 0x{data[e.start]:02x}", loc, source) from None


def parse_shape(text: str, filename: str = "<string>") -> Shape:
    """Parse one shape such as `(f32[2,3]{1,0}, s32[])`."""
    p = _Parser(text, filename)
    shape = p.shape()
    p.lx.expect_kind("eof", "end of input after the shape")
    return shape


class _Parser:
    def __init__(self, text: str, filename: str):
        self.lx = Lexer(text, filename)

    # module := 'HloModule' NAME (',' header_attr)* stack_tables computation* EOF
    def module(self) -> Module:
        lx = self.lx
        if lx.peek().kind == "eof":
            raise lx.error("empty input: expected 'HloModule'", lx.peek().pos)
        head = lx.expect("HloModule", "at the start of the module")
        name = lx.expect_kind("name", "the module name").text
        fields: dict = {"aliases": (), "entry_params": None, "entry_result": None}
        header: list[tuple[str, Raw]] = []
        seen: set[str] = set()
        while lx.accept(","):
            key = lx.expect_kind("name", "a module attribute name")
            if key.text in seen:
                raise lx.error(f"duplicate module attribute '{key.text}'", key.pos)
            seen.add(key.text)
            lx.expect("=", f"after module attribute '{key.text}'")
            if key.text == "entry_computation_layout":
                fields["entry_params"], fields["entry_result"] = self.entry_layout()
            elif key.text == "input_output_alias":
                fields["aliases"] = self.aliases()
            else:
                header.append((key.text, Raw(lx.raw_value()[0])))
        frames = self.stack_tables()
        comps: list[Computation] = []
        names: set[str] = set()
        entry: str | None = None
        while lx.peek().kind != "eof":
            comp = self.computation(names, entry)
            entry = comp.name if comp.is_entry else entry
            names.add(comp.name)
            comps.append(comp)
        if entry is None:
            raise lx.error("module has no ENTRY computation", head.pos)
        return Module(name, tuple(comps), entry, header_attrs=tuple(header), stack_frames=frames,
                      source=lx.file, **fields)

    # entry_layout := '{' '(' [shape (',' shape)*] ')' '->' shape '}'
    def entry_layout(self) -> tuple[tuple[Shape, ...], Shape]:
        lx = self.lx
        lx.expect("{", "to start entry_computation_layout")
        lx.expect("(", "to start the entry parameter shapes")
        params: list[Shape] = []
        if not lx.accept(")"):
            while True:
                params.append(self.shape())
                if lx.accept(")"):
                    break
                lx.expect(",", "or ')' between entry parameter shapes")
        lx.expect("->", "in entry_computation_layout")
        result = self.shape()
        lx.expect("}", "to close entry_computation_layout")
        return tuple(params), result

    # aliases := '{' [alias (',' alias)*] '}'
    # alias := shape_index ':' '(' INT ',' shape_index [',' ('may-alias' | 'must-alias')] ')'
    def aliases(self) -> tuple[Alias, ...]:
        lx = self.lx
        lx.expect("{", "to start input_output_alias")
        out: list[Alias] = []
        if lx.accept("}"):
            return ()
        while True:
            output_index = self.shape_index()
            lx.expect(":", "after the output shape index")
            lx.expect("(", "to start an alias")
            number = lx.expect_int("a parameter number")[0]
            lx.expect(",", "after the parameter number")
            param_index = self.shape_index()
            kind = "may-alias"
            if lx.accept(","):
                tok = lx.expect_kind("name", "may-alias or must-alias")
                if tok.text not in ("may-alias", "must-alias"):
                    raise lx.error(f"expected may-alias or must-alias, found {describe(tok)}", tok.pos)
                kind = tok.text
            lx.expect(")", "to close an alias")
            out.append(Alias(output_index, number, param_index, kind))
            if lx.accept("}"):
                return tuple(out)
            lx.expect(",", "or '}' between aliases")

    # shape_index := '{' [INT (',' INT)*] '}'
    def shape_index(self) -> tuple[int, ...]:
        lx = self.lx
        lx.expect("{", "to start a shape index")
        out: list[int] = []
        if not lx.accept("}"):
            while True:
                out.append(lx.expect_int("a shape index")[0])
                if lx.accept("}"):
                    break
                lx.expect(",", "or '}' in a shape index")
        return tuple(out)

    # stack_tables := (SECTION row*)* ; row := INT (STRING | '{' ... '}')
    def stack_tables(self) -> StackFrames | None:
        lx = self.lx
        tables: dict[str, list[tuple[int, str]]] = {}
        while True:
            tok = lx.peek()
            if tok.kind != "name" or tok.text not in SECTIONS:
                break
            save = lx.pos
            lx.next()
            if lx.at("{") or lx.at("("):  # a computation that happens to have this name
                lx.pos = save
                break
            if tok.text in tables:
                raise lx.error(f"duplicate section '{tok.text}'", tok.pos)
            rows = tables[tok.text] = []
            while lx.peek().kind == "num":
                number = lx.expect_int("a row number")[0]
                if tok.text in ("FileNames", "FunctionNames"):
                    rows.append((number, unquote(lx.expect_kind("string", "a quoted name").text)))
                else:
                    if not lx.at("{"):
                        raise lx.error(f"expected '{{' to start a {tok.text} row, found {describe(lx.peek())}",
                                       lx.peek().pos)
                    rows.append((number, lx.raw_value()[0]))
        if not tables:
            return None
        return StackFrames(
            file_names=tuple(tables.get("FileNames", ())),
            function_names=tuple(tables.get("FunctionNames", ())),
            file_locations=tuple(tables.get("FileLocations", ())),
            stack_frames=tuple(tables.get("StackFrames", ())),
            present=tuple(tables),
        )

    # computation := ['ENTRY'] NAME [signature] '{' instruction+ '}'
    def computation(self, taken: set[str], entry: str | None) -> Computation:
        lx = self.lx
        entry_tok = lx.accept("ENTRY")
        if entry_tok is not None and entry is not None:
            raise lx.error(f"second ENTRY computation (the first is '{entry}')", entry_tok.pos)
        tok = lx.expect_kind("name", "a computation name")
        name = tok.text.lstrip("%")
        if name in taken:
            raise lx.error(f"duplicate computation name '{name}'", tok.pos)
        has_signature = lx.at("(")
        if has_signature:
            self.signature()
        lx.expect("{", f"to start the body of computation '{name}'")
        instructions: list[Instruction] = []
        names: set[str] = set()
        root: str | None = None
        while not lx.accept("}"):
            if lx.peek().kind == "eof":
                raise lx.error(f"unexpected end of input: computation '{name}' is not closed", lx.peek().pos)
            root_tok = lx.accept("ROOT")
            if root_tok is not None and root is not None:
                raise lx.error(f"second ROOT in computation '{name}' (the first is '{root}')", root_tok.pos)
            instr = self.instruction(names)
            names.add(instr.name)
            root = instr.name if root_tok is not None else root
            instructions.append(instr)
        if not instructions:
            raise lx.error(f"computation '{name}' has no instructions", tok.pos)
        return Computation(name, tuple(instructions), root or instructions[-1].name, entry_tok is not None,
                           has_signature, loc=lx.loc(tok.pos))

    # signature := '(' [NAME ':' shape (',' NAME ':' shape)*] ')' '->' shape
    def signature(self) -> None:
        lx = self.lx
        lx.expect("(")
        if not lx.accept(")"):
            while True:
                lx.expect_kind("name", "a parameter name")
                lx.expect(":", "after a parameter name")
                self.shape()
                if lx.accept(")"):
                    break
                lx.expect(",", "or ')' between parameters")
        lx.expect("->", "after the parameter list")
        self.shape()

    # instruction := NAME '=' shape OPCODE '(' operands ')' (',' NAME '=' attribute_value)*
    # (after an optional 'ROOT', read by the computation)
    def instruction(self, taken: set[str]) -> Instruction:
        lx = self.lx
        tok = lx.expect_kind("name", "an instruction name or '}'")
        name = tok.text.lstrip("%")
        if name in taken:
            raise lx.error(f"duplicate instruction name '{name}'", tok.pos)
        lx.expect("=", f"after instruction name '{name}'")
        shape = self.shape()
        op = lx.expect_kind("name", "an opcode")
        if not is_opcode(op.text):
            raise lx.error(f"unknown opcode '{op.text}'", op.pos)
        lx.expect("(", f"after opcode '{op.text}'")
        operands: tuple[str, ...] = ()
        literal = number = None
        if op.text == "parameter":
            number, at = lx.expect_int("a parameter number")
            if not 0 <= number <= INT64_MAX:
                raise lx.error(f"parameter number {number} is out of range", at)
        elif op.text == "constant":
            literal = parse_literal(lx, shape)
        else:
            operands = self.operands()
        lx.expect(")", f"to close the operands of '{op.text}'")
        attrs: list[tuple[str, object]] = []
        seen: set[str] = set()
        while lx.accept(","):
            key = lx.expect_kind("name", "an attribute name")
            if key.text in seen:
                raise lx.error(f"duplicate attribute '{key.text}'", key.pos)
            seen.add(key.text)
            lx.expect("=", f"after attribute name '{key.text}'")
            attrs.append((key.text, decode_attribute(lx, key.text)))
        return Instruction(name, op.text, shape, operands, tuple(attrs), literal, number, loc=lx.loc(tok.pos))

    # operands := [operand (',' operand)*] ; operand := [shape] NAME
    def operands(self) -> tuple[str, ...]:
        lx = self.lx
        out: list[str] = []
        if lx.at(")"):
            return ()
        while True:
            tok = lx.peek()
            if tok.text == "(" or (tok.kind == "name" and lx.text.startswith("[", tok.end)):
                self.shape()  # old-style operand shape, implied by the operand itself
            out.append(lx.expect_kind("name", "an operand name").text.lstrip("%"))
            if not lx.accept(","):
                return tuple(out)

    # shape := array_shape | '(' [shape (',' shape)*] ')'
    def shape(self) -> Shape:
        lx = self.lx
        stack: list[list[Shape]] = []  # open tuples, innermost last (no recursion)
        while True:
            tok = lx.peek()
            if tok.text == "(" and tok.kind == "punct":
                if len(stack) >= MAX_NESTING:
                    raise lx.error(f"nesting deeper than {MAX_NESTING}", tok.pos)
                lx.next()
                if not lx.accept(")"):
                    stack.append([])
                    continue
                value: Shape = TupleShape(())
            else:
                value = self.array_shape()
            while True:
                if not stack:
                    return value
                stack[-1].append(value)
                tok = lx.peek()
                if tok.text == "," and tok.kind == "punct":
                    lx.next()
                    break
                if tok.text == ")" and tok.kind == "punct":
                    lx.next()
                    value = TupleShape(tuple(stack.pop()))
                    continue
                raise lx.error(f"expected ',' or ')' in a tuple shape, found {describe(tok)}", tok.pos)

    # array_shape := TYPE '[' [['<='] INT (',' ['<='] INT)*] ']' [layout]
    def array_shape(self) -> ArrayShape:
        lx = self.lx
        fast = self.plain_array_shape()
        if fast is not None:
            return fast
        tok = lx.peek()
        dt = DTYPES.get(tok.text) if tok.kind == "name" else None
        if dt is None:
            if tok.kind == "name" and lx.text.startswith("[", tok.end):
                raise lx.error(f"unknown element type '{tok.text}'", tok.pos)
            raise lx.error(f"expected a shape, found {describe(tok)}", tok.pos)
        lx.next()
        lx.expect("[", f"after element type '{dt.name}'")
        dims: list[int] = []
        dynamic: list[bool] = []
        if not lx.accept("]"):
            while True:
                pos = lx.skip()
                if lx.text.startswith("?", pos):
                    raise lx.error("unbounded dynamic dimensions ('?') are not supported", pos)
                dynamic.append(lx.accept("<=") is not None)
                size, pos = lx.expect_int("a dimension size")
                if size < 0:
                    raise lx.error(f"negative dimension size {size}", pos)
                if size > INT64_MAX:
                    raise lx.error(f"dimension size {size} does not fit in int64", pos)
                dims.append(size)
                if lx.accept("]"):
                    break
                lx.expect(",", "or ']' in shape dimensions")
        if dt.kind == "token" and dims:
            raise lx.error("token shapes have no dimensions: write token[]", tok.pos)
        if prod(dims) * dt.nbytes > INT64_MAX:
            raise lx.error(f"shape {dt.name}[{','.join(map(str, dims))}] is too large (over 2^63-1 bytes)", tok.pos)
        layout = self.layout(len(dims)) if lx.text.startswith("{", lx.pos) else None
        return ArrayShape(dt, tuple(dims), layout, tuple(dynamic) if any(dynamic) else ())

    def plain_array_shape(self) -> ArrayShape | None:
        """The common spelling `f32[2,3]{1,0}` in one regex match; None for anything else."""
        lx = self.lx
        m = _PLAIN_SHAPE.match(lx.text, lx.skip())
        if m is None or m.group(1) not in DTYPES:
            return None
        dt, dims_text, layout_text = DTYPES[m.group(1)], m.group(2), m.group(3)
        dims = tuple(map(int, dims_text.split(","))) if dims_text else ()
        layout = None
        if layout_text is not None:
            layout = tuple(map(int, layout_text[1:-1].split(","))) if layout_text != "{}" else ()
            if sorted(layout) != list(range(len(dims))):
                return None  # the full path reports it
        if dt.kind == "token" and dims or prod(dims) * dt.nbytes > INT64_MAX:
            return None
        lx.pos = m.end()
        return ArrayShape(dt, dims, layout)

    # layout := '{' [INT (',' INT)*] [':' tiling_and_memory_space] '}'
    def layout(self, rank: int) -> tuple[int, ...]:
        lx = self.lx
        start = lx.expect("{").pos
        order: list[int] = []
        if not lx.at("}") and not lx.at(":"):
            while True:
                order.append(lx.expect_int("a layout dimension")[0])
                if not lx.accept(","):
                    break
        if lx.at(":"):  # tiles, memory space etc.: ignored (see the module docstring)
            close = lx.text.find("}", lx.pos)
            if close < 0:
                raise lx.error("unexpected end of input in a layout", len(lx.text))
            lx.pos = close
        lx.expect("}", "or ',' in a layout")
        if sorted(order) != list(range(rank)):
            text = "{" + ",".join(map(str, order)) + "}"
            raise lx.error(f"layout {text} is not a permutation of the {rank} dimensions", start)
        return tuple(order)
