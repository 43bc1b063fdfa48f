"""The kernel pass list: every kernel body goes through these, in order.

Each pass takes a body and returns (body, changed); `--dump-after` style tests
check them one by one (tests/kernel).
"""
from __future__ import annotations

from . import ir as K
from .dce import remove_unused_values
from .hoist import hoist_invariants
from .propagate import propagate_indices
from .parallel import collapse_outer, split_range, worth_threads
from .prefetch import prefetch_next_rows, prefetch_streams
from .reuse import reuse_fold_values
from .simplify import simplify_indices
from .strength import pick_constant_bounds
from .transpose import tile_transposes
from .tabulate import tabulate_columns
from .unswitch import unswitch_invariant_branches
from .contract import contract_multiply_adds
from .vectorize import mark_simd

KERNEL_PASSES = (
    ("dce", remove_unused_values),      # values nothing reads (builders may compute eagerly)
    ("simplify", simplify_indices),     # affine index arithmetic in simplest form
    ("transpose", tile_transposes),     # a copy reading down columns: 8 x 8 tiles (aotc_tr_f32)
    ("strength", pick_constant_bounds), # max/min with a normal constant as one compare-and-pick
    ("hoist", hoist_invariants),        # loop-invariant values and folds computed once, before their loop
    ("collapse", collapse_outer),       # threaded kernels: merge parallel outer loops ([1,H,W,C] over H*W)
    ("resimplify", simplify_indices),   # the merged loops' indices
    ("reuse", reuse_fold_values),       # a map loop loads what a fold over its row computed (softmax's exp)
    ("tabulate", tabulate_columns),     # costly per-column values (BatchNorm's per channel) once per column
    ("retire", remove_unused_values),   # what tabulating left unread
    ("unswitch", unswitch_invariant_branches),  # a vector loop's invariant branch (a fused pad's bounds) outside it
    ("propagate", propagate_indices),   # affine index values into the accesses of vector loops
    ("index", simplify_indices),        # the accesses they reach (a reshape's split of a merged index)
    ("contract", contract_multiply_adds),  # products added once: fused multiply-adds, as XLA:CPU fuses (FMA targets)
    ("vectorize", mark_simd),           # f32 vector loops: a vector body (aotc_simd.h) plus scalar tail
)


def run_kernel_passes(body: tuple[K.Stmt, ...], threaded_ok: bool = True,
                      fma: bool = False) -> tuple[tuple[K.Stmt, ...], int]:
    """The optimized body and the trip count of the loop threads may split (0: none);
    `fma`: the target has fused multiply-add instructions (XLA:CPU contracts there)."""
    threaded = threaded_ok and worth_threads(body)
    for name, p in KERNEL_PASSES:
        if name == "collapse" and not threaded:
            continue  # a serial kernel keeps its nest as written
        if name == "contract" and not fma:
            continue
        body, _ = p(body)
    body, outer = split_range(body, threaded)
    body, _ = prefetch_next_rows(body)   # the next row's lines while a later pass works on this one
    body, _ = prefetch_streams(body)     # long input streams read ahead (AVX-512 only, in C)
    return body, outer
