"""Compile each probe with aotc, in process and without a C compiler, and sort the outcome:
compiled, refused with a located error (the message), or failed otherwise (a bug: a traceback
aotc must never show). Then summarize per opcode against what XLA:CPU accepts.
"""
from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from importlib import resources

from ..driver import frontend, generate
from ..errors import AotcError
from ..options import CompileOptions
from .probes import TYPES, UNTYPED, Probe

COMPILED, REFUSED, CRASHED = "compiled", "refused", "crashed"


@dataclass(frozen=True, slots=True)
class Outcome:
    probe: Probe
    status: str  # COMPILED | REFUSED | CRASHED
    message: str = ""  # the error as aotc prints it, or the traceback of a crash
    located: bool = False  # a refusal that names FILE:LINE:COL


def compile_probe(p: Probe) -> Outcome:
    """aotc's outcome on one probe: the frontend, lowering and C emission, no C compiler."""
    path = p.name + ".hlo"
    try:
        fe = frontend(path, None, CompileOptions(), text=p.text)
        generate(fe, p.name, CompileOptions())
    except AotcError as e:
        return Outcome(p, REFUSED, e.format(), e.loc is not None)
    except RecursionError:
        return Outcome(p, CRASHED, "RecursionError")
    except Exception:  # noqa: BLE001: a crash is what this reports
        return Outcome(p, CRASHED, traceback.format_exc())
    return Outcome(p, COMPILED)


def xla_record() -> dict[str, dict]:
    """probe name -> {"accepted": bool, "message": str}: what XLA:CPU (jaxlib) did with each probe."""
    text = resources.files(__package__).joinpath("xla_cpu.json").read_text(encoding="utf-8")
    return json.loads(text)["probes"]


@dataclass(frozen=True, slots=True)
class OpSummary:
    opcode: str
    xla_types: tuple[str, ...]  # types on which XLA:CPU accepts every probe of the opcode
    aotc_types: tuple[str, ...]  # of those, the types aotc compiles every probe on
    crashes: tuple[str, ...]  # probe names aotc crashed on
    extra: tuple[str, ...]  # probe names XLA rejects and aotc compiles
    compiled: tuple[str, ...] = ()  # every type aotc compiles every probe on, accepted by XLA or not

    @property
    def complete(self) -> bool:
        return bool(self.xla_types) and self.xla_types == self.aotc_types

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(t for t in self.xla_types if t not in self.aotc_types)


def summarize(outcomes: list[Outcome], record: dict[str, dict]) -> list[OpSummary]:
    by_op: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_op.setdefault(o.probe.opcode, []).append(o)
    out = []
    for op, os_ in by_op.items():
        types = [t for t in (UNTYPED,) + TYPES if any(o.probe.type == t for o in os_)]
        xla_types, aotc_types, extra, compiled = [], [], [], []
        for t in types:
            of_t = [o for o in os_ if o.probe.type == t]
            if all(o.status == COMPILED for o in of_t):
                compiled.append(t)
            accepted = [record.get(o.probe.name, {}).get("accepted", False) for o in of_t]
            if all(accepted):
                xla_types.append(t)
                if all(o.status == COMPILED for o in of_t):
                    aotc_types.append(t)
            extra += [o.probe.name for o, a in zip(of_t, accepted) if not a and o.status == COMPILED]
        crashes = tuple(o.probe.name for o in os_ if o.status == CRASHED)
        out.append(OpSummary(op, tuple(xla_types), tuple(aotc_types), crashes, tuple(extra), tuple(compiled)))
    return out
