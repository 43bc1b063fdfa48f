"""`--profile`: timers around every kernel of the run function and the header's
`P_profile_*` table; nothing of it without the flag. `aotc bench --profile` prints the
kernels by time, with shares that add up to 100% and names that are the .c's kernels."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from aotc.cli import main
from aotc.driver import frontend, generate
from aotc.options import CompileOptions

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]
WARN = ["-Wall", "-Wextra", "-Werror"]


def _gen(case: str, profile: bool, out: str = "libm"):
    d = CORPUS / case
    return generate(frontend(str(d / "model.hlo"), str(d / "cfg.yaml")), out, CompileOptions(profile=profile))


def test_without_profile_nothing_is_printed():
    plain, prof = _gen("op_reduce", False), _gen("op_reduce", True)
    assert "prof" not in plain.c_text and "profile" not in plain.h_text
    assert "aotc_prof_now" in prof.c_text and "int m_profile_count(void);" in prof.h_text
    # the profile only adds: every line of the plain file is in the profiled one, in order
    lines, at, missing = prof.c_text.splitlines(), 0, []
    for ln in plain.c_text.splitlines():
        try:
            at = lines.index(ln, at) + 1
        except ValueError:
            missing.append(ln)
    assert missing == ["                            const aotc_par* par) {",
                       "        m_execute(args, results, (unsigned char*)arena, par);"]
    n = len(prof.lowered.program.kernels)
    assert prof.c_text.count("if (prof) { const uint64_t t1 = aotc_prof_now();") == n


@pytest.mark.parametrize("cc", COMPILERS)
def test_profiled_model_builds_warning_free(tmp_path, cc):
    gen = _gen("op_while", True, str(tmp_path / "libw"))  # sub-programs: timed as their calling kernel
    (tmp_path / "libw.c").write_text(gen.c_text)
    (tmp_path / "libw.h").write_text(gen.h_text)
    r = subprocess.run([cc, "-std=c11", *WARN, "-O1", "-c", str(tmp_path / "libw.c"), "-o", str(tmp_path / "w.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    cxx = {"gcc": "g++", "clang": "clang++"}[cc]
    if shutil.which(cxx):
        src = tmp_path / "use.cc"
        src.write_text('#include "libw.h"\nint main() { w_profile_row r; return w_profile_count() - '
                       f'{len(gen.lowered.program.kernels)} + (int)sizeof r.calls - 8; }}\n')
        r = subprocess.run([cxx, "-std=c++11", "-pedantic", *WARN, "-I", str(tmp_path), "-fsyntax-only", str(src)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]


def test_bench_profile_prints_the_kernel_table(tmp_path):
    case = CORPUS / "op_reduce"
    args = ["bench", str(case / "model.hlo"), "-c", str(case / "cfg.yaml"), "--profile", "--iters", "9",
            "--warmup", "2", "--target", "host"]
    runner = CliRunner()
    res = runner.invoke(main, [*args, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    kernels = [k.cname for k in _gen("op_reduce", True).lowered.program.kernels]
    rows = data["profile"]
    assert [r["kernel"] for r in rows] == kernels  # execution order, every kernel
    assert all(r["calls"] == 9 for r in rows)  # reset after the warm-up runs; one call per run
    assert sum(r["ns"] for r in rows) <= data["max_us"] * 1e3 * 9
    assert all(r["hlo"] for r in rows)

    res = runner.invoke(main, [*args, "--top", "4"])  # the same runner, from the cache
    assert res.exit_code == 0, res.output
    c_text = _gen("op_reduce", True).c_text
    table = [ln for ln in res.output.splitlines() if re.match(r"\s*\d+ k", ln)]
    assert len(table) == 4
    shares = [float(re.search(r"([\d.]+)%", ln).group(1)) for ln in res.output.splitlines() if "%" in ln]
    assert len(shares) == 5 and abs(sum(shares) - 100.0) < 0.1, res.output  # 4 kernels + "(5 more kernels)"
    assert "(5 more kernels)" in res.output
    for ln in table:
        name = ln.split()[1]
        assert f"static void {name}(" in c_text
        assert os.path.commonprefix([name, "k_"]) == "k_"
    times = [float(ln.split()[3]) for ln in table]
    assert times == sorted(times, reverse=True)
