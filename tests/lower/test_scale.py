"""Large modules go through the Python pipeline without recursion limits: a chain of
thousands of fused elementwise ops is one kernel, built with an explicit stack."""
from __future__ import annotations

from aotc import driver
from aotc.kernel.builder import KEEPS_INDEX as BUILDER_KEEPS_INDEX
from aotc.ops.rule import KEEPS_INDEX
from aotc.options import CompileOptions


def _chain(n: int) -> str:
    out = ["HloModule chain", "", "ENTRY main {", "  x0 = f32[16] parameter(0)"]
    out += [f"  x{i} = f32[16] {'negate' if i % 2 else 'exponential'}(x{i - 1})" for i in range(1, n)]
    return "\n".join(out + [f"  ROOT x{n} = f32[16] negate(x{n - 1})", "}"]) + "\n"


def test_a_chain_of_thousands_of_fused_ops_is_one_kernel():
    fe = driver.frontend("chain.hlo", None, CompileOptions(), text=_chain(4000))
    gen = driver.generate(fe, "libchain", CompileOptions())
    assert len(gen.lowered.program.kernels) == 1
    assert gen.c_text.count("aotc_vf_exp(v_") == 1999  # x2, x4, ..., x3998, vectorized in place


def test_the_builder_names_the_op_trait_it_relies_on():
    assert BUILDER_KEEPS_INDEX == KEEPS_INDEX
