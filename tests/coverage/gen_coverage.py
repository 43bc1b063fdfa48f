"""Record what XLA:CPU does with every coverage probe (aotc/coverage/probes.py): whether it
compiles the probe, and for the probes it runs, deterministic inputs and XLA's outputs.

    python tests/coverage/gen_coverage.py            # every probe
    python tests/coverage/gen_coverage.py fft rng    # probes of these opcodes only (merged in)

Writes aotc/coverage/xla_cpu.json (accepted or XLA's message, per probe: the package's
record of what XLA:CPU accepts) and tests/data/coverage/<opcode>.npz (per probe that ran:
`<probe>/in0..`, `<probe>/out0..`, narrow types as their storage bytes). Nothing here asks
aotc anything but the probe texts.
"""
from __future__ import annotations

import io
import json
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from aotc.coverage.probes import IO_OPS, Probe, probes  # noqa: E402
from tests.oracle import xla as oracle  # noqa: E402

RECORD = ROOT / "aotc" / "coverage" / "xla_cpu.json"
DATA = ROOT / "tests" / "data" / "coverage"


def _values(shape, dt: np.dtype, rng, probe: Probe, index: int) -> np.ndarray:
    """Deterministic inputs: normal floats with a few specials, small integers, indices
    that sometimes fall outside, SPD / triangular matrices where the op wants them."""
    n = int(np.prod(shape)) if shape else 1
    op = probe.opcode
    if op in ("dynamic-slice", "dynamic-update-slice", "scatter", "gather") and dt.kind in "iu" \
            and (index > 0 and not (op == "dynamic-update-slice" and index == 1)):
        return rng.integers(-1, 6, size=shape).astype(dt)
    if op == "ragged-dot" and index == 2:
        return np.array([2, 4], dt)
    if op == "dynamic-reshape" and index > 0:
        return np.array(3 if index == 1 else 2, dt)
    if op == "set-dimension-size" and index == 1:
        return np.array(2, dt)
    if op == "conditional" and index == 2:
        return np.array(True)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt) if dt.itemsize > 1 or dt.name in ("int8", "uint8") else None
        lo, hi = (int(info.min), int(info.max)) if info is not None else (0, 3)
        if dt.name in ("int2", "int4", "uint2", "uint4"):
            import ml_dtypes
            i = ml_dtypes.iinfo(dt)
            lo, hi = int(i.min), int(i.max)
        small = rng.integers(max(lo, -9), min(hi, 9) + 1, size=n)
        big = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64 if lo < 0 else np.uint64)
        v = np.where(rng.random(n) < 0.75, small, big)
        return v.astype(dt).reshape(shape)
    if dt.kind == "c":
        return (rng.standard_normal(n) * 2 + 1j * rng.standard_normal(n) * 2).astype(dt).reshape(shape)
    v = rng.standard_normal(n) * 2.5
    if op == "cholesky":
        m = rng.standard_normal(shape)
        return (m @ m.T + shape[0] * np.eye(shape[0])).astype(dt)
    if op == "triangular-solve" and index == 0:
        return (np.tril(rng.standard_normal(shape)) + 3 * np.eye(shape[0])).astype(dt)
    if op in ("batch-norm-inference", "batch-norm-grad") and index in (4 if op == "batch-norm-inference" else 3,):
        v = np.abs(v) + 0.5  # a variance
    if n >= 6 and op not in ("cholesky", "triangular-solve"):
        v[: 3] = [0.0, -0.0, 1.0]
    if dt.name == "float8_e8m0fnu":
        v = np.exp2(rng.integers(-6, 7, size=n)).astype(np.float64)
    return v.astype(dt).reshape(shape)


def run_probe(p: Probe):
    """(accepted, message, inputs, outputs): outputs None when XLA did not run it."""
    try:
        exe = oracle.XlaExecutable(p.text)
    except Exception as e:  # noqa: BLE001: XLA's refusal is the record
        return False, str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__, None, None
    if p.opcode in IO_OPS:
        return True, "", None, None
    rng = np.random.default_rng(zlib.crc32(p.name.encode()))
    inputs = [_values(shape, dt, rng, p, i) for i, (shape, dt) in enumerate(exe.param_types)]
    try:
        outs = exe.run(inputs)
    except Exception as e:  # noqa: BLE001
        return True, "ran: " + (str(e).strip().splitlines() or [type(e).__name__])[0][:300], None, None
    return True, "", inputs, outs


def _write_npz(path: Path, arrays: dict) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for k in sorted(arrays):
            a = io.BytesIO()
            np.lib.format.write_array(a, np.ascontiguousarray(arrays[k]), allow_pickle=False)
            info = zipfile.ZipInfo(k + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, a.getvalue(), zipfile.ZIP_DEFLATED)
    path.write_bytes(buf.getvalue())


def _worker(names_file: str, out_dir: str) -> int:
    """Run the probes named in `names_file` in order, appending one JSON line per probe to
    out_dir/results.jsonl and its arrays to out_dir/<probe>.npz (XLA may abort the process
    on a probe it cannot handle: the parent then records that probe and starts again)."""
    wanted = Path(names_file).read_text().split()
    table = {p.name: p for p in probes()}
    out = Path(out_dir)
    with open(out / "results.jsonl", "a") as log:
        for name in wanted:
            log.write(json.dumps({"start": name}) + "\n")
            log.flush()
            accepted, msg, inputs, outs = run_probe(table[name])
            if outs is not None:
                arrays = {f"{name}/in{i}": oracle.to_npz_array(a) for i, a in enumerate(inputs)}
                arrays.update({f"{name}/out{i}": oracle.to_npz_array(a) for i, a in enumerate(outs)})
                np.savez(out / f"{name}.npz", **arrays)
            log.write(json.dumps({"probe": name, "accepted": accepted, "message": msg,
                                  "ran": outs is not None}) + "\n")
            log.flush()
    return 0


def _run_all(todo: list[Probe]) -> tuple[dict, dict]:
    """Every probe through worker processes: (record entries, arrays by probe name)."""
    import subprocess
    import tempfile
    entries: dict[str, dict] = {}
    arrays: dict[str, dict] = {}
    names = [p.name for p in todo]
    with tempfile.TemporaryDirectory(prefix="aotc_cov_") as tmp:
        while len(entries) < len(names):
            rest = [n for n in names if n not in entries]
            Path(tmp, "names").write_text("\n".join(rest))
            log = Path(tmp, "results.jsonl")
            log.write_text("")
            subprocess.run([sys.executable, __file__, "--worker", str(Path(tmp, "names")), tmp])
            started = None
            for line in log.read_text().splitlines():
                rec = json.loads(line)
                if "start" in rec:
                    started = rec["start"]
                    continue
                started = None
                name = rec.pop("probe")
                entries[name] = rec
                f = Path(tmp, f"{name}.npz")
                if f.exists():
                    with np.load(f) as z:
                        arrays[name] = {k: z[k] for k in z.files}
            if started is not None:  # the process died on this probe
                entries[started] = {"accepted": False, "message": "XLA:CPU aborted on it", "ran": False}
            print(f"{len(entries)}/{len(names)}", file=sys.stderr)
    return entries, arrays


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        return _worker(argv[1], argv[2])
    only = set(argv) or None
    record = json.loads(RECORD.read_text()) if RECORD.exists() and only else {"probes": {}}
    DATA.mkdir(parents=True, exist_ok=True)
    todo = probes(only)
    entries, arrays = _run_all(todo)
    record["probes"].update(entries)
    by_op: dict[str, dict] = {}
    for p in todo:
        by_op.setdefault(p.opcode, {}).update(arrays.get(p.name, {}))
    for op, arr in by_op.items():
        path = DATA / f"{op}.npz"
        if arr:
            _write_npz(path, arr)
        elif path.exists():
            path.unlink()
    import jax
    record["jax"] = jax.__version__
    record["probes"] = dict(sorted(record["probes"].items()))
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
