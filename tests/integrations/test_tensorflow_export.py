"""docs/inputs.md's TensorFlow blocks run as written: a `tf.function(jit_compile=True)` gives its HLO
text and HloModuleProto, a variable-updating one its HLO text; aotc compiles each and its outputs are
compared with TensorFlow's own (which runs the functions through XLA). TensorFlow lives in a virtual
environment of its own under build/cache (created once, ~300 MB), never in the suite's Python."""
from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import aotc

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "inputs.md"
TF_REQUIREMENT = "tensorflow-cpu==2.21.0"  # the version docs/inputs.md names
VENV = ROOT / "build" / "cache" / "tf-venv"
MARKER = re.compile(r"^<!-- inputs-example: (?P<id>[\w-]+) -->$")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")]


def _doc_blocks() -> dict[str, str]:
    """{id: code} of every fenced block of docs/inputs.md that follows an `inputs-example` marker."""
    lines = DOC.read_text(encoding="utf-8").split("\n")
    out = {}
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        assert lines[i + 1].startswith("```"), f"docs/inputs.md:{i + 1}: a marker not followed by a code block"
        end = lines.index("```", i + 2)
        out[m.group("id")] = "\n".join(lines[i + 2:end]) + "\n"
    return out


def _pip_error(r: subprocess.CompletedProcess) -> str:
    lines = [ln.strip() for ln in (r.stderr or r.stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {r.returncode}"


def _tf_python() -> Path:
    """The Python of the cached TensorFlow environment, created (under a lock, so parallel workers
    share one) if missing; a skip with pip's last error line if it cannot be installed."""
    python = VENV / "bin" / "python"
    done = VENV / "installed.txt"
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / "tf-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists() and done.read_text().strip() == TF_REQUIREMENT and python.exists():
            return python
        shutil.rmtree(VENV, ignore_errors=True)
        r = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot create a virtual environment for TensorFlow: {_pip_error(r)}")
        start = time.monotonic()
        r = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            TF_REQUIREMENT, "numpy"], capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            shutil.rmtree(VENV, ignore_errors=True)
            pytest.skip(f"pip cannot install {TF_REQUIREMENT}: {_pip_error(r)}")
        done.write_text(TF_REQUIREMENT + "\n")
        print(f"installed {TF_REQUIREMENT} into {VENV} in {time.monotonic() - start:.0f} s")
        return python


# appended to the doc's blocks: TensorFlow's own results on the blocks' random inputs
SAVE_F = 'import numpy as np\nnp.savez("f_tf.npz", x=x.numpy(), w=w.numpy(), y=f(x, w).numpy())\n'
SAVE_STEP = ("v0 = v.numpy()\ny1 = step(d).numpy()\nv1 = v.numpy()\ny2 = step(d).numpy()\n"
             'np.savez("step_tf.npz", v0=v0, d=d.numpy(), y1=y1, v1=v1, y2=y2, v2=v.numpy())\n')


@pytest.fixture(scope="module")
def tf_outputs(tmp_path_factory) -> Path:
    """A directory holding f.hlo, f.pb, step.hlo and TensorFlow's results, made by the doc's blocks."""
    python = _tf_python()
    blocks = _doc_blocks()
    assert set(blocks) == {"tf-function", "tf-variable"}, sorted(blocks)
    script = blocks["tf-function"] + SAVE_F + blocks["tf-variable"] + SAVE_STEP
    d = tmp_path_factory.mktemp("tf")
    # a clean environment (nothing of the suite's Python leaks in); TensorFlow's start-up log quieted
    r = subprocess.run([str(python), "-c", script], cwd=d, capture_output=True, text=True, timeout=600,
                       env={"PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": "2", "HOME": str(d)})
    assert r.returncode == 0, f"docs/inputs.md's TensorFlow blocks failed:\n{script}\n{r.stderr[-4000:]}"
    return d


def _compile(model: Path) -> aotc.CompileResult:
    return aotc.compile(str(model), out=str(model.parent / f"lib_{model.stem}_{model.suffix[1:]}"), emit=())


@pytest.mark.parametrize("fmt", ["hlo", "pb"])
def test_tf_function_hlo_and_proto(tf_outputs, fmt):
    """f.hlo and f.pb compiled by aotc give TensorFlow's f(x, w) on the block's random x and w."""
    model = tf_outputs / f"f.{fmt}"
    ref = np.load(tf_outputs / "f_tf.npz")
    assert np.count_nonzero(ref["x"]) == ref["x"].size and np.count_nonzero(ref["y"]) > 0
    x_name, w_name = (a.name for a in _compile(model).program.args)
    (y,) = aotc.run(str(model), inputs={x_name: ref["x"], w_name: ref["w"]}).values()
    np.testing.assert_allclose(y, ref["y"], rtol=2e-5, atol=2e-5)


def test_tf_variable_update(tf_outputs):
    """step.hlo: TensorFlow's resource variable is parameter 1, aliased to output 1, which aotc makes
    a variable updated in place; two calls give TensorFlow's two results and variable values."""
    model = tf_outputs / "step.hlo"
    assert "input_output_alias={ {1}: (1, {}, may-alias) }" in model.read_text()
    ref = np.load(tf_outputs / "step_tf.npz")
    with aotc.load(_compile(model)) as lib:
        assert lib.feed_names == ["arg0"] and list(lib.variables) == ["arg1"], (lib.feed_names, list(lib.variables))
        lib.variables["arg1"] = ref["v0"]
        for n in (1, 2):
            (y,) = lib(ref["d"])  # output 1 is the variable's update, written in place, not a result
            np.testing.assert_allclose(y, ref[f"y{n}"], rtol=1e-6, atol=1e-6, err_msg=f"call {n}")
            np.testing.assert_allclose(lib.variables["arg1"], ref[f"v{n}"], rtol=1e-6, atol=1e-6,
                                       err_msg=f"the variable after call {n}")
