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
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .elementwise import _arr
from .registry import OpRule, ShapeError, register


def _index(dims, exprs=None, linear=None):
    from .legacy_c import Index
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
    bits = {"int8_t": 8, "int16_t": 16, "int32_t": 32, "int64_t": 64,
            "uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64}[dt.c_type]
    if dt.kind == "sint":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _int64(v: int) -> str:
    return str(v) if -(1 << 31) < v < (1 << 31) else f"INT64_C({v})"


def clamp_index(v: str, dt: DType, hi: int) -> str:
    """C int64 expression of index value `v` (of type `dt`) clamped into [0, hi]; comparisons
    that the type's range already decides are left out (no -Wtype-limits)."""
    if hi <= 0:
        return "0"
    lo_t, hi_t = _storage_range(dt)
    e = f"(int64_t){v}"
    if hi_t > hi:
        e = f"({v} > {_int64(hi)} ? {_int64(hi)} : {e})"
    if lo_t < 0:
        e = f"({v} < 0 ? 0 : {e})"
    return e


def in_range(v: str, dt: DType, hi: int) -> list[str]:
    """C conditions that index value `v` (of type `dt`) lies in [0, hi]; ["0"] if it never can."""
    if hi < 0:
        return ["0"]
    lo_t, hi_t = _storage_range(dt)
    conds = []
    if lo_t < 0:
        conds.append(f"{v} >= 0")
    if hi_t > hi:
        conds.append(f"{v} <= {_int64(hi)}")
    return conds


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


def _gather_elem(ctx, instr: Instruction, idx) -> str:
    operand = ctx.producers[instr.operands[0]].array_shape
    indices = ctx.producers[instr.operands[1]].array_shape
    g = _gather_dims(instr, operand, indices)
    out = instr.array_shape
    if idx.exprs is None and idx.linear is not None:
        # the linear index is the enclosing loop's variable: keep the per-dimension
        # locals derived from it from taking its name
        ctx.fresh(str(idx.linear))
    e = ctx.exprs(idx) if out.rank else ()
    batch_out = [d for d in range(out.rank) if d not in g.offset_dims]
    ibatch = _batch_of(g.index_vector_dim, indices.rank)
    # output batch index of every indices dimension but the vector one
    at = {d: e[batch_out[p]] for p, d in enumerate(ibatch)}
    sub = ["0"] * operand.rank
    for k, d in enumerate(g.start_index_map):
        isub = [at[j] if j != g.index_vector_dim else str(k) for j in range(indices.rank)]
        v = ctx.operand(instr, 1, _index(indices.dims, isub))
        sub[d] = ctx.let("int64_t", clamp_index(v, indices.dtype, operand.dims[d] - g.slice_sizes[d]), "start")
    for a, b in zip(g.operand_batching, g.indices_batching):
        sub[a] = at[b]
    window = [d for d in range(operand.rank) if d not in g.collapsed and d not in g.operand_batching]
    for od, d in zip(g.offset_dims, window):
        sub[d] = e[od] if sub[d] == "0" else f"({sub[d]} + {e[od]})"
    return ctx.operand(instr, 0, _index(operand.dims, sub))


register(OpRule("gather", shape=_gather_shape, elemental=_gather_elem))

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
    from .legacy_c import compute_ctype, load_expr, store_expr
    n = (len(instr.operands) - 1) // 2
    operand = kb.producers[instr.operands[0]].array_shape
    indices = kb.producers[instr.operands[n]].array_shape
    update = kb.producers[instr.operands[n + 1]].array_shape
    s = _scatter_dims(instr, operand, indices, update)
    fn = kb.scalar_function(instr.attr("to_apply"))
    dts = [kb.producers[o].array_shape.dtype for o in instr.operands[:n]]

    # 1. the result starts as the operand
    i = kb.fresh("i")
    kb.loop(i, operand.size)
    for k in range(n):
        v = kb.operand(instr, k, _index(operand.dims, linear=i) if operand.rank else _index(()))
        kb.line(f"{outs[k].cname}[{i}] = {store_expr(dts[k], v)};")
    kb.close()

    # 2. one update window per scatter index, in row-major order
    if update.size == 0:
        return
    scatter_dims = [d for d in range(update.rank) if d not in s.update_window_dims]
    u = ["0"] * update.rank
    for j, d in enumerate(scatter_dims):
        u[d] = kb.fresh(f"u{j}")
        kb.loop(u[d], update.dims[d])
    ibatch = _batch_of(s.index_vector_dim, indices.rank)
    at = {d: u[scatter_dims[p]] for p, d in enumerate(ibatch)}
    window = _window_operand_dims(s, operand.rank)
    wsize = {od: update.dims[ud] for ud, od in zip(s.update_window_dims, window)}
    starts: dict[int, str] = {}
    conds: list[str] = []
    for k, d in enumerate(s.to_operand):
        isub = [at[j] if j != s.index_vector_dim else str(k) for j in range(indices.rank)]
        v = kb.operand(instr, n, _index(indices.dims, isub))
        conds += in_range(v, indices.dtype, operand.dims[d] - wsize.get(d, 1))
        starts[d] = v
    opened = bool(conds)
    if opened:
        kb.open(f"if ({' && '.join(dict.fromkeys(conds))})")
    o = ["0"] * operand.rank
    for d, v in starts.items():
        o[d] = kb.let("int64_t", f"(int64_t){v}", "s")
    for a, b in zip(s.input_batching, s.indices_batching):
        o[a] = at[b] if o[a] == "0" else f"({o[a]} + {at[b]})"
    loops = 0
    for j, (ud, od) in enumerate(zip(s.update_window_dims, window)):
        if update.dims[ud] == 1:
            continue
        w = kb.fresh(f"w{j}")
        kb.loop(w, update.dims[ud])
        loops += 1
        u[ud] = w
        o[od] = w if o[od] == "0" else f"({o[od]} + {w})"
    lin = kb.let("int64_t", kb.linear(_index(operand.dims, o)) if operand.rank else "0", "at")
    cur = [kb.let(compute_ctype(dts[k]), load_expr(dts[k], f"{outs[k].cname}[{lin}]"), f"cur{k}")
           for k in range(n)]
    upd = [kb.operand(instr, n + 1 + k, _index(update.dims, u) if update.rank else _index(()))
           for k in range(n)]
    if n == 1:
        kb.line(f"{outs[0].cname}[{lin}] = {store_expr(dts[0], f'{fn}({cur[0]}, {upd[0]})')};")
    else:
        res = [kb.fresh(f"new{k}") for k in range(n)]
        for k in range(n):
            kb.line(f"{compute_ctype(dts[k])} {res[k]};")
        kb.line(f"{fn}({', '.join(map(str, cur + upd))}, {', '.join('&' + str(r) for r in res)});")
        for k in range(n):
            kb.line(f"{outs[k].cname}[{lin}] = {store_expr(dts[k], res[k])};")
    for _ in range(loops):
        kb.close()
    if opened:
        kb.close()
    for _ in scatter_dims:
        kb.close()


register(OpRule("scatter", shape=_scatter_shape, kernel=_scatter_kernel))
