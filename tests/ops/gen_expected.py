"""Regenerate tests/ops/data/<case>.npz: each op-family case's inputs and the
outputs XLA:CPU computes for them (tests/oracle/xla.py). Expected values never
come from aotc.

    python tests/ops/gen_expected.py              # every case
    python tests/ops/gen_expected.py scatter_     # cases whose name contains a substring

Each npz holds in0, in1, ... (parameter order) and out0, out1, ... (result
tuple order); bf16 arrays are stored as their uint16 bits. Files are written
with fixed zip timestamps, so regenerating an unchanged case gives identical bytes.
"""
from __future__ import annotations

import importlib
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.oracle import xla as oracle  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
FAMILIES = ("tests.ops.test_gather_scatter", "tests.ops.test_sort", "tests.ops.test_window",
            "tests.ops.test_dynamic", "tests.ops.test_name_collisions", "tests.ops.test_graph_passes",
            "tests.ops.test_inplace_safety", "tests.ops.test_misc_ops", "tests.ops.test_reduce_split", "tests.ops.test_zero_size",
            "tests.ops.test_epilogues", "tests.ops.test_contract", "tests.ops.test_narrow_types",
            "tests.ops.test_random", "tests.ops.test_fft",
            "tests.ops.test_reduce_precision", "tests.ops.test_select_and_scatter",
            "tests.ops.test_batch_norm", "tests.ops.test_complex_math", "tests.ops.test_complex", "tests.ops.test_complex_muldiv",
            "tests.ops.test_dot_gemm", "tests.ops.test_select_simd", "tests.ops.test_single_device",
            "tests.ops.test_narrow_conv", "tests.ops.test_winograd", "tests.ops.test_concat_slices",
            "tests.ops.test_dynamic_shapes", "tests.ops.test_dot_lowp",
            "tests.ops.test_depthwise_pad", "tests.ops.test_narrow_linalg", "tests.ops.test_narrow_trsolve",
            "tests.ops.test_cbrt_subnormal", "tests.ops.test_stream_stores", "tests.ops.test_prefetch_rows", "tests.ops.test_bf16_nan", "tests.ops.test_edge_sweep",
            "tests.ops.test_window_order", "tests.ops.test_unswitch", "tests.ops.test_conv_taps",
            "tests.ops.test_interleave", "tests.ops.test_fold_once", "tests.ops.test_transpose_tiles",
            "tests.ops.test_bounds", "tests.ops.test_reduce_jam",
            "tests.ops.test_gemm_panels")


def all_cases() -> dict[str, tuple]:
    cases: dict[str, tuple] = {}
    for mod in FAMILIES:
        for name, case in importlib.import_module(mod).CASES.items():
            if name in cases:
                raise SystemExit(f"case {name} is defined twice")
            cases[name] = case
    return cases


def dynamic_results() -> dict[str, dict[int, tuple[int, ...]]]:
    """Per case, its results with a dynamic dimension: result index -> the outputs holding
    that result's real dimensions (get-dimension-size values the module returns too)."""
    out: dict[str, dict[int, tuple[int, ...]]] = {}
    for mod in FAMILIES:
        out.update(getattr(importlib.import_module(mod), "DYNAMIC_RESULTS", {}))
    return out


def real_part(outs: list[np.ndarray], dynamic: dict[int, tuple[int, ...]]) -> list[np.ndarray]:
    """XLA returns a dynamic result's real-size array at the start of a bound-size buffer and
    leaves the rest unspecified: keep the start, zero the rest (so fixtures are reproducible)."""
    outs = [np.array(o) for o in outs]
    for i, dims_at in dynamic.items():
        n = int(np.prod([int(outs[k]) for k in dims_at]))
        flat = outs[i].reshape(-1)
        flat[n:] = np.zeros((), flat.dtype)
    return outs


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, a in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            data = io.BytesIO()
            np.lib.format.write_array(data, np.array(oracle.to_npz_array(a), order="C"), allow_pickle=False)  # 0-d stays 0-d
            zf.writestr(info, data.getvalue())
    path.write_bytes(buf.getvalue())


def main(argv: list[str]) -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    cases = all_cases()
    dynamic = dynamic_results()
    names = [n for n in sorted(cases) if not argv or any(a in n for a in argv)]
    for name in names:
        text, inputs, _ = cases[name]
        outs = real_part(oracle.run_hlo(text, inputs), dynamic.get(name, {}))
        arrays = {f"in{k}": np.asarray(a) for k, a in enumerate(inputs)}
        arrays.update({f"out{k}": np.asarray(a) for k, a in enumerate(outs)})
        save_npz(DATA / f"{name}.npz", arrays)
        print(f"{name}: {len(inputs)} inputs, {len(outs)} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
