"""Probe modules: for every opcode of the opcode table and every element type, one small HLO
module (or a few variants) that uses the opcode on that type and nothing it does not need.

A probe is plain data (name, opcode, element type, HLO text); whether XLA:CPU accepts it and
what it computes is recorded by the test suite's generator, whether aotc compiles it is asked
of aotc (`aotc.coverage.report`). The opcodes that take no element type (after-all,
partition-id, ...) have one probe, of type "-".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..hlo.dtypes import DTYPES
from ..hlo.opcodes import OPCODES, Op

# every element type an array can have, in the order reports list them
TYPES = ("pred", "s2", "s4", "s8", "s16", "s32", "s64", "u2", "u4", "u8", "u16", "u32", "u64",
         "f4e2m1fn", "f8e3m4", "f8e4m3", "f8e4m3fn", "f8e4m3fnuz", "f8e4m3b11fnuz", "f8e5m2",
         "f8e5m2fnuz", "f8e8m0fnu", "f16", "bf16", "f32", "f64", "c64", "c128")
UNTYPED = "-"


@dataclass(frozen=True, slots=True)
class Probe:
    opcode: str
    type: str  # element type the opcode is probed on, or UNTYPED
    variant: str  # "" or what distinguishes two probes of one (opcode, type)
    text: str  # the HLO module

    @property
    def name(self) -> str:
        v = f".{self.variant}" if self.variant else ""
        return f"{self.opcode}{v}.{self.type}"


def _kind(t: str) -> str:
    return DTYPES[t].kind


def _real(t: str) -> str:
    """The component type of a complex type; other types are their own."""
    return {"c64": "f32", "c128": "f64"}.get(t, t)


def _uint(t: str) -> str:
    """The unsigned integer type of `t`'s storage width (for bitcast-convert)."""
    return {8: "u8", 16: "u16", 32: "u32", 64: "u64", 128: "u64"}[DTYPES[t].bits]


def _module(name: str, entry: str, *comps: str) -> str:
    return (f"HloModule {name}\n\n" + "".join(_own_names(c) + "\n\n" for c in comps)
            + "ENTRY main {\n" + entry + "\n}\n")


_DEF = re.compile(r"^\s*(?:ROOT\s+)?(\w+)\s*=", re.M)


def _own_names(comp: str) -> str:
    """The computation with its instruction names prefixed by its own name, so that no name
    is used twice in a probe (XLA allows it; the probes test opcodes, not that)."""
    head, body = comp.split("\n", 1)
    prefix = head.split()[0]
    for n in sorted(set(_DEF.findall(body)), key=len, reverse=True):
        body = re.sub(rf"\b{n}\b(?!\s*[\[(])", f"{prefix}_{n}", body)
    return head + "\n" + body


def _binary_comp(name: str, t: str, op: str) -> str:
    return (f"{name} {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
            f"  ROOT r = {t}[] {op}(a, b)\n}}")


def _combiner(t: str) -> str:
    """The reducer the probes use on type `t`: `or` on pred, `add` elsewhere."""
    return "or" if t == "pred" else "add"


def _less(name: str, t: str) -> str:
    return (f"{name} {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
            f"  ROOT r = pred[] compare(a, b), direction=LT\n}}")


X = "  x = {t}[2,3] parameter(0)\n"
XY = X + "  y = {t}[2,3] parameter(1)\n"

UNARY_SAME = ("negate sign exponential exponential-minus-one log log-plus-one sqrt rsqrt cbrt tanh "
              "logistic sine cosine tan erf floor ceil round-nearest-afz round-nearest-even not popcnt "
              "count-leading-zeros copy").split()
BINARY_SAME = ("add subtract multiply divide remainder power maximum minimum atan2 and or xor shift-left "
               "shift-right-logical shift-right-arithmetic").split()


def _unary(op: str, t: str) -> list[tuple[str, str]]:
    if op in (Op.ABS, Op.REAL, Op.IMAG):
        r = _real(t)
    elif op == "is-finite":
        r = "pred"
    else:
        r = t
    return [("", X.format(t=t) + f"  ROOT r = {r}[2,3] {op}(x)")]


def _binary(op: str, t: str) -> list[tuple[str, str]]:
    return [("", XY.format(t=t) + f"  ROOT r = {t}[2,3] {op}(x, y)")]


def _compare(t: str) -> list[tuple[str, str]]:
    return [(d.lower(), XY.format(t=t) + f"  ROOT r = pred[2,3] compare(x, y), direction={d}")
            for d in ("EQ", "LT")]


def _complex(t: str) -> list[tuple[str, str]]:
    c = {"f32": "c64", "f64": "c128"}.get(t, t)
    return [("", XY.format(t=t) + f"  ROOT r = {c}[2,3] complex(x, y)")]


def _convert(t: str) -> list[tuple[str, str]]:
    return [("to_f32", X.format(t=t) + "  ROOT r = f32[2,3] convert(x)"),
            ("from_f32", "  x = f32[2,3] parameter(0)\n" + f"  ROOT r = {t}[2,3] convert(x)")]


def _bitcast_convert(t: str) -> list[tuple[str, str]]:
    u = _uint(t)
    out = [("same_width", X.format(t=t) + f"  ROOT r = {u}[2,3] bitcast-convert(x)")]
    if DTYPES[t].bits == 32:
        out.append(("narrower", X.format(t=t) + "  ROOT r = u8[2,3,4] bitcast-convert(x)"))
    return out


def _shape_ops(op: str, t: str) -> list[tuple[str, str]]:
    x = X.format(t=t)
    body = {
        "broadcast": f"  v = {t}[3] parameter(0)\n  ROOT r = {t}[2,3] broadcast(v), dimensions={{1}}",
        "reshape": x + f"  ROOT r = {t}[3,2] reshape(x)",
        "transpose": x + f"  ROOT r = {t}[3,2] transpose(x), dimensions={{1,0}}",
        "slice": x + f"  ROOT r = {t}[1,2] slice(x), slice={{[1:2], [0:3:2]}}",
        "reverse": x + f"  ROOT r = {t}[2,3] reverse(x), dimensions={{1}}",
        "bitcast": x + f"  ROOT r = {t}[3,2] bitcast(x)",
        "dynamic-reshape": x + "  n = s32[] parameter(1)\n  m = s32[] parameter(2)\n"
                           f"  ROOT r = {t}[3,2] dynamic-reshape(x, n, m)",
        "pad": x + f"  p = {t}[] parameter(1)\n  ROOT r = {t}[4,4] pad(x, p), padding=1_1x0_1",
        "iota": f"  ROOT r = {t}[2,3] iota(), iota_dimension=1",
        "concatenate": XY.format(t=t) + f"  ROOT r = {t}[4,3] concatenate(x, y), dimensions={{0}}",
        "dynamic-slice": x + "  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
                         f"  ROOT r = {t}[1,2] dynamic-slice(x, i, j), dynamic_slice_sizes={{1,2}}",
        "dynamic-update-slice": x + f"  u = {t}[1,2] parameter(1)\n  i = s32[] parameter(2)\n"
                                "  j = s32[] parameter(3)\n"
                                f"  ROOT r = {t}[2,3] dynamic-update-slice(x, u, i, j)",
    }[op]
    return [("", body)]


def _data_ops(op: str, t: str) -> list[tuple[str, str]]:
    x = X.format(t=t)
    if op == "parameter":
        return [("", f"  ROOT x = {t}[2,3] parameter(0)")]
    if op == "constant":
        lit = {"pred": "true, false, true", "c64": "(1, 0), (0, -1), (0.5, 2)",
               "c128": "(1, 0), (0, -1), (0.5, 2)", "f8e8m0fnu": "1, 2, 0.5"}.get(
            t, "1, 0, 1" if _kind(t) in ("sint", "uint") else "1, 0, -0.5")
        return [("", f"  ROOT c = {t}[3] constant({{{lit}}})")]
    if op == "tuple":
        return [("", x + f"  ROOT r = ({t}[2,3], {t}[2,3]) tuple(x, x)")]
    if op == "get-tuple-element":
        return [("", XY.format(t=t) + f"  p = ({t}[2,3], {t}[2,3]) tuple(x, y)\n"
                 f"  ROOT r = {t}[2,3] get-tuple-element(p), index=1")]
    if op == "opt-barrier":
        return [("", XY.format(t=t) + f"  p = ({t}[2,3], {t}[2,3]) tuple(x, y)\n"
                 f"  b = ({t}[2,3], {t}[2,3]) opt-barrier(p)\n"
                 f"  ROOT r = {t}[2,3] get-tuple-element(b), index=0")]
    if op == "get-dimension-size":
        return [("", x + "  ROOT r = s32[] get-dimension-size(x), dimensions={1}")]
    if op == "set-dimension-size":
        return [("", x + "  n = s32[] parameter(1)\n"
                 f"  ROOT r = {t}[2,<=3] set-dimension-size(x, n), dimensions={{1}}")]
    raise KeyError(op)


def _reduce_ops(op: str, t: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(variants, helper computations) of the reduce-category opcodes on `t`."""
    x, c = X.format(t=t), _combiner(t)
    comb = _binary_comp("combine", t, c)
    if op == "reduce":
        return [("", x + f"  z = {t}[] parameter(1)\n"
                 f"  ROOT r = {t}[2] reduce(x, z), dimensions={{1}}, to_apply=combine")], [comb]
    if op == "reduce-window":
        return [("", x + f"  z = {t}[] parameter(1)\n"
                 f"  ROOT r = {t}[2,2] reduce-window(x, z), window={{size=1x2}}, to_apply=combine")], [comb]
    if op == "sort":
        return [("", x + f"  ROOT r = {t}[2,3] sort(x), dimensions={{1}}, to_apply=less")], [_less("less", t)]
    if op == "map":
        return [("", XY.format(t=t) + f"  ROOT r = {t}[2,3] map(x, y), dimensions={{0,1}}, to_apply=combine")], [comb]
    if op == "topk":
        return [("", x + f"  ROOT r = ({t}[2,2], s32[2,2]) topk(x), k=2, largest=true")], []
    if op == "scatter":
        return [("", f"  x = {t}[5] parameter(0)\n  i = s32[2,1] parameter(1)\n  u = {t}[2] parameter(2)\n"
                 f"  ROOT r = {t}[5] scatter(x, i, u), update_window_dims={{}}, inserted_window_dims={{0}}, "
                 "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine")], [comb]
    if op == "gather":
        return [("", f"  x = {t}[5,3] parameter(0)\n  i = s32[2,1] parameter(1)\n"
                 f"  ROOT r = {t}[2,3] gather(x, i), offset_dims={{1}}, collapsed_slice_dims={{0}}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}")], []
    if op == "dot":
        return [("", f"  x = {t}[2,3] parameter(0)\n  y = {t}[3,4] parameter(1)\n"
                 f"  ROOT r = {t}[2,4] dot(x, y), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")], []
    if op == "convolution":
        return [("", f"  x = {t}[1,5,5,2] parameter(0)\n  w = {t}[3,3,2,3] parameter(1)\n"
                 f"  ROOT r = {t}[1,5,5,3] convolution(x, w), window={{size=3x3 pad=1_1x1_1}}, "
                 "dim_labels=b01f_01io->b01f")], []
    if op == "ragged-dot":
        return [("", f"  x = {t}[6,3] parameter(0)\n  y = {t}[2,3,4] parameter(1)\n  g = s64[2] parameter(2)\n"
                 f"  ROOT r = {t}[6,4] ragged-dot(x, y, g), lhs_contracting_dims={{1}}, "
                 "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}")], []
    if op == "select-and-scatter":
        ge = (f"ge {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
              f"  ROOT r = pred[] compare(a, b), direction=GE\n}}")
        return [("", f"  x = {t}[4,4] parameter(0)\n  s = {t}[2,2] parameter(1)\n  z = {t}[] parameter(2)\n"
                 f"  ROOT r = {t}[4,4] select-and-scatter(x, s, z), window={{size=2x2 stride=2x2}}, "
                 "select=ge, scatter=combine")], [ge, comb]
    raise KeyError(op)


def _control_ops(op: str, t: str) -> tuple[list[tuple[str, str]], list[str]]:
    x, c = X.format(t=t), _combiner(t)
    comb = _binary_comp("combine", t, c)
    if op == "call":
        return [("", XY.format(t=t) + f"  ROOT r = {t}[2,3] call(x, y), to_apply=body")], [
            f"body {{\n  a = {t}[2,3] parameter(0)\n  b = {t}[2,3] parameter(1)\n  ROOT r = {t}[2,3] {c}(a, b)\n}}"]
    if op == "fusion":
        return [("", XY.format(t=t) + f"  ROOT r = {t}[2,3] fusion(x, y), kind=kLoop, calls=fused")], [
            f"fused {{\n  a = {t}[2,3] parameter(0)\n  b = {t}[2,3] parameter(1)\n  ROOT r = {t}[2,3] {c}(a, b)\n}}"]
    if op == "conditional":
        branch = "{name} {{\n  a = ({t}[2,3], {t}[2,3]) parameter(0)\n  ROOT r = {t}[2,3] get-tuple-element(a), index={i}\n}}"
        return [("", XY.format(t=t) + "  p = pred[] parameter(2)\n"
                 f"  a = ({t}[2,3], {t}[2,3]) tuple(x, y)\n"
                 f"  ROOT r = {t}[2,3] conditional(p, a, a), true_computation=yes, false_computation=no")], [
            branch.format(name="yes", t=t, i=0), branch.format(name="no", t=t, i=1)]
    if op == "while":
        st = f"(s32[], {t}[2,3], {t}[2,3])"
        cond = (f"cond {{\n  s = {st} parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                f"  n = s32[] constant(3)\n  ROOT r = pred[] compare(i, n), direction=LT\n}}")
        body = (f"body {{\n  s = {st} parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                f"  a = {t}[2,3] get-tuple-element(s), index=1\n  b = {t}[2,3] get-tuple-element(s), index=2\n"
                f"  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  ROOT r = {st} tuple(j, b, a)\n}}")
        return [("", XY.format(t=t) + f"  z = s32[] constant(0)\n  s = {st} tuple(z, x, y)\n"
                 f"  w = {st} while(s), condition=cond, body=body\n"
                 f"  ROOT r = {t}[2,3] get-tuple-element(w), index=1")], [cond, body]
    if op == "custom-call":
        return [("", x + f"  ROOT r = {t}[2,3] custom-call(x), custom_call_target=\"Sharding\", "
                 "sharding={replicated}")], []
    if op == "add-dependency":
        return [("", x + f"  k = token[] after-all()\n  ROOT r = {t}[2,3] add-dependency(x, k)")], []
    if op == "domain":
        return [("", x + f"  ROOT r = {t}[2,3] domain(x), domain={{kind=\"sharding\", "
                 "entry={maximal device=0}, exit={maximal device=0}}")], []
    if op == "async-start":
        return [("", XY.format(t=t) + f"  s = (({t}[2,3], {t}[2,3]), {t}[2,3], s32[]) async-start(x, y), calls=body\n"
                 f"  ROOT r = {t}[2,3] async-done(s)")], [
            f"body {{\n  a = {t}[2,3] parameter(0)\n  b = {t}[2,3] parameter(1)\n  ROOT r = {t}[2,3] {c}(a, b)\n}}"]
    if op in ("copy-start",):
        return [("", x + f"  s = ({t}[2,3], {t}[2,3], u32[]) copy-start(x)\n  ROOT r = {t}[2,3] copy-done(s)")], []
    raise KeyError(op)


def _collective_ops(op: str, t: str) -> tuple[list[tuple[str, str]], list[str]]:
    x = X.format(t=t)
    comb = _binary_comp("combine", t, _combiner(t))
    groups = "replica_groups={}"
    simple = {
        "all-reduce": (f"{t}[2,3] all-reduce(x), {groups}, to_apply=combine", [comb]),
        "all-gather": (f"{t}[2,3] all-gather(x), {groups}, dimensions={{0}}", []),
        "reduce-scatter": (f"{t}[2,3] reduce-scatter(x), {groups}, dimensions={{0}}, to_apply=combine", [comb]),
        "all-to-all": (f"{t}[2,3] all-to-all(x), replica_groups={{{{0}}}}, dimensions={{0}}", []),
        "collective-permute": (f"{t}[2,3] collective-permute(x), source_target_pairs={{{{0,0}}}}", []),
        "collective-broadcast": (f"{t}[2,3] collective-broadcast(x), replica_groups={{{{0}}}}", []),
    }
    if op in simple:
        text, comps = simple[op]
        return [("", x + f"  ROOT r = {text}")], comps
    if op == "all-reduce-start":
        return [("", x + f"  s = {t}[2,3] all-reduce-start(x), {groups}, to_apply=combine\n"
                 f"  ROOT r = {t}[2,3] all-reduce-done(s)")], [comb]
    if op == "all-gather-start":
        return [("", x + f"  s = ({t}[2,3], {t}[2,3]) all-gather-start(x), {groups}, dimensions={{0}}\n"
                 f"  ROOT r = {t}[2,3] all-gather-done(s)")], []
    if op == "collective-permute-start":
        return [("", x + f"  s = ({t}[2,3], {t}[2,3], u32[], u32[]) collective-permute-start(x), "
                 "source_target_pairs={{0,0}}\n"
                 f"  ROOT r = {t}[2,3] collective-permute-done(s)")], []
    if op == "ragged-all-to-all":
        return [("", x + f"  o = {t}[2,3] parameter(1)\n  a = s64[1] parameter(2)\n  b = s64[1] parameter(3)\n"
                 "  c = s64[1] parameter(4)\n  d = s64[1] parameter(5)\n"
                 f"  ROOT r = {t}[2,3] ragged-all-to-all(x, o, a, b, c, d), {groups}")], []
    raise KeyError(op)


def _other_ops(op: str, t: str) -> tuple[list[tuple[str, str]], list[str]]:
    r = _real(t)
    if op == "batch-norm-inference":
        return [("", f"  x = {t}[2,2,2,3] parameter(0)\n  s = {t}[3] parameter(1)\n  o = {t}[3] parameter(2)\n"
                 f"  m = {t}[3] parameter(3)\n  v = {t}[3] parameter(4)\n"
                 f"  ROOT r = {t}[2,2,2,3] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=3")], []
    if op == "batch-norm-training":
        return [("", f"  x = {t}[2,2,2,3] parameter(0)\n  s = {t}[3] parameter(1)\n  o = {t}[3] parameter(2)\n"
                 f"  ROOT r = ({t}[2,2,2,3], {t}[3], {t}[3]) batch-norm-training(x, s, o), epsilon=0.001, "
                 "feature_index=3")], []
    if op == "batch-norm-grad":
        return [("", f"  x = {t}[2,2,2,3] parameter(0)\n  s = {t}[3] parameter(1)\n  m = {t}[3] parameter(2)\n"
                 f"  v = {t}[3] parameter(3)\n  g = {t}[2,2,2,3] parameter(4)\n"
                 f"  ROOT r = ({t}[2,2,2,3], {t}[3], {t}[3]) batch-norm-grad(x, s, m, v, g), epsilon=0.001, "
                 "feature_index=3")], []
    if op == "cholesky":
        return [("", f"  a = {t}[3,3] parameter(0)\n  ROOT r = {t}[3,3] cholesky(a), lower=true")], []
    if op == "triangular-solve":
        return [("", f"  a = {t}[3,3] parameter(0)\n  b = {t}[3,2] parameter(1)\n"
                 f"  ROOT r = {t}[3,2] triangular-solve(a, b), left_side=true, lower=true, "
                 "transpose_a=NO_TRANSPOSE, unit_diagonal=false")], []
    if op == "fft":
        rt = _real(t)
        return [("fft", f"  x = {t}[2,8] parameter(0)\n  ROOT r = {t}[2,8] fft(x), fft_type=FFT, fft_length={{8}}"),
                ("ifft", f"  x = {t}[2,8] parameter(0)\n  ROOT r = {t}[2,8] fft(x), fft_type=IFFT, fft_length={{8}}"),
                ("rfft", f"  x = {rt}[2,8] parameter(0)\n  ROOT r = {t}[2,5] fft(x), fft_type=RFFT, fft_length={{8}}"),
                ("irfft", f"  x = {t}[2,5] parameter(0)\n  ROOT r = {rt}[2,8] fft(x), fft_type=IRFFT, "
                 "fft_length={8}")], []
    if op == "rng":
        return [(d, f"  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
                 f"  ROOT r = {t}[2,3] rng(a, b), distribution=rng_{d}") for d in ("uniform", "normal")], []
    if op == "rng-bit-generator":
        return [(a, f"  s = u64[2] parameter(0)\n"
                 f"  ROOT r = (u64[2], {t}[2,3]) rng-bit-generator(s), algorithm=rng_{a}")
                for a in ("default", "three_fry", "philox")], []
    if op == "stochastic-convert":
        u = _uint(t)
        return [("", f"  x = {t}[2,3] parameter(0)\n  u = {u}[2,3] parameter(1)\n"
                 "  ROOT r = s32[2,3] stochastic-convert(x, u)")], []
    raise KeyError(op)


def _io_ops(op: str, t: str) -> list[tuple[str, str]]:
    x = X.format(t=t)
    return [("", {
        "infeed": f"  k = token[] after-all()\n  i = ({t}[2,3], token[]) infeed(k)\n"
                  f"  ROOT r = {t}[2,3] get-tuple-element(i), index=0",
        "outfeed": x + f"  k = token[] after-all()\n  o = token[] outfeed(x, k), outfeed_shape={t}[2,3]\n"
                   f"  ROOT r = {t}[2,3] add-dependency(x, o)",
        "send": x + f"  k = token[] after-all()\n  s = ({t}[2,3], u32[], token[]) send(x, k), channel_id=1\n"
                f"  d = token[] send-done(s), channel_id=1\n  ROOT r = {t}[2,3] add-dependency(x, d)",
        "recv": f"  k = token[] after-all()\n  s = ({t}[2,3], u32[], token[]) recv(k), channel_id=2\n"
                f"  d = ({t}[2,3], token[]) recv-done(s), channel_id=2\n"
                f"  ROOT r = {t}[2,3] get-tuple-element(d), index=0",
    }[op])]


_UNTYPED_TEXT = {
    "after-all": "  x = f32[2] parameter(0)\n  a = token[] after-all()\n  b = token[] after-all(a, a)\n"
                 "  ROOT r = f32[2] add-dependency(x, b)",
    "partition-id": "  ROOT r = u32[] partition-id()",
    "replica-id": "  ROOT r = u32[] replica-id()",
    "rng-get-and-update-state": "  ROOT r = u64[2] rng-get-and-update-state(), delta=1",
}
# opcodes probed inside another opcode's module: the second half of a pair
PROBED_WITH = {Op.ALL_REDUCE_DONE: Op.ALL_REDUCE_START, Op.ALL_GATHER_DONE: Op.ALL_GATHER_START,
               Op.COLLECTIVE_PERMUTE_DONE: Op.COLLECTIVE_PERMUTE_START, Op.COPY_DONE: Op.COPY_START,
               Op.ASYNC_DONE: Op.ASYNC_START, Op.ASYNC_UPDATE: Op.ASYNC_START, Op.SEND_DONE: Op.SEND,
               Op.RECV_DONE: Op.RECV}
# opcodes with side effects through the application (callbacks): compiled, not run against XLA
IO_OPS = frozenset("infeed outfeed send send-done recv recv-done".split())
# opcodes whose XLA:CPU results are not reproducible values: run, not compared
UNCOMPARED = frozenset(("rng",))


def _variants(op: str, t: str) -> tuple[list[tuple[str, str]], list[str]]:
    base = PROBED_WITH.get(op, op)
    if base in (Op.ABS, Op.REAL, Op.IMAG, Op.IS_FINITE) or base in UNARY_SAME:
        return _unary(base, t), []
    if base in BINARY_SAME:
        return _binary(base, t), []
    if base == "compare":
        return _compare(t), []
    if base == "complex":
        return _complex(t), []
    if base == "convert":
        return _convert(t), []
    if base == "bitcast-convert":
        return _bitcast_convert(t), []
    if base == "reduce-precision":
        return [("", X.format(t=t) + f"  ROOT r = {t}[2,3] reduce-precision(x), exponent_bits=5, mantissa_bits=2")], []
    if base == "select":
        return [("", XY.format(t=t) + "  p = pred[2,3] parameter(2)\n"
                 f"  ROOT r = {t}[2,3] select(p, x, y)")], []
    if base == "clamp":
        return [("", XY.format(t=t) + f"  z = {t}[2,3] parameter(2)\n  ROOT r = {t}[2,3] clamp(x, y, z)")], []
    cat = OPCODES[base].category
    if cat == "shape":
        return _shape_ops(base, t), []
    if cat == "data":
        return _data_ops(base, t), []
    if base in IO_OPS:
        return _io_ops(base, t), []
    for family in (_reduce_ops, _control_ops, _collective_ops, _other_ops):
        try:
            return family(base, t)
        except KeyError:
            continue
    raise KeyError(f"no probe for opcode {op}")


def probes(opcodes=None, types=TYPES) -> list[Probe]:
    """Every probe, by opcode then type then variant (`opcodes`: a subset, in table order)."""
    out = []
    for op in OPCODES:
        if opcodes is not None and op not in opcodes:
            continue
        if op in _UNTYPED_TEXT:
            out.append(Probe(op, UNTYPED, "", _module(_name(op, UNTYPED, ""), _UNTYPED_TEXT[op])))
            continue
        for t in types:
            variants, comps = _variants(op, t)
            for variant, entry in variants:
                out.append(Probe(op, t, variant, _module(_name(op, t, variant), entry, *comps)))
    return out


def _name(op: str, t: str, variant: str) -> str:
    v = f"_{variant}" if variant else ""
    return f"probe_{op.replace('-', '_')}{v}_{'none' if t == UNTYPED else t}"
