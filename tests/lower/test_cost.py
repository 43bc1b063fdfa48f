"""lower/cost.py: each kernel's estimated flops (2*m*n*k for a product, one per element
operation for elementwise kernels) and the bytes of the buffers it touches."""
from __future__ import annotations

from pathlib import Path

import pytest

from aotc.driver import frontend, generate
from aotc.kernel import ir as K
from aotc.lower.cost import program_costs
from aotc.options import CompileOptions

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"


def _program(case: str):
    d = FIXTURES / case
    return generate(frontend(str(d / "model.hlo"), str(d / "cfg.yaml")), "m", CompileOptions()).lowered.program


@pytest.mark.parametrize("case,flops", [
    ("dot_f32_100x33x17", 2 * 100 * 33 * 17),  # the packed GEMM
    ("dot_batch_transposed_f32", 2 * 2 * 3 * 7 * 17),  # batch 2 of [3,17] x [17,7]
])
def test_product_flops(case, flops):
    p = _program(case)
    (cost,) = program_costs(p)
    assert cost.flops == flops
    assert cost.bytes == sum(s.nbytes for s in p.slots if s.place != "scratch")


def _nhwc_conv_program(tmp_path, hw: int, c: int, o: int, k: int, window: str):
    """The program of a [1,hw,hw,c] convolution by a k x k x c x o kernel."""
    (tmp_path / "model.hlo").write_text(
        "HloModule conv\n\nENTRY main {\n"
        f"  x = f32[1,{hw},{hw},{c}]{{3,2,1,0}} parameter(0)\n  w = f32[{k},{k},{c},{o}]{{3,2,1,0}} parameter(1)\n"
        f"  ROOT y = f32[1,{hw},{hw},{o}]{{3,2,1,0}} convolution(x, w), window={{{window}}}, "
        "dim_labels=b01f_01io->b01f\n}\n")
    return generate(frontend(str(tmp_path / "model.hlo"), None), "m", CompileOptions()).lowered.program


def test_sliced_convolution_flops(tmp_path):
    """A 1x1 convolution large enough to be one GEMM sliced over the thread pool
    (`aotc_sgemm_threads`, whose arguments lead with the pool) counts 2*m*n*k
    (DenseNet121's transition convolutions were profiled at 0 GFLOP/s)."""
    hw, c, o = 14, 1024, 512
    p = _nhwc_conv_program(tmp_path, hw, c, o, 1, "size=1x1")
    calls = [s for kern in p.kernels for s in kern.body if isinstance(s, K.CallStmt)]
    assert any(c.fn.endswith("_threads") for c in calls), [c.fn for c in calls]
    (cost,) = program_costs(p)
    assert cost.flops == 2 * hw * hw * c * o


def test_convolution_over_window_positions_flops(tmp_path):
    """A 3x3 convolution run as one GEMM over its window positions (aotc_taps_conv_f32)
    counts the GEMM's 2*m*n*k, m the output pixels and k the window's 9 * C."""
    hw, c, o = 14, 64, 32
    p = _nhwc_conv_program(tmp_path, hw, c, o, 3, "size=3x3 pad=1_1x1_1")
    (cost,) = program_costs(p)
    assert cost.flops == 2 * hw * hw * 9 * c * o


@pytest.mark.parametrize("threads_ok", [True, False])
def test_blocks_shared_unevenly_over_chunks_count_whole(tmp_path, monkeypatch, threads_ok):
    """DenseNet121's 56x56 3x3 convolution: 14 blocks of rows over 4 chunks (4, 3, 4, 3), each
    chunk's share a loop whose bound depends on the chunk: its trip is the mean over the
    chunks, so the whole product is counted (it was profiled at 25 GFLOP/s for 90), whether
    the chunk loop is split over threads or runs whole."""
    if not threads_ok:
        from aotc.lower import assemble

        passes = assemble.run_kernel_passes
        monkeypatch.setattr(assemble, "run_kernel_passes", lambda body, threaded_ok=True, fma=False:
                            passes(body, threaded_ok=False, fma=fma))
    hw, c, o = 56, 128, 32
    p = _nhwc_conv_program(tmp_path, hw, c, o, 3, "size=3x3 pad=1_1x1_1")
    (kern,) = p.kernels
    assert (kern.outer > 0) == threads_ok
    (cost,) = program_costs(p)
    assert cost.flops == 2 * hw * hw * 9 * c * o


def test_elementwise_flops_and_bytes():
    costs = program_costs(_program("add_f32"))  # z = x + y over f32[133]; z_r = a + b over f32[1]
    assert [(c.flops, c.bytes) for c in costs] == [(133, 3 * 133 * 4), (1, 3 * 4)]


def test_integer_kernels_do_no_flops():
    assert all(c.flops == 0 and c.bytes > 0 for c in program_costs(_program("add_sint")))
