"""The StableHLO text parser: recursive descent from MLIR's pretty (and generic) form, as
`jax.jit(f).lower(...).as_text()` prints it, to `syntax` (functions, ops, regions).

It owns the grammar of modules, functions, blocks and op headers (results, the generic
form, locations), with each production in a comment above its method; the pretty syntax
of each op lives in `pretty`. It reports the first syntax error at its line:col and stops;
it never checks meaning, which the conversion to HLO (`convert`) and the verifier do.
"""
from __future__ import annotations

import re

from ..lexer import unquote
from .attributes import read_attr_dict, read_attribute
from .lexer import MAX_NESTING, Lexer, describe
from .pretty import PRETTY as BASIC_PRETTY, TERMINATORS
from .pretty_more import PRETTY as MORE_PRETTY
from .syntax import Arg, Block, Func, ModuleSyntax, Op, Use
from .types import read_op_types, read_results, read_type
from .unsupported import refusal

PRETTY = {**BASIC_PRETTY, **MORE_PRETTY}

_LOC_NAME = re.compile(r'loc\(\s*"((?:[^"\\]|\\.)*)"')


def parse_syntax(text: str, filename: str = "<string>") -> ModuleSyntax:
    """Parse StableHLO text into its syntax tree; AotcError at the first syntax error."""
    return Parser(Lexer(text, filename)).module()


class Parser:
    def __init__(self, lx: Lexer):
        self.lx = lx
        self.depth = 0

    # module := alias_def* ('module' ['@' NAME] ['attributes' attr_dict] '{' top* '}' | top+) alias_def*
    def module(self) -> ModuleSyntax:
        lx = self.lx
        aliases: dict[str, str] = {}
        self.alias_defs(aliases)
        tok = lx.peek()
        if tok.kind == "eof":
            raise lx.error("empty input: expected 'module' or 'func.func'", tok.pos)
        name = "module"
        funcs: list[Func] = []
        if lx.accept("module"):
            if lx.peek().kind == "symbol":
                name = lx.next().text[1:].strip('"')
            if lx.accept("attributes"):
                lx.expect("{", "after 'attributes'")
                read_attr_dict(lx)
            lx.expect("{", "to start the module body")
            while not lx.accept("}"):
                if lx.peek().kind == "eof":
                    raise lx.error("unexpected end of input: the module is not closed", lx.peek().pos)
                funcs.append(self.func())
            self.trailing_loc()
        elif lx.at("func.func"):
            while lx.at("func.func"):
                funcs.append(self.func())
        else:
            raise lx.error(f"expected 'module' or 'func.func', found {describe(tok)}", tok.pos)
        self.alias_defs(aliases)
        end = lx.peek()
        if end.kind != "eof":
            raise lx.error(f"expected end of input after the module, found {describe(end)}", end.pos)
        return ModuleSyntax(name, funcs, tok.pos, aliases)

    # alias_def := HASH '=' attribute  (location aliases `#loc1 = loc(...)` and others)
    def alias_defs(self, aliases: dict[str, str]) -> None:
        lx = self.lx
        while lx.peek().kind == "hash":
            tok = lx.next()
            lx.expect("=", f"after the alias '{tok.text}'")
            if lx.at("loc"):
                lx.next()
                aliases[tok.text] = "loc" + lx.balanced("(")
            else:
                read_attribute(lx)

    # func := 'func.func' ['public' | 'private' | 'nested'] SYMBOL '(' [arg (',' arg)*] ')'
    #         ['->' results] ['attributes' attr_dict] region
    def func(self) -> Func:
        lx = self.lx
        head = lx.peek()
        if not lx.at("func.func"):
            if head.kind == "name" and "." in head.text:
                raise lx.error(f"aotc cannot read {head.text} at the top of a module yet", head.pos)
            raise lx.error(f"expected 'func.func' or '}}', found {describe(head)}", head.pos)
        lx.next()
        if lx.peek().text in ("public", "private", "nested") and lx.peek().kind == "name":
            lx.next()
        sym = lx.expect_kind("symbol", "a function name such as @main")
        name = unquote(sym.text[1:]) if sym.text.startswith('@"') else sym.text[1:]
        lx.expect("(", "to start the function arguments")
        args: list[Arg] = []
        if not lx.accept(")"):
            while True:
                args.append(self.arg())
                if lx.accept(")"):
                    break
                lx.expect(",", "or ')' between function arguments")
        result_types: list = []
        result_attrs: list[dict] = []
        if lx.accept("->"):
            if lx.accept("("):
                if not lx.accept(")"):
                    while True:
                        result_types.append(read_type(lx))
                        result_attrs.append(self.opt_attr_dict())
                        self.trailing_loc()
                        if lx.accept(")"):
                            break
                        lx.expect(",", "or ')' between function results")
            else:
                result_types.append(read_type(lx))
                result_attrs.append({})
        if lx.accept("attributes"):
            lx.expect("{", "after 'attributes'")
            read_attr_dict(lx)
        body = self.region(tuple(args))
        self.trailing_loc()
        return Func(name, tuple(args), tuple(result_types), tuple(result_attrs), body, sym.pos)

    # arg := VALUE ':' type [attr_dict] [loc]
    def arg(self) -> Arg:
        lx = self.lx
        tok = lx.expect_kind("value", "an argument name such as %arg0")
        if "#" in tok.text:
            raise lx.error(f"an argument name cannot have a result number: {describe(tok)}", tok.pos)
        lx.expect(":", "after the argument name")
        shape = read_type(lx)
        attrs = self.opt_attr_dict()
        loc = self.trailing_loc()
        m = _LOC_NAME.match(loc) if loc else None
        return Arg(tok.text, shape, tok.pos, attrs, unquote('"' + m.group(1) + '"') if m else loc or None)

    def opt_attr_dict(self) -> dict:
        if self.lx.accept("{"):
            return read_attr_dict(self.lx)
        return {}

    # loc := 'loc' '(' ... ')'   (kept as text; aotc names parameters from it)
    def trailing_loc(self) -> str:
        lx = self.lx
        if lx.at("loc") and lx.text.startswith("(", lx.peek().end):
            lx.next()
            return "loc" + lx.balanced("(")
        return ""

    # region := '{' [BLOCK_LABEL ['(' arg (',' arg)* ')'] ':'] op* '}'
    def region(self, implicit_args: tuple[Arg, ...] = ()) -> Block:
        lx = self.lx
        open_tok = lx.expect("{", "to start a region")
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise lx.error(f"nesting deeper than {MAX_NESTING}", open_tok.pos)
        args = implicit_args
        if lx.peek().kind == "block":
            lx.next()
            found: list[Arg] = []
            if lx.accept("("):
                while True:
                    found.append(self.arg())
                    if lx.accept(")"):
                        break
                    lx.expect(",", "or ')' between block arguments")
            lx.expect(":", "after the block label")
            args = tuple(found)
        ops: list[Op] = []
        while not lx.accept("}"):
            tok = lx.peek()
            if tok.kind == "eof":
                raise lx.error("unexpected end of input: a region is not closed", tok.pos)
            if tok.kind == "block":
                raise lx.error("regions with more than one block are not supported", tok.pos)
            ops.append(self.op())
        self.depth -= 1
        return Block(args, ops, open_tok.pos)

    # op := [results '='] (STRING generic | NAME pretty) [loc]
    # results := VALUE [':' INT] | VALUE (',' VALUE)*
    def op(self) -> Op:
        lx = self.lx
        first = lx.peek()
        results: list[str] = []
        ssa = ""
        if first.kind == "value":
            while True:
                tok = lx.expect_kind("value", "a result name")
                if "#" in tok.text:
                    raise lx.error(f"a result name cannot have a result number: {describe(tok)}", tok.pos)
                if lx.accept(":"):
                    count = lx.expect_int("the number of results")
                    if not 1 <= count <= 1 << 16:
                        raise lx.error(f"bad number of results {count}", tok.pos)
                    results.extend(f"{tok.text}#{i}" for i in range(count))
                else:
                    results.append(tok.text)
                ssa = ssa or tok.text[1:]
                if not lx.accept(","):
                    break
            lx.expect("=", "after the result names")
        tok = lx.peek()
        if tok.kind == "string":
            lx.next()
            op = self.generic(unquote(tok.text), tok.pos)
        elif tok.kind == "name":
            lx.next()
            reader = PRETTY.get(tok.text)
            if reader is None:
                if "." not in tok.text and tok.text not in TERMINATORS:
                    raise lx.error(f"expected an op name, found {describe(tok)}", tok.pos)
                raise lx.error(refusal(tok.text) or f"aotc cannot read {tok.text} yet", tok.pos)
            op = reader(self, tok.text, tok.pos, len(results))
        else:
            raise lx.error(f"expected an op, found {describe(tok)}", tok.pos)
        self.trailing_loc()
        if len(op.result_types) != len(results):
            n = len(op.result_types)
            raise lx.error(f"{op.name} gives {n} result{'s' if n != 1 else ''} but {len(results)} "
                           f"{'are' if len(results) != 1 else 'is'} named", first.pos)
        op.results, op.ssa, op.result_pos = tuple(results), ssa, first.pos
        return op

    # generic := '(' [VALUE (',' VALUE)*] ')' ['<' attr_dict '>'] ['(' region (',' region)* ')']
    #            [attr_dict] ':' function_type
    def generic(self, name: str, pos: int) -> Op:
        lx = self.lx
        lx.expect("(", f"after \"{name}\"")
        operands = self.uses(")")
        attrs: dict = {}
        if lx.accept("<"):
            lx.expect("{", "to start the properties")
            attrs.update(read_attr_dict(lx))
            lx.expect(">", "to close the properties")
        regions: list[Block] = []
        if lx.accept("("):
            while True:
                regions.append(self.region())
                if lx.accept(")"):
                    break
                lx.expect(",", "or ')' between regions")
        if lx.accept("{"):
            for k, v in read_attr_dict(lx).items():
                attrs.setdefault(k, v)
        lx.expect(":", f"before the type of \"{name}\"")
        if not lx.at("("):
            raise lx.error(f"expected a function type '(...) -> ...', found {describe(lx.peek())}", lx.peek().pos)
        operand_types, results = read_op_types(lx)
        if len(operand_types) != len(operands):
            raise lx.error(f"\"{name}\" has {len(operands)} operands but {len(operand_types)} operand types", pos)
        return Op(name, (), tuple(operands), attrs, tuple(regions), results, pos, pos)

    def use(self) -> Use:
        tok = self.lx.expect_kind("value", "an operand such as %0")
        return Use(tok.text, tok.pos)

    def uses(self, closer: str | None = None) -> list[Use]:
        """VALUE (',' VALUE)* [closer]; with a closer the list may be empty."""
        lx = self.lx
        out: list[Use] = []
        if closer is not None and lx.accept(closer):
            return out
        while True:
            tok = lx.expect_kind("value", "an operand such as %0")
            out.append(Use(tok.text, tok.pos))
            if closer is not None and lx.accept(closer):
                return out
            if closer is None and not (lx.at(",") and lx.text.startswith("%", self.after_comma())):
                return out
            lx.expect(",", f"or '{closer}' between operands" if closer else "between operands")

    def after_comma(self) -> int:
        """Offset of the token after the ',' at the cursor (the cursor stays)."""
        lx = self.lx
        save = lx.pos
        lx.next()
        at = lx.skip()
        lx.pos = save
        return at
