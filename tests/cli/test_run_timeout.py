"""`aotc run --timeout`: a model whose while loop never ends is stopped by its own deadline
(exit 1 and one message), and a killed `aotc run` (SIGTERM, SIGINT or SIGKILL) leaves no
runner process behind."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENDLESS = ROOT / "tests" / "fuzz" / "corpus" / "endless.hlo"


def _aotc(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "aotc.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _inputs(tmp_path) -> str:
    path = tmp_path / "in.npz"
    np.savez(path, x=np.arange(4, dtype=np.float32))
    return str(path)


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _runner_of(proc: subprocess.Popen, deadline: float) -> int:
    while time.monotonic() < deadline:
        for child in _children(proc.pid):
            try:
                cmd = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if Path(cmd[0].decode()).name.startswith("runner-") and b"run" in cmd:
                return child
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no runner started")


def test_a_run_past_its_timeout_is_stopped(tmp_path):
    proc = _aotc("run", str(ENDLESS), "--inputs", _inputs(tmp_path), "--output", str(tmp_path / "out.npz"),
                 "--timeout", "0.3")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert err.strip() == "error: running the model: stopped after its time limit of 0.3 s"
    assert not (tmp_path / "out.npz").exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the runner process through /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow),
                                 pytest.param(signal.SIGKILL, marks=pytest.mark.slow)], ids=lambda s: s.name)
def test_a_killed_run_leaves_no_process_behind(tmp_path, sig):
    proc = _aotc("run", str(ENDLESS), "--inputs", _inputs(tmp_path), "--output", str(tmp_path / "out.npz"))
    try:
        runner = _runner_of(proc, time.monotonic() + 300)
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert proc.returncode != 0
        until = time.monotonic() + 10
        while _alive(runner) and time.monotonic() < until:
            time.sleep(0.05)
        assert not _alive(runner), f"runner {runner} outlived aotc ({sig.name})"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
