"""The values `PREFIX_test.c` embeds: arguments and expected results read from .npz
files keyed by port name, checked against the model's ports, as raw bytes, with the
comparison tolerances of each result. Reads files; writes none and prints no C.
"""
from __future__ import annotations

import os

import numpy as np

from ..emit_c.programs import TestData
from ..errors import AotcError
from ..lower.program import Port, Program
from .loader import coerce_input, spec_from

# tolerances when --rtol/--atol are not given: (rtol, atol) by float width in bytes
DEFAULT_TOLERANCE = {2: (1e-2, 1e-2), 4: (1e-5, 1e-6), 8: (1e-5, 1e-6)}


def _load(path: str, what: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise AotcError(f"cannot read {what}: {e}", file=path) from None


def _bytes(port: Port, value, what: str, path: str) -> bytes:
    arr = coerce_input(spec_from(port), value, what)
    data = np.ascontiguousarray(arr).tobytes()
    if len(data) != port.nbytes:
        raise AotcError(f"{what}: {len(data)} bytes, the model's {port.name} has {port.nbytes}", file=path)
    return data


def default_tolerance(port: Port) -> tuple[float, float]:
    """(rtol, atol) of a result: 0 for integers and pred (compared exactly)."""
    if port.dtype.kind not in ("float", "complex"):
        return 0.0, 0.0
    width = port.dtype.nbytes // (2 if port.dtype.kind == "complex" else 1)
    return DEFAULT_TOLERANCE.get(width, DEFAULT_TOLERANCE[4])


def read_test_data(p: Program, inputs: str | None, expected: str | None,
                   rtol: float | None = None, atol: float | None = None) -> TestData:
    """Arguments from `inputs` (a variable not given starts at zero) and every result from
    `expected`, both keyed by port name; AotcError names a missing, unknown or ill-shaped one."""
    if not inputs or not expected:
        raise AotcError("--emit test needs --test-inputs IN.npz and --test-expected OUT.npz "
                        "(values keyed by argument and result name)")
    ins, outs = _load(inputs, "test inputs"), _load(expected, "expected results")
    for kind, given, ports, path in (("argument", ins, p.args, inputs), ("result", outs, p.results, expected)):
        unknown = sorted(set(given) - {q.name for q in ports})
        if unknown:
            raise AotcError(f"'{unknown[0]}' is not one of the model's {kind}s "
                            f"({', '.join(q.name for q in ports) or 'none'})", file=path)
    missing = [a.name for a in p.args if a.name not in ins and not a.is_variable]
    missing += [r.name for r in p.results if r.name not in outs]
    if missing:
        raise AotcError(f"no value for '{missing[0]}' in the test data ({inputs}, {expected})")
    args = tuple(_bytes(a, ins[a.name], f"argument '{a.name}'", inputs) if a.name in ins else None
                 for a in p.args)
    exp = tuple(_bytes(r, outs[r.name], f"expected result '{r.name}'", expected) for r in p.results)
    tols = [default_tolerance(r) for r in p.results]
    rt = tuple(t[0] if rtol is None or t == (0.0, 0.0) else float(rtol) for t in tols)
    at = tuple(t[1] if atol is None or t == (0.0, 0.0) else float(atol) for t in tols)
    return TestData(args, exp, rt, at, f"{os.path.basename(inputs)} and {os.path.basename(expected)}")
