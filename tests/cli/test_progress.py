"""`compile`, `run` and `bench` show their stages and the C compiler's time on a terminal
(stderr a pty) and print nothing on stderr into a pipe; `run` without --output prints each
fetch's name, shape, dtype and values."""
from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from aotc.cli import main

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul"
MODEL, CFG = str(MATMUL / "matmul.hlo"), str(MATMUL / "matmul.yaml")


def _aotc(args: list[str], tty: bool) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `python -m aotc ARGS`, stderr a pty when `tty`."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not tty:
        r = subprocess.run([sys.executable, "-m", "aotc", *args], capture_output=True, text=True, env=env,
                           timeout=300)
        return r.returncode, r.stdout, r.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "aotc", *args], stdout=subprocess.PIPE, stderr=slave,
                         stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    out = p.stdout.read().decode()
    p.stdout.close()
    return p.wait(timeout=300), out, b"".join(chunks).decode()


def test_compile_shows_stages_and_the_c_compile_time_on_a_terminal(tmp_path):
    code, out, err = _aotc(["compile", MODEL, "-c", CFG, "-o", str(tmp_path / "libm")], tty=True)
    assert code == 0, err
    for stage in ("parse", "verify", "lower: after fusion", "emit C"):
        assert f"aotc: {stage} ..." in err, err
    timed = [x for x in err.replace("\r", "\n").splitlines() if x.startswith("\x1b[Kaotc: C compiler: ")]
    assert len(timed) == 1 and timed[0].endswith(" s"), err
    assert out.splitlines()[0].endswith("libm.h")  # the results stay on stdout


def test_run_and_bench_show_progress_on_a_terminal(tmp_path):
    np.savez(tmp_path / "in.npz", x_hold=np.ones((2, 3), np.float32), y_hold=np.ones((3, 2), np.float32))
    code, out, err = _aotc(["run", MODEL, "-c", CFG, "--inputs", str(tmp_path / "in.npz")], tty=True)
    assert code == 0 and "aotc: lower ..." in err and "aotc: run ..." in err, err
    assert out.startswith("x_y_prod: shape (2, 2), dtype float32\n"), out
    code, out, err = _aotc(["bench", MODEL, "-c", CFG, "--iters", "3", "--warmup", "0"], tty=True)
    assert code == 0 and "aotc: C compiler: " in err and "aotc: bench ..." in err, err


def test_quiet_into_a_pipe(tmp_path):
    code, out, err = _aotc(["compile", MODEL, "-c", CFG, "-o", str(tmp_path / "libm"), "--emit", "none"],
                           tty=False)
    assert code == 0 and err == "" and out, err
    np.savez(tmp_path / "in.npz", x_hold=np.ones((2, 3), np.float32), y_hold=np.ones((3, 2), np.float32))
    code, out, err = _aotc(["run", MODEL, "-c", CFG, "--inputs", str(tmp_path / "in.npz")], tty=False)
    assert code == 0 and err == "", err


def test_run_prints_each_fetch(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.savez(tmp_path / "in.npz", x_hold=x, y_hold=np.ones((3, 2), np.float32))
    r = CliRunner().invoke(main, ["run", MODEL, "-c", CFG, "--inputs", str(tmp_path / "in.npz")])
    assert r.exit_code == 0, r.output
    assert r.output == "x_y_prod: shape (2, 2), dtype float32\n[[ 3.  3.]\n [12. 12.]]\n", r.output
    # --output still writes the npz and prints nothing
    r = CliRunner().invoke(main, ["run", MODEL, "-c", CFG, "--inputs", str(tmp_path / "in.npz"),
                                  "--output", str(tmp_path / "out.npz")])
    assert r.exit_code == 0 and r.output == ""
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["x_y_prod"], x @ np.ones((3, 2), np.float32))


def test_large_results_are_summarized_unless_print_all(tmp_path):
    hlo = tmp_path / "big.hlo"
    hlo.write_text("HloModule big\n\nENTRY e {\n  x = f32[3000] parameter(0)\n"
                   "  ROOT y = f32[3000] add(x, x)\n}\n")
    np.savez(tmp_path / "in.npz", x=np.arange(3000, dtype=np.float32))
    r = CliRunner().invoke(main, ["run", str(hlo), "--inputs", str(tmp_path / "in.npz")])
    assert r.exit_code == 0, r.output
    head, values = r.output.split("\n", 1)
    assert head == "y: shape (3000,), dtype float32" and "..." in values and "5.998e+03" in values
    assert len(values.split()) < 20
    r = CliRunner().invoke(main, ["run", str(hlo), "--inputs", str(tmp_path / "in.npz"), "--print-all"])
    assert r.exit_code == 0 and "..." not in r.output and "2.998e+03" in r.output
    assert len(r.output.split()) > 3000
