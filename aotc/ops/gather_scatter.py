"""Gather and scatter: shape rules and emission.

`gather` is an element expression (it fuses like a slice): every output
element reads the operand at a start index taken from the indices array,
clamped into range, plus its offset inside the slice. `scatter` is a kernel:
the output starts as a copy of the operand, then every update window whose
start is in bounds is combined in, one element at a time, in row-major order of
the updates (so duplicate indices apply in order). Index values of any integer
type are range-checked in their own type, never wrapped to int64 first.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hlo.dtypes import DType
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, TupleShape, row_major_strides
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type, load_value, store_value
from .elementwise import _arr
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


def _index(dims, exprs=None, linear=None):
    return Index(tuple(dims), None if exprs is None else tuple(exprs), linear)


def _ints(instr: Instruction, key: str) -> tuple[int, ...]:
    return tuple(instr.attr(key, ()) or ())


def _check_dims(values: tuple[int, ...], rank: int, key: str, what: str) -> None:
    for d in values:
        if not 0 <= d < rank:
            raise ShapeError(f"{key} value {d} is out of range for the {what} (rank {rank})")
    if len(set(values)) != len(values):
        raise ShapeError(f"{key}={{{','.join(map(str, values))}}} repeats a dimension")


def _storage_range(dt: DType) -> tuple[int, int]:
    if dt.kind == "sint":
        return -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
    return 0, (1 << dt.bits) - 1


def _to_index(v: K.Expr, dt: DType) -> K.Expr:
    """Index value `v` (of integer type `dt`) as int64, for a value known to lie in
    [0, INT64_MAX] (C's conversion is then exact: a widening, or a u64 in range)."""
    return v if dt == K.INDEX else K.Cast(v, K.INDEX)


def clamp_index(v: K.Expr, dt: DType, hi: int) -> K.Expr:
    """Index value `v` (of type `dt`) as int64, clamped into [0, hi]; comparisons that the
    type's range already decides are left out (no -Wtype-limits)."""
    if hi <= 0:
        return K.Const(0)
    if isinstance(v, K.Const):
        return K.Const(min(max(int(v.value), 0), hi))
    lo_t, hi_t = _storage_range(dt)
    e = _to_index(v, dt)
    if hi_t > hi:
        e = K.Select(v.gt(hi), K.Const(hi), e, K.INDEX)
    if lo_t < 0:
        e = K.Select(v.lt(0), K.Const(0), e, K.INDEX)
    return e


def in_range(v: K.Expr, dt: DType, hi: int) -> list[K.Expr]:
    """Conditions that index value `v` (of type `dt`) lies in [0, hi], compared in its own
    type (those its range decides are left out); [false] if it never can."""
    if isinstance(v, K.Const):
        return [] if 0 <= int(v.value) <= hi else [K.Const(0, K.BOOL)]
    if hi < 0:
        return [K.Const(0, K.BOOL)]
    lo_t, hi_t = _storage_range(dt)
    conds = []
    if lo_t < 0:
        conds.append(v.ge(0))
    if hi_t > hi:
        conds.append(v.le(hi))
    return conds


def _row_major(dims, sub: list[K.Expr]) -> K.Expr:
    """The linear element index of `sub` in a row-major array of `dims`."""
    total: K.Expr = K.Const(0)
    for e, stride, n in zip(sub, row_major_strides(dims), dims):
        if n != 1:
            total = total + e * stride
    return total


def _all(conds: list[K.Expr]) -> K.Expr:
    out = conds[0]
    for c in conds[1:]:
        out = K.Binary("&&", out, c, K.BOOL)
    return out


def _int_index_type(s: ArrayShape, what: str) -> None:
    if s.dtype.kind not in ("sint", "uint"):
        raise ShapeError(f"{what} must have an integer element type, got {s.text(False)}")


def _vector_dim(instr: Instruction, indices: ArrayShape) -> int:
    ivd = instr.attr("index_vector_dim")
    if ivd is None:
        raise ShapeError(f"{instr.opcode} needs an index_vector_dim attribute")
    if not 0 <= ivd <= indices.rank:
        raise ShapeError(f"index_vector_dim={ivd} is out of range for indices of rank {indices.rank}")
    return ivd


def _batch_of(ivd: int, rank: int) -> list[int]:
    """Dimensions of the indices array that are not the index vector dimension."""
    return [d for d in range(rank) if d != ivd]


# ------------------------------------------------------------------ gather


@dataclass(frozen=True, slots=True)
class GatherDims:
    offset_dims: tuple[int, ...]
    collapsed: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching: tuple[int, ...]
    indices_batching: tuple[int, ...]
    index_vector_dim: int
    slice_sizes: tuple[int, ...]


def _gather_dims(instr: Instruction, operand: ArrayShape, indices: ArrayShape) -> GatherDims:
    g = GatherDims(_ints(instr, "offset_dims"), _ints(instr, "collapsed_slice_dims"),
                   _ints(instr, "start_index_map"), _ints(instr, "operand_batching_dims"),
                   _ints(instr, "start_indices_batching_dims"), _vector_dim(instr, indices),
                   _ints(instr, "slice_sizes"))
    if len(g.slice_sizes) != operand.rank:
        raise ShapeError(f"gather slice_sizes has {len(g.slice_sizes)} entries, operand {operand.text(False)} "
                         f"has rank {operand.rank}")
    for key, vals in (("collapsed_slice_dims", g.collapsed), ("start_index_map", g.start_index_map),
                      ("operand_batching_dims", g.operand_batching)):
        _check_dims(vals, operand.rank, key, "operand")
    _check_dims(g.indices_batching, indices.rank, "start_indices_batching_dims", "indices")
    if g.index_vector_dim in g.indices_batching:
        raise ShapeError("start_indices_batching_dims contains the index_vector_dim")
    if set(g.collapsed) & set(g.operand_batching):
        raise ShapeError("a dimension is both in collapsed_slice_dims and operand_batching_dims")
    if len(g.operand_batching) != len(g.indices_batching):
        raise ShapeError("operand_batching_dims and start_indices_batching_dims differ in length")
    vec = indices.dims[g.index_vector_dim] if g.index_vector_dim < indices.rank else 1
    if len(g.start_index_map) != vec:
        raise ShapeError(f"start_index_map has {len(g.start_index_map)} entries but the index vector "
                         f"(dimension {g.index_vector_dim} of {indices.text(False)}) has {vec}")
    for d, n in enumerate(g.slice_sizes):
        if not 0 <= n <= operand.dims[d]:
            raise ShapeError(f"gather slice_sizes[{d}]={n} does not fit operand dimension {d} "
                             f"of size {operand.dims[d]}")
        if (d in g.collapsed or d in g.operand_batching) and n != 1:
            raise ShapeError(f"gather slice_sizes[{d}]={n} must be 1 for a collapsed or batching dimension")
    for a, b in zip(g.operand_batching, g.indices_batching):
        if operand.dims[a] != indices.dims[b]:
            raise ShapeError(f"gather batching dimension sizes differ: operand dimension {a} "
                             f"({operand.dims[a]}) vs indices dimension {b} ({indices.dims[b]})")
    return g


def _gather_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    operand, indices = _arr(shapes[0], "gather operand"), _arr(shapes[1], "gather indices")
    _int_index_type(indices, "gather indices")
    g = _gather_dims(instr, operand, indices)
    window = [d for d in range(operand.rank) if d not in g.collapsed and d not in g.operand_batching]
    if len(g.offset_dims) != len(window):
        raise ShapeError(f"gather offset_dims has {len(g.offset_dims)} entries but the slice keeps "
                         f"{len(window)} operand dimensions")
    if list(g.offset_dims) != sorted(g.offset_dims):
        raise ShapeError("gather offset_dims must be sorted")
    batch = [indices.dims[d] for d in _batch_of(g.index_vector_dim, indices.rank)]
    rank = len(batch) + len(window)
    _check_dims(g.offset_dims, rank, "offset_dims", "result")
    dims, b, w = [], iter(batch), iter(window)
    for d in range(rank):
        dims.append(g.slice_sizes[next(w)] if d in g.offset_dims else next(b))
    return ArrayShape(operand.dtype, tuple(dims))


def _gather_elem(kb, instr: Instruction, idx) -> K.Expr:
    operand = kb.producers[instr.operands[0]].array_shape
    indices = kb.producers[instr.operands[1]].array_shape
    g = _gather_dims(instr, operand, indices)
    out = instr.array_shape
    e = kb.exprs(idx) if out.rank else ()
    batch_out = [d for d in range(out.rank) if d not in g.offset_dims]
    ibatch = _batch_of(g.index_vector_dim, indices.rank)
    # output batch index of every indices dimension but the vector one
    at = {d: e[batch_out[p]] for p, d in enumerate(ibatch)}
    sub: list[K.Expr] = [K.Const(0)] * operand.rank
    for k, d in enumerate(g.start_index_map):
        isub = [at[j] if j != g.index_vector_dim else K.Const(k) for j in range(indices.rank)]
        v = kb.operand(instr, 1, _index(indices.dims, isub))
        sub[d] = kb.let(clamp_index(v, indices.dtype, operand.dims[d] - g.slice_sizes[d]), "start")
    for a, b in zip(g.operand_batching, g.indices_batching):
        sub[a] = at[b]
    window = [d for d in range(operand.rank) if d not in g.collapsed and d not in g.operand_batching]
    for od, d in zip(g.offset_dims, window):
        sub[d] = sub[d] + e[od]
    return kb.operand(instr, 0, _index(operand.dims, sub))


RULES.append(OpRule("gather", shape=_gather_shape, elemental=_gather_elem))

# ------------------------------------------------------------------ scatter


@dataclass(frozen=True, slots=True)
class ScatterDims:
    update_window_dims: tuple[int, ...]
    inserted: tuple[int, ...]
    to_operand: tuple[int, ...]
    input_batching: tuple[int, ...]
    indices_batching: tuple[int, ...]
    index_vector_dim: int


def _scatter_dims(instr: Instruction, operand: ArrayShape, indices: ArrayShape, update: ArrayShape) -> ScatterDims:
    s = ScatterDims(_ints(instr, "update_window_dims"), _ints(instr, "inserted_window_dims"),
                    _ints(instr, "scatter_dims_to_operand_dims"), _ints(instr, "input_batching_dims"),
                    _ints(instr, "scatter_indices_batching_dims"), _vector_dim(instr, indices))
    for key, vals in (("inserted_window_dims", s.inserted), ("scatter_dims_to_operand_dims", s.to_operand),
                      ("input_batching_dims", s.input_batching)):
        _check_dims(vals, operand.rank, key, "operand")
    _check_dims(s.indices_batching, indices.rank, "scatter_indices_batching_dims", "indices")
    _check_dims(s.update_window_dims, update.rank, "update_window_dims", "updates")
    if list(s.update_window_dims) != sorted(s.update_window_dims):
        raise ShapeError("scatter update_window_dims must be sorted")
    if s.index_vector_dim in s.indices_batching:
        raise ShapeError("scatter_indices_batching_dims contains the index_vector_dim")
    if set(s.inserted) & set(s.input_batching):
        raise ShapeError("a dimension is both in inserted_window_dims and input_batching_dims")
    if len(s.input_batching) != len(s.indices_batching):
        raise ShapeError("input_batching_dims and scatter_indices_batching_dims differ in length")
    vec = indices.dims[s.index_vector_dim] if s.index_vector_dim < indices.rank else 1
    if len(s.to_operand) != vec:
        raise ShapeError(f"scatter_dims_to_operand_dims has {len(s.to_operand)} entries but the index vector "
                         f"(dimension {s.index_vector_dim} of {indices.text(False)}) has {vec}")
    window = _window_operand_dims(s, operand.rank)
    if len(window) != len(s.update_window_dims):
        raise ShapeError(f"scatter update_window_dims has {len(s.update_window_dims)} entries but the operand "
                         f"keeps {len(window)} window dimensions")
    for ud, od in zip(s.update_window_dims, window):
        if update.dims[ud] > operand.dims[od]:
            raise ShapeError(f"scatter update window dimension {ud} ({update.dims[ud]}) is larger than operand "
                             f"dimension {od} ({operand.dims[od]})")
    ibatch = _batch_of(s.index_vector_dim, indices.rank)
    scatter_dims = [d for d in range(update.rank) if d not in s.update_window_dims]
    if len(scatter_dims) != len(ibatch) or any(update.dims[u] != indices.dims[i]
                                               for u, i in zip(scatter_dims, ibatch)):
        raise ShapeError(f"scatter updates {update.text(False)} do not match the indices {indices.text(False)} "
                         f"outside update_window_dims")
    for a, b in zip(s.input_batching, s.indices_batching):
        if operand.dims[a] != indices.dims[b]:
            raise ShapeError(f"scatter batching dimension sizes differ: operand dimension {a} "
                             f"({operand.dims[a]}) vs indices dimension {b} ({indices.dims[b]})")
    return s


def _window_operand_dims(s: ScatterDims, rank: int) -> list[int]:
    return [d for d in range(rank) if d not in s.inserted and d not in s.input_batching]


def _scatter_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) < 3 or len(shapes) % 2 == 0:
        raise ShapeError("scatter needs N operands, one indices array and N updates")
    n = (len(shapes) - 1) // 2
    ops = [_arr(x, f"scatter operand {k}") for k, x in enumerate(shapes[:n])]
    indices = _arr(shapes[n], "scatter indices")
    ups = [_arr(x, f"scatter update {k}") for k, x in enumerate(shapes[n + 1:])]
    _int_index_type(indices, "scatter indices")
    for k in range(n):
        if ops[k].dims != ops[0].dims:
            raise ShapeError(f"scatter operand {k} {ops[k].text(False)} does not match {ops[0].text(False)}")
        if ups[k].dims != ups[0].dims or ups[k].dtype != ops[k].dtype:
            raise ShapeError(f"scatter update {k} {ups[k].text(False)} does not match operand "
                             f"{ops[k].text(False)} or update 0")
    _scatter_dims(instr, ops[0], indices, ups[0])
    if instr.attr("to_apply") is None:
        raise ShapeError("scatter needs a to_apply computation")
    outs = tuple(a.with_layout(None) for a in ops)
    return outs[0] if n == 1 else TupleShape(outs)


def _scatter_kernel(kb, instr: Instruction, outs) -> None:
    n = (len(instr.operands) - 1) // 2
    operand = kb.producers[instr.operands[0]].array_shape
    indices = kb.producers[instr.operands[n]].array_shape
    update = kb.producers[instr.operands[n + 1]].array_shape
    s = _scatter_dims(instr, operand, indices, update)
    fn = kb.scalar_function(instr.attr("to_apply"))
    dts = [kb.producers[o].array_shape.dtype for o in instr.operands[:n]]

    # 1. the result starts as the operand
    i = kb.loop(kb.fresh("i"), operand.size, (K.PARALLEL, K.VECTOR))
    for k in range(n):
        v = kb.operand(instr, k, _index(operand.dims, linear=i) if operand.rank else _index(()))
        kb.store(outs[k], i, store_value(dts[k], v))
    kb.close()

    # 2. one update window per scatter index, in row-major order of the updates: not
    # parallel, duplicate indices combine in order
    if update.size == 0:
        return
    scatter_dims = [d for d in range(update.rank) if d not in s.update_window_dims]
    u: list[K.Expr] = [K.Const(0)] * update.rank
    for j, d in enumerate(scatter_dims):
        u[d] = kb.loop(kb.fresh(f"u{j}"), update.dims[d])
    ibatch = _batch_of(s.index_vector_dim, indices.rank)
    at = {d: u[scatter_dims[p]] for p, d in enumerate(ibatch)}
    window = _window_operand_dims(s, operand.rank)
    wsize = {od: update.dims[ud] for ud, od in zip(s.update_window_dims, window)}
    starts: dict[int, K.Expr] = {}
    conds: list[K.Expr] = []
    for k, d in enumerate(s.to_operand):
        isub = [at[j] if j != s.index_vector_dim else K.Const(k) for j in range(indices.rank)]
        v = kb.operand(instr, n, _index(indices.dims, isub))
        conds += in_range(v, indices.dtype, operand.dims[d] - wsize.get(d, 1))
        starts[d] = v
    guarded = bool(conds)
    if guarded:
        kb.if_(_all(list(dict.fromkeys(conds))))
    o: list[K.Expr] = [K.Const(0)] * operand.rank
    for d, v in starts.items():
        o[d] = kb.let(_to_index(v, indices.dtype), "s")  # in range: checked above
    for a, b in zip(s.input_batching, s.indices_batching):
        o[a] = o[a] + at[b]
    loops = 0
    for j, (ud, od) in enumerate(zip(s.update_window_dims, window)):
        if update.dims[ud] == 1:
            continue
        w = kb.loop(kb.fresh(f"w{j}"), update.dims[ud])
        loops += 1
        u[ud] = w
        o[od] = o[od] + w
    lin = kb.let(_row_major(operand.dims, o), "at")
    cur = [kb.let(load_value(dts[k], K.Load(outs[k], lin)), f"cur{k}") for k in range(n)]
    upd = [kb.operand(instr, n + 1 + k, _index(update.dims, u) if update.rank else _index(()))
           for k in range(n)]
    if n == 1:
        kb.store(outs[0], lin, store_value(dts[0], K.Call(fn, (cur[0], upd[0]), compute_type(dts[0]))))
    else:
        res = [kb.local(compute_type(dts[k]), None, f"new{k}") for k in range(n)]
        kb.emit(K.CallStmt(fn, tuple(cur) + tuple(upd) + tuple(K.Ptr(var=r) for r in res)))
        for k in range(n):
            kb.store(outs[k], lin, store_value(dts[k], res[k]))
    for _ in range(loops):
        kb.close()
    if guarded:
        kb.close()
    for _ in scatter_dims:
        kb.close()


RULES.append(OpRule("scatter", shape=_scatter_shape, kernel=_scatter_kernel))
