"""The arena planner: hand-drawn interval cases and hypothesis invariants."""
from hypothesis import given, settings, strategies as st

from aotc.lower.memory_plan import ALIGN, ORDERS, Interval, _place, assign_offsets, check_plan, peak_live_bytes


def test_disjoint_lifetimes_share_memory():
    a = Interval("a", 1000, 0, 1)
    b = Interval("b", 1000, 2, 3)
    offsets, size = assign_offsets([a, b])
    assert offsets == {"a": 0, "b": 0}
    assert size == 1024


def test_overlapping_lifetimes_do_not_share():
    a = Interval("a", 100, 0, 2)
    b = Interval("b", 100, 1, 3)
    offsets, size = assign_offsets([a, b])
    assert sorted(offsets.values()) == [0, 128]
    assert size == 256


def test_largest_first_then_fill_the_gap():
    # big lives 0..4; two small ones live at different times and fit side by side after it
    big = Interval("big", 4096, 0, 4)
    s1 = Interval("s1", 64, 0, 1)
    s2 = Interval("s2", 64, 3, 4)
    s3 = Interval("s3", 64, 2, 2)
    offsets, size = assign_offsets([s1, s2, s3, big])
    assert offsets["big"] == 0
    assert offsets["s1"] == offsets["s2"] == offsets["s3"] == 4096
    assert size == 4096 + 64


def test_a_step_boundary_counts_as_overlap():
    # a kernel reads `a` and writes `b` in the same step: they must not share
    a = Interval("a", 64, 0, 1)
    b = Interval("b", 64, 1, 2)
    offsets, _ = assign_offsets([a, b])
    assert offsets["a"] != offsets["b"]


def test_the_best_of_several_orders():
    # largest first puts c (256) at 0, d beside it at 0, a above c, and b must go above a
    # (512 bytes); placing the long-lived a first lets b and c, then d, stack above it
    a = Interval("a", 128, 0, 3)
    b = Interval("b", 128, 2, 4)
    c = Interval("c", 256, 1, 1)
    d = Interval("d", 192, 4, 4)
    assert _place([a, b, c, d], ORDERS[0], False)[1] == 512
    assert _place([a, b, c, d], ORDERS[1], False)[1] == 448
    # by size class (c alone, then a, b, d: 128 to 255 bytes), the longest-lived first: c at
    # 0, a above it, b at 0 (after c), d above b: the peak of 384 live bytes (a and c)
    offsets, size = assign_offsets([a, b, c, d])
    check_plan([a, b, c, d], offsets)
    assert size == 384 == peak_live_bytes([a, b, c, d])
    assert assign_offsets([d, c, b, a]) == (offsets, size)  # the input order does not matter


def test_peak_live_bytes():
    ivs = [Interval("a", 64, 0, 1), Interval("b", 128, 1, 2), Interval("c", 64, 3, 3)]
    assert peak_live_bytes(ivs) == 192


def test_empty():
    assert assign_offsets([]) == ({}, 0)
    assert peak_live_bytes([]) == 0


intervals = st.lists(
    st.tuples(st.integers(0, 5000), st.integers(0, 20), st.integers(0, 20)),
    min_size=0, max_size=40,
).map(lambda xs: [Interval(f"b{k}", size, min(s, e), max(s, e)) for k, (size, s, e) in enumerate(xs)])


@settings(max_examples=300, deadline=None)
@given(intervals)
def test_invariants(ivs):
    offsets, size = assign_offsets(ivs)
    check_plan(ivs, offsets)  # aligned, simultaneously live buffers never overlap
    assert size % ALIGN == 0
    assert all(offsets[b.key] + b.size <= size for b in ivs)
    assert size >= peak_live_bytes(ivs) - 0  # never less than what is live at once
    # deterministic: same input, same plan, whatever the order of the input
    assert assign_offsets(list(ivs)) == (offsets, size)
    assert assign_offsets(list(reversed(ivs))) == (offsets, size)
    # never larger than any single order and placement tried
    assert all(size <= _place(ivs, order, fit)[1] for order in ORDERS for fit in (False, True))
