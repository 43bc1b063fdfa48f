"""The HLO text parser: recursive descent from text to an `aotc.hlo.ir.Module`.

It owns the grammar of modules, stack-frame tables, computations and
instructions, with the production above each method. Shapes are read by
`shapes`, attribute values and constant literals by `attributes` and
`literals`. It reports the first syntax error at its line:col and stops; it
never checks meaning (operand names, shapes of results), which is the
verifier's job.
"""
from __future__ import annotations

from ..hlo.ir import Alias, Computation, Instruction, Module, Raw, StackFrames
from ..hlo.opcodes import is_opcode
from ..hlo.shape import Shape
from .attributes import decode_attribute
from .lexer import Lexer, describe, unquote
from .literals import parse_literal
from .shapes import INT64_MAX, read_shape

SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def parse_hlo(text: str, filename: str = "<string>") -> Module:
    """Parse HLO module text; raises `AotcError` at the first syntax error."""
    return _Parser(text, filename).module()


def parse_shape(text: str, filename: str = "<string>") -> Shape:
    """Parse one shape such as `(f32[2,3]{1,0}, s32[])`."""
    lx = Lexer(text, filename)
    shape = read_shape(lx)
    lx.expect_kind("eof", "end of input after the shape")
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
        return Module(name, _unique_names(comps), entry, header_attrs=tuple(header), stack_frames=frames,
                      source=lx.file, **fields)

    # entry_layout := '{' '(' [shape (',' shape)*] ')' '->' shape '}'
    def entry_layout(self) -> tuple[tuple[Shape, ...], Shape]:
        lx = self.lx
        lx.expect("{", "to start entry_computation_layout")
        lx.expect("(", "to start the entry parameter shapes")
        params: list[Shape] = []
        if not lx.accept(")"):
            while True:
                params.append(read_shape(self.lx))
                if lx.accept(")"):
                    break
                lx.expect(",", "or ')' between entry parameter shapes")
        lx.expect("->", "in entry_computation_layout")
        result = read_shape(self.lx)
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
        declared = self.signature() if has_signature else None
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
        root_instr = next(i for i in instructions if i.name == (root or instructions[-1].name))
        if declared is not None and not root_instr.shape.same_logical(declared[0]):
            raise lx.error(f"computation '{name}' returns {declared[0].text(False)} but its root "
                           f"'{root_instr.name}' is {root_instr.shape.text(False)}", declared[1])
        return Computation(name, tuple(instructions), root or instructions[-1].name, entry_tok is not None,
                           has_signature, loc=lx.loc(tok.pos))

    # signature := '(' [NAME ':' shape (',' NAME ':' shape)*] ')' '->' shape
    def signature(self):
        """The declared result shape and where it is (the parameters are checked by their
        instructions)."""
        lx = self.lx
        lx.expect("(")
        if not lx.accept(")"):
            while True:
                lx.expect_kind("name", "a parameter name")
                lx.expect(":", "after a parameter name")
                read_shape(self.lx)
                if lx.accept(")"):
                    break
                lx.expect(",", "or ')' between parameters")
        lx.expect("->", "after the parameter list")
        pos = lx.peek().pos
        return read_shape(self.lx), pos

    # instruction := NAME '=' shape OPCODE '(' operands ')' (',' NAME '=' attribute_value)*
    # (after an optional 'ROOT', read by the computation)
    def instruction(self, taken: set[str]) -> Instruction:
        lx = self.lx
        tok = lx.expect_kind("name", "an instruction name or '}'")
        name = tok.text.lstrip("%")
        if name in taken:
            raise lx.error(f"duplicate instruction name '{name}'", tok.pos)
        lx.expect("=", f"after instruction name '{name}'")
        shape = read_shape(self.lx)
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
                read_shape(self.lx)  # old-style operand shape, implied by the operand itself
            out.append(lx.expect_kind("name", "an operand name").text.lstrip("%"))
            if not lx.accept(","):
                return tuple(out)


def _unique_names(comps: list[Computation]) -> tuple[Computation, ...]:
    """The computations with every instruction name unique in the module, as XLA makes them
    when it parses a module: an instruction name may recur in several computations (names are
    scoped to their computation in the text), but aotc refers to values by name, so a name the
    ENTRY computation or an earlier computation already uses becomes `name.N`, the first such
    name no instruction has. ENTRY names never change (a config refers to them)."""
    all_names = {i.name for c in comps for i in c.instructions}
    taken: set[str] = set()
    out: list[Computation] = []
    for comp in sorted(comps, key=lambda c: not c.is_entry):  # ENTRY first, then source order
        renames: dict[str, str] = {}
        for instr in comp.instructions:
            if instr.name in taken:
                k = 1
                while f"{instr.name}.{k}" in all_names:
                    k += 1
                renames[instr.name] = f"{instr.name}.{k}"
                all_names.add(renames[instr.name])
            taken.add(renames.get(instr.name, instr.name))
        if renames:
            comp = Computation(comp.name, tuple(i.with_(name=renames.get(i.name, i.name),
                                                        operands=tuple(renames.get(o, o) for o in i.operands))
                                                for i in comp.instructions),
                               renames.get(comp.root, comp.root), comp.is_entry, comp.has_signature, comp.loc)
        out.append(comp)
    order = {c.name: k for k, c in enumerate(comps)}
    return tuple(sorted(out, key=lambda c: order[c.name]))  # source order again
