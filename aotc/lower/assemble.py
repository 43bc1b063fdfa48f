"""Program assembly: slots for every materialized value, kernels in schedule
order, result and variable write-back copies, and the arena plan.

Inputs are the simplified entry computation, its fusion plan and the resolved
live values; output is a `Program` the C emitter prints without interpreting.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..hlo.dtypes import DTYPES, from_numpy
from ..hlo.ir import Computation, Module
from ..errors import located
from ..hlo.shape import ArrayShape, ShapeError, TupleShape
from ..ops.conv_winograd import winograd_weights
from ..ops.dot import pack_panels
from ..ops.registry import rule
from ..runtime_c import GEMM_PANEL
from ..kernel import ir as K
from ..kernel.builder import c_ident
from ..kernel.host import HostCall
from ..kernel.passes import run_kernel_passes
from ..kernel.stream import stream_large_stores
from .fused import Fused, fused_computation, kernel_op
from .kernels import (ScalarFunctions, copy_body, elementwise_kernel, kernel_body, loop_reader, output_shapes,
                      scalar_literal, strided_writer)
from .concat_slices import choose_concat_slices
from .liveness import choose_in_place, kernel_reads, live_intervals
from .memory_plan import assign_offsets, peak_live_bytes
from .names import NameSupply
from .panels import panel_constants, winograd_constants
from .program import ConstArray, Kernel, Port, Program, Slot, Weight
from ..hlo.opcodes import Op


def _key(name: str, idx: tuple[int, ...]) -> str:
    return name if not idx else f"{name}#{idx[0]}"


def storage_array(values: np.ndarray, dt) -> np.ndarray:
    """A literal as stored in C: halves and f8 as their bits, pred as bytes."""
    a = np.ascontiguousarray(values)
    if dt.name in ("bf16", "f16"):
        return a.view(np.uint16)
    if dt.name.startswith("f8") or dt.name in ("s4", "u4"):
        return a.view(np.uint8) if dt.name.startswith("f8") else a.astype(np.int8 if dt.name == "s4" else np.uint8)
    if dt.name == "pred":
        return a.astype(np.uint8)
    return a


class HostCalls:
    """The calls into the application a program's kernels make (kernel/host.py): each gets
    its wrapper's name from the module's name supply."""

    def __init__(self, names: NameSupply, program: str, targets: frozenset[str]) -> None:
        self.names, self.program, self.targets = names, program, targets
        self.calls: dict[str, HostCall] = {}

    def add(self, spec: HostCall) -> str:
        cname = self.names.host_call(self.program, spec.hlo)
        self.calls[cname] = replace(spec, cname=cname)
        return cname

    def function(self, target: str) -> str:
        return self.names.custom_call(target)

    def ordered(self) -> tuple[HostCall, ...]:
        return tuple(self.calls[c] for c in sorted(self.calls))


class _Slots:
    def __init__(self, names: NameSupply) -> None:
        self.info: dict[str, dict] = {}
        self.names = names  # the program's local scope

    def add(self, key: str, shape: ArrayShape, place: str, cname: str | None = None, **kw) -> str:
        cname = self.names.slot(key, cname)
        self.info[key] = dict(cname=cname, shape=shape, place=place, **kw)
        return cname

    def buffer(self, key: str) -> K.Buf:
        d = self.info[key]
        return K.Buf(d["cname"], d["shape"].dtype, d["shape"].size, d["shape"].dims, d.get("panels", 0),
                     d.get("winograd", 0))


def build_program(fplan: Fused, fetch_refs, var_refs, sig, *,
                  name: str, source: str, target: str, source_text: str | None = None,
                  names: NameSupply, subprograms: dict, weights_file: bool = False, fma: bool = False,
                  custom_calls: tuple[str, ...] = (), conv_algorithm: str = "direct",
                  stream_min_bytes: int = 0) -> Program:
    """`fplan`: the fused module (its entry is what runs); `subprograms`: the Program of
    each computation the kernels run as control flow, lowered before (lower/subprogram.py)."""
    m = fplan.module
    comp = m.entry_computation
    roles = fplan.roles
    slots = _Slots(names.local())
    fns = ScalarFunctions(m, names)
    host = HostCalls(names, name, frozenset(custom_calls))
    scalars: dict[str, K.Expr] = {}
    consts: list[ConstArray] = []
    params = {p.name: p for p in comp.instructions if p.opcode == Op.PARAMETER}
    feed_by_param = {f.hlo_name: k for k, f in enumerate(sig.feeds)}
    weights = tuple(Weight(b.key or b.hlo_name, from_numpy(b.array.dtype), b.array.shape, b.hlo_name,
                           storage_array(b.array, from_numpy(b.array.dtype)))
                    for b in sig.bound) if weights_file else ()
    feed_by_param.update({w.hlo: len(sig.feeds) + k for k, w in enumerate(weights)})

    # 1. slots for parameters, constants and kernel outputs (views come after their base);
    #    a constant only GEMMs read as their B is stored in their panels, one only Winograd
    #    convolutions read as its transform (panels.py)
    fetched = {n for n, _ in fetch_refs}
    panels = panel_constants(m, comp, roles, fplan.heroes, fetched, conv_algorithm)
    wino = winograd_constants(m, comp, roles, fplan.heroes, fetched, conv_algorithm)
    for ins in comp.instructions:
        role = roles[ins.name]
        if role == "param":
            slots.add(ins.name, ins.array_shape, "arg", index=feed_by_param[ins.name])
        elif role == "scalar":
            scalars[ins.name] = scalar_literal(ins)
        elif role == "const":
            cname = names.constant(name, ins.name)
            data = storage_array(ins.literal.values, ins.shape.dtype)
            dims, stored = ins.shape.dims, {}
            if ins.name in panels:
                data, stored = pack_panels(data, panels[ins.name]), {"panels": GEMM_PANEL}
            elif ins.name in wino:
                data, stored = winograd_weights(data, wino[ins.name]), {"winograd": wino[ins.name].m}
                dims = data.shape
            consts.append(ConstArray(cname, ins.shape.dtype, dims, data))
            slots.add(ins.name, ins.array_shape, "const", const=cname, **stored)
    view_base: dict[str, str] = {}
    for ins in comp.instructions:
        if roles[ins.name] == "view":
            if ins.opcode == Op.GET_TUPLE_ELEMENT:
                base = _key(ins.operands[0], (ins.attr("index"),))
            else:
                base = view_base.get(ins.operands[0], ins.operands[0])
            view_base[ins.name] = view_base.get(base, base)

    # 2. results written in place by the kernel producing them
    result_of: dict[str, int] = {}
    for j, (n, idx) in enumerate(fetch_refs):
        k = _key(n, idx)
        if roles.get(n) == "kernel" and k not in result_of:
            result_of[k] = j
    for ins in comp.instructions:
        if roles[ins.name] == "kernel":
            shapes = output_shapes(ins)
            for k, s in enumerate(shapes):
                key = _key(ins.name, (k,) if isinstance(ins.shape, TupleShape) else ())
                if key in result_of:
                    slots.add(key, s, "result", index=result_of[key])
                elif s.is_token:
                    slots.add(key, s, "token")  # no data: never in the arena
                else:
                    slots.add(key, s, "arena")
    for ins in comp.instructions:
        if roles[ins.name] == "view":
            slots.add(ins.name, ins.array_shape, "alias", alias_of=view_base[ins.name])

    def base_key(k: str) -> str:
        return view_base.get(k, k)

    def pinned_keys() -> set[str]:
        return ({base_key(_key(n, idx)) for n, idx in fetch_refs}
                | {base_key(_key(n, idx)) for _, (n, idx) in var_refs})

    # 3. concatenations without copies (concat_slices.py): the kernel of each piece writes
    #    its range of the concatenation's buffer, whose own kernel is dropped
    readers: dict[str, list[str]] = {}
    for kname in fplan.order:
        for n in kernel_reads(comp, comp.get(kname), roles):
            readers.setdefault(n, []).append(kname)
    placed, dropped = choose_concat_slices(
        comp, fplan.order, roles, slots.info.get, pinned_keys(),
        lambda k, d: strided_writer(m, comp, comp.get(k), fplan.heroes, d, conv_algorithm),
        lambda k, v: loop_reader(m, comp, comp.get(k), fplan.heroes, v), readers, set(view_base.values()))
    order = tuple(k for k in fplan.order if k not in dropped)
    pieces = {k: (p.concat, p.offset) for k, p in placed.items()}
    strided = {k: p.rows for k, p in placed.items() if p.rows is not None}
    shifted = _rebase_views(view_base, pieces)
    for key, b in view_base.items():
        slots.info[key].update(place="alias", alias_of=b, alias_offset=shifted.get(key, 0))

    # 4. in-place decisions (liveness.py): an elementwise kernel writes over an arena
    #    buffer it reads for the last time, and its output becomes a view of that buffer
    in_place = choose_in_place(comp, order, roles, lambda ins: elementwise_kernel(m, comp, ins),
                               slots.info.get, view_base, pinned_keys(), frozenset(shifted) | frozenset(pieces))
    for kname, src in in_place.items():
        slots.info[kname].update(place="alias", alias_of=src)

    # 5. kernels in schedule order
    kernels: list[Kernel] = []
    uses: dict[str, list[int]] = {}
    scratch_size: dict[str, int] = {}
    for step, kname in enumerate(order):
        ins = comp.get(kname)
        kop = kernel_op(m, ins, fplan.heroes)
        scope = fused_computation(m, ins) or comp
        r = rule(kop.opcode)
        inplace = in_place.get(kname)
        nbytes = 0
        if r is not None and r.scratch_bytes is not None:
            nbytes = r.scratch_bytes(kop, [scope.get(o).shape for o in kop.operands])
        skey = f"{kname}#scratch"
        scratch = slots.names.slot(skey, "s_" + c_ident(kname) + "_scratch")  # named before the body uses it
        scratch_buf = K.Buf(scratch, DTYPES["u8"])
        outs_keys = ([_key(kname, (k,)) for k in range(len(ins.shape.elements))]
                     if isinstance(ins.shape, TupleShape) else [kname])
        reads = kernel_reads(comp, ins, roles)
        buffers = {n: slots.buffer(n) for n in reads}
        outs = [slots.buffer(k) for k in outs_keys]
        if inplace is not None:  # write through the pointer it reads, so no two pointers alias
            outs = [K.Buf(slots.info[inplace]["cname"], outs[0].dtype, outs[0].size, outs[0].dims)]
        try:
            body, fused, nbytes, takes_pool = kernel_body(m, comp, ins, fplan.heroes, buffers, outs, scalars,
                                                          fns, scratch_buf, nbytes, subprograms.__getitem__, host,
                                                          conv_algorithm, {n: strided[n] for n in reads if n in strided},
                                                          strided.get(kname))
        except ShapeError as e:  # an op rule refusing a case it cannot compile: a located error
            raise located(f"cannot compile {ins.opcode} {ins.name}: {e}", ins.loc, source_text) from None
        body, outer = run_kernel_passes(body, threaded_ok=not takes_pool, fma=fma)
        if inplace is None:  # large outputs around the caches (kernel/stream.py)
            body, _ = stream_large_stores(body, {o.name: o.size * o.dtype.nbytes for o in outs}, stream_min_bytes)
        if inplace is not None:
            body = (K.Comment(f"in place: writes over {inplace}, read here for the last time"),) + body
        if nbytes:
            scratch = slots.add(skey, ArrayShape(DTYPES["u8"], (nbytes,)), "scratch", cname=scratch)
            scratch_size[skey] = nbytes
            uses[skey] = [step]
        else:
            scratch = None
        for n in reads:
            uses.setdefault(base_key(n), []).append(step)
        for k in outs_keys:
            uses.setdefault(base_key(k), []).append(step)
        params = [(slots.info[n]["cname"], n == inplace) for n in reads]
        if inplace is None:
            params += [(slots.info[k]["cname"], True) for k in outs_keys]
        if scratch:
            params.append((scratch, True))
        prov = tuple(i.name for i in scope.instructions if i.name in fused) + (kname,)
        kernels.append(Kernel(names.kernel(name, kname), prov, tuple(params), body, outer, outer >= 2, takes_pool))

    # 6. copies into results that no kernel wrote in place, then variable write-backs
    res_slots = []
    for j, (n, idx) in enumerate(fetch_refs):
        k = _key(n, idx)
        if result_of.get(k) == j:
            res_slots.append(slots.info[k]["cname"])
            continue
        shape = sig.fetches[j].shape
        rkey = f"result#{j}"
        dst = slots.add(rkey, ArrayShape(shape.dtype, shape.dims), "result", index=j)
        res_slots.append(dst)
        if shape.is_token:
            continue  # a token result: nothing to copy
        step = len(kernels)
        uses.setdefault(base_key(k), []).append(step)
        kernels.append(Kernel(names.kernel(name, rkey), (n,), ((slots.info[k]["cname"], False), (dst, True)),
                              copy_body(slots.buffer(k), slots.buffer(rkey), shape.size)))
    for feed_index, (n, idx) in var_refs:
        k = _key(n, idx)
        dst_key = sig.feeds[feed_index].hlo_name
        if base_key(k) == dst_key:
            continue  # the variable is returned unchanged
        step = len(kernels)
        uses.setdefault(base_key(k), []).append(step)
        kernels.append(Kernel(names.kernel(name, f"update#{dst_key}"), (n,),
                              ((slots.info[k]["cname"], False), (slots.info[dst_key]["cname"], True)),
                              copy_body(slots.buffer(k), slots.buffer(dst_key), slots.buffer(k).size)))

    # 7. the arena: live intervals, then offsets (memory_plan.py)
    intervals = live_intervals(uses, {key: scratch_size.get(key, d["shape"].nbytes)
                                      for key, d in slots.info.items() if d["place"] in ("arena", "scratch")})
    offsets, arena = assign_offsets(intervals)
    peak = peak_live_bytes(intervals)

    out_slots = []
    for key, d in slots.info.items():
        place = d["place"]
        steps = uses.get(base_key(key), [0])
        offset = d.get("alias_offset", 0) if place == "alias" else offsets.get(key, d.get("index", 0) or 0)
        out_slots.append(Slot(d["cname"], key, d["shape"].dtype, d["shape"].dims,
                              scratch_size.get(key, d["shape"].nbytes), place, offset, (min(steps), max(steps)),
                              slots.info[d["alias_of"]]["cname"] if d.get("alias_of") else None, d.get("const")))
    args = tuple(Port(f.name, f.shape.dtype, f.shape.dims, f.shape.nbytes, f.hlo_name, f.kind == "variable",
                      bool(getattr(f, "readonly", False))) for f in sig.feeds)
    results = tuple(Port(f.name, f.shape.dtype, f.shape.dims, f.shape.nbytes, _key(*fetch_refs[j]))
                    for j, f in enumerate(sig.fetches))
    functions = fns.ordered()
    return Program(name, source, sig.signature_text(), args, results, tuple(out_slots), tuple(kernels),
                   tuple(consts), functions, arena, peak, sig.cpp_class, target,
                   tuple(p for _, p in sorted(subprograms.items())), weights, host.ordered())


def _rebase_views(view_base: dict[str, str], pieces: dict[str, tuple[str, int]]) -> dict[str, int]:
    """Add each concatenation piece to `view_base` and point every view at the buffer that
    finally holds it (through pieces of pieces); returns the byte offset of each view that
    is not at the start of its buffer."""
    step = {k: (b, 0) for k, b in view_base.items()}
    step.update(pieces)
    shifted: dict[str, int] = {}
    for key in sorted(step):
        b, off = step[key]
        while b in step:
            off += step[b][1]
            b = step[b][0]
        view_base[key] = b
        if off:
            shifted[key] = off
    return shifted
