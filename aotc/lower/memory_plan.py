"""Static memory planning: live intervals to offsets in one arena.

Buffers whose live intervals (in kernel steps) are disjoint share memory.
Placement is largest-first, at the lowest 64-byte-aligned offset that does not
overlap any already placed buffer that is live at the same time (the heap
simulator's best-fit idea, deterministic).
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


def assign_offsets(intervals: list[Interval]) -> tuple[dict[str, int], int]:
    """Offsets for every interval and the arena size (a multiple of ALIGN)."""
    order = sorted(intervals, key=lambda b: (-align_up(b.size), b.start, b.key))
    placed: list[tuple[int, int, Interval]] = []  # (offset, end offset, interval)
    offsets: dict[str, int] = {}
    top = 0
    for b in order:
        size = align_up(max(b.size, 1))
        busy = sorted((o, e) for o, e, p in placed if p.start <= b.end and b.start <= p.end)
        off = 0
        for o, e in busy:
            if off + size <= o:
                break
            off = max(off, e)
        offsets[b.key] = off
        placed.append((off, off + size, b))
        top = max(top, off + size)
    return offsets, top


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
