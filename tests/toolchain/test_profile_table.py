"""The kernel table of `aotc bench --profile`, from runner rows written here by hand."""
from __future__ import annotations

import re

from aotc.toolchain.profile_table import format_profile, profile_rows

RES = {"median_us": 10.0, "iters": 4, "profile": [
    {"kernel": "k_a", "hlo": "add.1", "calls": 4, "ns": 1000, "flops": 500, "bytes": 2000},
    {"kernel": "k_b", "hlo": "dot.2", "calls": 4, "ns": 3000, "flops": 1500, "bytes": 300},
    {"kernel": "k_c", "hlo": "while.3", "calls": 4, "ns": 0, "flops": 0, "bytes": 8},
]}


def test_rows_by_time_with_rates():
    rows = profile_rows(RES)
    assert [r["kernel"] for r in rows] == ["k_b", "k_a", "k_c"]
    b = rows[0]
    assert b["share"] == 75.0 and b["us_per_run"] == 0.75
    assert b["gflops"] == 1500 * 4 / 3000 and b["gbps"] == 300 * 4 / 3000  # per ns = G per s
    assert rows[2]["gflops"] == 0.0 and rows[2]["share"] == 0.0


def test_table_keeps_the_rest_on_one_line():
    text = format_profile(RES, top=1)
    assert "1 k_b" in text and "k_a" not in text and "(2 more kernels)" in text
    shares = [float(x) for x in re.findall(r"([\d.]+)%", text)]
    assert shares == [75.0, 25.0]
    assert format_profile({"profile": []}).startswith("no kernels")
