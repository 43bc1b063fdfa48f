"""Static memory planning: live intervals to offsets in one arena.

Buffers whose live intervals (in kernel steps) are disjoint share memory. Each
buffer in turn goes to a 64-byte-aligned offset where it overlaps no already placed
buffer live at the same time. As XLA's heap simulator does (ChooseBestHeapAlgorithm),
several orders (largest first; largest area, bytes x steps, first; earliest first; size
class, then longest-lived, first)
and two placements (the lowest offset that fits; the smallest gap that fits) are
tried and the smallest arena kept, the first tried on a tie: deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass

ALIGN = 64


@dataclass(frozen=True, slots=True)
class Interval:
    key: str
    size: int
    start: int  # first step that writes or reads it
    end: int  # last step that reads it (inclusive)


def align_up(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


def _size_order(b: Interval) -> tuple:
    return (-align_up(b.size), b.start, b.key)


def _area_order(b: Interval) -> tuple:
    return (-align_up(b.size) * (b.end - b.start + 1), -align_up(b.size), b.start, b.key)


def _time_order(b: Interval) -> tuple:
    return (b.start, -align_up(b.size), b.key)


def _class_order(b: Interval) -> tuple:
    """Size classes (powers of two) largest first, the longest-lived first within a class:
    a long-lived buffer (a concatenation's block buffer) goes below the short ones of
    about its size instead of splitting the free space they would share."""
    return (-align_up(b.size).bit_length(), -(b.end - b.start), b.start, b.key)


ORDERS = (_size_order, _area_order, _time_order, _class_order)


def _place(intervals: list[Interval], order, best_fit: bool) -> tuple[dict[str, int], int]:
    """Offsets for `intervals` placed one by one in `order`: each at the lowest offset
    that fits (or, with `best_fit`, in the smallest gap that fits; above everything when
    none does)."""
    placed: list[tuple[int, int, Interval]] = []  # (offset, end offset, interval)
    offsets: dict[str, int] = {}
    top = 0
    for b in sorted(intervals, key=order):
        size = align_up(max(b.size, 1))
        busy = sorted((o, e) for o, e, p in placed if p.start <= b.end and b.start <= p.end)
        off, best, best_gap = 0, None, None
        for o, e in busy:
            if off + size <= o and (best is None or o - off < best_gap):
                best, best_gap = off, o - off
                if not best_fit:
                    break
            off = max(off, e)
        if best is None:
            best = off
        offsets[b.key] = best
        placed.append((best, best + size, b))
        top = max(top, best + size)
    return offsets, top


def assign_offsets(intervals: list[Interval]) -> tuple[dict[str, int], int]:
    """Offsets for every interval and the arena size (a multiple of ALIGN): the smallest
    arena of the orders and placements tried (the first on a tie)."""
    best: tuple[dict[str, int], int] | None = None
    for order in ORDERS:
        for best_fit in (False, True):
            plan = _place(intervals, order, best_fit)
            if best is None or plan[1] < best[1]:
                best = plan
    return best


def peak_live_bytes(intervals: list[Interval]) -> int:
    if not intervals:
        return 0
    last = max(b.end for b in intervals)
    return max(sum(align_up(b.size) for b in intervals if b.start <= s <= b.end) for s in range(last + 1))


def check_plan(intervals: list[Interval], offsets: dict[str, int]) -> None:
    """Assert the invariants: alignment and no overlap between simultaneously live buffers."""
    for b in intervals:
        assert offsets[b.key] % ALIGN == 0, b.key
    for i, a in enumerate(intervals):
        for b in intervals[i + 1:]:
            if a.start <= b.end and b.start <= a.end and a.size and b.size:
                oa, ob = offsets[a.key], offsets[b.key]
                assert oa + a.size <= ob or ob + b.size <= oa, (a.key, b.key)
