"""Malformed HLO text: exactly one error, the first, at its exact line:col with a caret."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aotc.errors import AotcError
from aotc.frontend import parse_hlo, parse_hlo_file

DATA = Path(__file__).resolve().parents[1] / "data"

H = "HloModule m\n\n"
P = "  p = f32[2]{0} parameter(0)\n"


def entry(body: str) -> str:
    """A module whose entry computation holds `body` (instruction lines start at line 4)."""
    return H + "ENTRY e {\n" + body + "\n}\n"


DEEP = 5000

CASES = [
    ("empty", "", "1:1: error: empty input: expected 'HloModule'"),
    ("whitespace_only", "  \n\n", "3:1: error: empty input: expected 'HloModule'"),
    ("no_header", "ENTRY e {\n" + P + "}\n", "1:1: error: expected 'HloModule' at the start of the module, found 'ENTRY'"),
    ("garbage_char", H + "ENTRY e {\n  # = f32[] parameter(0)\n}\n", "4:3: error: unexpected character '#'"),
    ("nul_byte", entry("  x = f32[] \x00parameter(0)"), "4:13: error: unexpected character U+0000"),
    ("missing_eq", entry("  x f32[] parameter(0)"), "4:5: error: expected '=' after instruction name 'x', found 'f32'"),
    ("missing_paren", entry("  x = f32[] parameter 0"), "4:23: error: expected '(' after opcode 'parameter', found '0'"),
    ("bad_shape", entry("  x = f32[2,] parameter(0)"), "4:13: error: expected a dimension size, found ']'"),
    ("bad_element_type", entry("  x = f33[2] parameter(0)"), "4:7: error: unknown element type 'f33'"),
    ("token_with_dims", entry("  x = token[2] after-all()"), "4:7: error: token shapes have no dimensions: write token[]"),
    ("bad_layout", entry("  x = f32[2,2]{0,0} parameter(0)"),
     "4:15: error: layout {0,0} is not a permutation of the 2 dimensions"),
    ("unbounded_dim", entry("  x = f32[?] parameter(0)"),
     "4:11: error: unbounded dynamic dimensions ('?') are not supported"),
    ("unknown_opcode", entry(P + "  ROOT y = f32[2]{0} frobnicate(p)"), "5:22: error: unknown opcode 'frobnicate'"),
    ("bad_parameter_number", entry("  x = f32[] parameter(x)"), "4:23: error: expected a parameter number, found 'x'"),
    ("unterminated_string", entry(P + '  ROOT y = f32[2]{0} negate(p), metadata={op_name="abc}'),
     "5:51: error: unterminated string"),
    ("unterminated_comment", entry(P + "  /* never closed\n  ROOT y = f32[2]{0} negate(p)"),
     "5:3: error: unterminated comment"),
    ("unbalanced_attribute", entry(P + '  ROOT y = f32[2]{0} negate(p), metadata={op_name="x")'),
     "5:54: error: unbalanced ')': expected '}' to close '{' at 5:42"),
    ("missing_attribute_value", entry(P + "  ROOT y = f32[2]{0} negate(p), metadata=, sharding={replicated}"),
     "5:42: error: expected attribute value, found ','"),
    ("duplicate_attribute", entry(P + "  ROOT y = f32[2]{0} reverse(p), dimensions={0}, dimensions={0}"),
     "5:50: error: duplicate attribute 'dimensions'"),
    ("junk_after_value", entry(P + "  ROOT y = f32[] get-tuple-element(p), index=3x"),
     "5:47: error: unexpected 'x' after the value of 'index'"),
    ("stray_token", entry(P + "  ROOT y = f32[2]{0} negate(p) )"),
     "5:32: error: expected an instruction name or '}', found ')'"),
    ("truncated_operands", H + "ENTRY e {\n" + P + "  ROOT y = f32[2]{0} add(p,",
     "5:28: error: expected an operand name, found end of input"),
    ("truncated_computation", H + "ENTRY e {\n" + P,
     "5:1: error: unexpected end of input: computation 'e' is not closed"),
    ("truncated_attribute", H + "ENTRY e {\n" + P + "  ROOT y = f32[2]{0} negate(p), metadata={op_name=",
     "5:51: error: unexpected end of input ('{' at 5:42 is not closed)"),
    ("dim_overflows_int64", entry("  x = f32[99999999999999999999] parameter(0)"),
     "4:11: error: dimension size 99999999999999999999 does not fit in int64"),
    ("size_overflows_int64", entry("  x = f32[4294967296,4294967296] parameter(0)"),
     "4:7: error: shape f32[4294967296,4294967296] is too large (over 2^63-1 bytes)"),
    ("deep_tuple_shape", entry("  x = " + "(" * DEEP + "f32[]" + ")" * DEEP + " parameter(0)"),
     "4:207: error: nesting deeper than 200"),
    ("deep_literal_braces", entry("  x = f32[2] constant(" + "{" * DEEP + "1" + "}" * DEEP + ")"),
     "4:24: error: too many nested braces: f32[2] has rank 1"),
    ("deep_attribute_parens", entry(P + "  ROOT y = f32[2]{0} negate(p), backend_config=" + "(" * DEEP + ")" * DEEP),
     "5:248: error: nesting deeper than 200"),
    ("deep_operand_parens", entry(P + "  ROOT y = f32[2]{0} negate(" + "(" * DEEP + "p" + ")" * DEEP + ")"),
     "5:229: error: nesting deeper than 200"),
    ("literal_too_few", entry("  x = f32[3] constant({1, 2})"),
     "4:28: error: too few elements in dimension 0 of f32[3]: expected 3, found 2"),
    ("literal_too_many", entry("  x = f32[2,2] constant({ {1, 2}, {3, 4, 5} })"),
     "4:42: error: too many elements in dimension 1 of f32[2,2] (expected 2)"),
    ("literal_bad_value", entry("  x = f32[3] constant({1, x, 3})"), "4:27: error: invalid f32 value 'x'"),
    ("literal_missing_comma", entry("  x = f32[3] constant({1 2, 3})"), "4:26: error: expected ',' or '}', found '2'"),
    ("literal_trailing_comma", entry("  x = f32[2] constant({1, 2,})"), "4:29: error: expected a value after ','"),
    ("literal_int_out_of_range", entry("  x = s8[2] constant({1, 300})"), "4:26: error: value 300 is out of range for s8"),
    ("literal_float_out_of_range", entry("  x = f32[] constant(1e39)"), "4:22: error: value 1e39 is out of range for f32"),
    ("literal_huge_integer", entry("  x = s32[] constant(" + "9" * DEEP + ")"),
     "4:22: error: integer 999999999999... (5000 characters) is too large"),
    ("literal_f64_out_of_range", entry("  x = f64[2] constant({1e999, 1})"),
     "4:24: error: value 1e999 is out of range for f64"),
    ("literal_inf_without_infinity", entry("  x = f8e4m3fn[2] constant({1, -inf})"),
     "4:32: error: f8e4m3fn has no infinity"),
    ("literal_bad_pred", entry("  x = pred[2] constant({true, yes})"),
     "4:31: error: invalid pred value 'yes' (expected true, false, 1 or 0)"),
    ("literal_bad_complex", entry("  x = c64[] constant((1, ))"), "4:26: error: expected the imaginary part, found ')'"),
    ("literal_bad_nan_payload", entry("  x = bf16[] constant(nan(0x1ff))"),
     "4:23: error: NaN payload nan(0x1ff) does not fit the 7-bit mantissa of bf16"),
    ("bad_padding", entry(P + "  z = f32[] constant(0)\n  ROOT y = f32[9]{0} pad(p, z), padding=0_0_1_5"),
     "6:46: error: expected 'x' or the end of the padding, found '_'"),
    ("bad_slice", entry(P + "  ROOT y = f32[1]{0} slice(p), slice={[0:1}"),
     "5:43: error: expected ']' to close a slice dimension, found '}'"),
    ("bad_window_rank", entry(P + "  z = f32[] constant(0)\n"
                              "  ROOT y = f32[2]{0} reduce-window(p, z), window={size=3x3 stride=2}, to_apply=f"),
     "6:60: error: window stride has 1 dimension, size has 2"),
    ("bad_window_field", entry(P + "  z = f32[] constant(0)\n"
                               "  ROOT y = f32[2]{0} reduce-window(p, z), window={size=3 step=2}, to_apply=f"),
     "6:58: error: unknown window field 'step'"),
    ("bad_dim_labels", entry(P + "  ROOT y = f32[2]{0} convolution(p, p), dim_labels=b01f_01io-b01f"),
     "5:52: error: malformed dim_labels: expected the form b01f_01io->b01f"),
    ("bad_direction", entry(P + "  ROOT y = pred[2]{0} compare(p, p), direction=XX"),
     "5:48: error: unknown direction 'XX' (expected one of EQ, NE, LT, LE, GT, GE)"),
    ("bad_alias_kind", "HloModule m, input_output_alias={ {0}: (0, {}, maybe) }\n\nENTRY e {\n" + P + "}\n",
     "1:48: error: expected may-alias or must-alias, found 'maybe'"),
    ("bad_entry_layout", "HloModule m, entry_computation_layout={(f32[2]{0})->f99[]}\n\nENTRY e {\n" + P + "}\n",
     "1:53: error: unknown element type 'f99'"),
    ("missing_entry", H + "f {\n" + P + "}\n", "1:1: error: module has no ENTRY computation"),
    ("two_entries", H + "ENTRY f {\n" + P + "}\n\nENTRY g {\n" + P + "}\n",
     "7:1: error: second ENTRY computation (the first is 'f')"),
    ("empty_computation", H + "ENTRY e {\n}\n", "3:7: error: computation 'e' has no instructions"),
    ("duplicate_computation", H + "f {\n" + P + "}\n\nENTRY f {\n" + P + "}\n",
     "7:7: error: duplicate computation name 'f'"),
    ("duplicate_instruction", entry(P + P), "5:3: error: duplicate instruction name 'p'"),
    ("second_entry_before_later_error", H + "ENTRY f {\n" + P + "}\n\nENTRY g {\n  q = f32[2]{0} frob(0)\n}\n",
     "7:1: error: second ENTRY computation (the first is 'f')"),
    ("duplicate_name_before_later_error", entry(P + "  p = f32[2]{0} frob(0)"),
     "5:3: error: duplicate instruction name 'p'"),
    ("two_roots", entry("  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)"),
     "5:3: error: second ROOT in computation 'e' (the first is 'a')"),
    ("signature_disagrees_with_root", H + "f (a: f32[], b: f32[]) -> s32[] {\n  a = f32[] parameter(0)\n"
     "  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY e {\n" + P + "}\n",
     "3:27: error: computation 'f' returns s32[] but its root 'm' is f32[]"),
]


def _check(err: AotcError, expected: str, text: str, filename: str = "bad.hlo") -> None:
    lines = err.format().split("\n")
    assert lines[0] == f"{filename}:{expected}"
    assert len(lines) == 3, "expected the source line and a caret line"
    line_no, col = (int(x) for x in expected.split(":")[:2])
    source_line = text.split("\n")[line_no - 1]
    assert lines[2].endswith("^") and set(lines[2][:-1]) <= {" "}
    if len(source_line) <= 200:  # long lines are shown windowed around the caret
        shown = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in source_line)
        assert lines[1] == shown
        assert len(lines[2]) == col


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_malformed(name: str, text: str, expected: str) -> None:
    with pytest.raises(AotcError) as info:
        parse_hlo(text, "bad.hlo")
    _check(info.value, expected, text)


def test_case_count() -> None:
    assert len(CASES) >= 30


def test_binary_garbage_file(tmp_path) -> None:
    path = tmp_path / "garbage.hlo"
    path.write_bytes(b"HloModule m\n\nENTRY e {\n  p = f32[] \xff\xfe\x00\x01parameter(0)\n}\n")
    with pytest.raises(AotcError) as info:
        parse_hlo_file(path)
    lines = info.value.format().split("\n")
    assert lines[0] == f"{path}:4:13: error: invalid UTF-8 byte 0xff"
    assert lines[2] == " " * 12 + "^"


def test_random_bytes_file(tmp_path) -> None:
    path = tmp_path / "noise.hlo"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(AotcError) as info:
        parse_hlo_file(path)
    # the NUL at 1:1 comes before the first invalid UTF-8 byte
    assert info.value.format().split("\n")[0] == f"{path}:1:1: error: unexpected character U+0000"


def test_invalid_utf8_after_a_syntax_error(tmp_path) -> None:
    path = tmp_path / "late.hlo"
    path.write_bytes(b"HloModule m\n\nENTRY e {\n  p = f32[] frob(0)\n  \xc3\x28\n}\n")
    with pytest.raises(AotcError) as info:
        parse_hlo_file(path)
    assert info.value.format().split("\n")[0] == f"{path}:4:13: error: unknown opcode 'frob'"


def test_nul_bytes_file(tmp_path) -> None:
    path = tmp_path / "nul.hlo"
    path.write_bytes(b"\x00" * 64)
    with pytest.raises(AotcError) as info:
        parse_hlo_file(path)
    assert info.value.format().split("\n")[0] == f"{path}:1:1: error: unexpected character U+0000"


def test_missing_file(tmp_path) -> None:
    with pytest.raises(AotcError) as info:
        parse_hlo_file(tmp_path / "absent.hlo")
    assert "cannot read file" in info.value.format()


@pytest.mark.parametrize("cut", [1, 10, 40, 97, 150, 201])
def test_every_truncation_is_one_located_error(cut: int) -> None:
    """A file cut anywhere fails cleanly (never a Python exception) or, at a
    computation boundary, still parses."""
    text = (
        "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n"
        "ENTRY e {\n  p = f32[2]{0} parameter(0)\n  c = f32[2]{0} constant({1.5, -2})\n"
        "  ROOT a = f32[2]{0} add(p, c), metadata={op_name=\"add\"}\n}\n"
    )
    for end in range(0, len(text), cut):
        try:
            parse_hlo(text[:end], "cut.hlo")
        except AotcError as e:
            assert e.format().startswith("cut.hlo:")


SAMPLES = [p.read_text() for p in sorted(DATA.glob("corpus/*/model*.hlo"))[:12]]
PIECES = list('{}()[],=:%"/*\\\n -<>x_09.') + ["\x00", "\xff", "nan", "ROOT", "ENTRY", "->", "/*", "*/", "//"]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_corpus_gives_only_located_errors(data) -> None:
    """Random edits of real modules either parse or raise one AotcError with a location."""
    text = data.draw(st.sampled_from(SAMPLES))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        edit = data.draw(st.integers(0, 2))
        if edit == 0:
            text = text[:at] + text[at + 1:]
        elif edit == 1:
            text = text[:at] + data.draw(st.sampled_from(PIECES)) + text[at:]
        else:
            text = text[:at]
    try:
        parse_hlo(text, "mutated.hlo")
    except AotcError as e:
        assert e.loc is not None and e.format().startswith("mutated.hlo:")


def test_long_trivia_before_an_error_is_linear() -> None:
    """Comments and blank runs before a bad character are scanned once, not re-split."""
    import time

    text = "HloModule m\n" + " /* note */ \n // more\n" * 12 + "#"
    start = time.perf_counter()
    with pytest.raises(AotcError) as info:
        parse_hlo(text, "t.hlo")
    assert time.perf_counter() - start < 1.0
    assert info.value.format().split("\n")[0] == "t.hlo:26:1: error: unexpected character '#'"
