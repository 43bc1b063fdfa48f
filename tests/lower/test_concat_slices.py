"""Concatenation without copies (lower/concat_slices.py): which concatenations are
dropped, where their pieces are written, and the cases refused (the copy kept). The
values of the same modules are checked against XLA in tests/ops/test_concat_slices.py."""
from aotc.driver import frontend, generate
from aotc.lower.memory_plan import Interval, check_plan
from aotc.options import CompileOptions
from tests.ops.test_concat_slices import CASES


def _generated(tmp_path, name):
    p = tmp_path / "m.hlo"
    p.write_text(CASES[name][0])
    return generate(frontend(str(p)), "libm", CompileOptions())


def _program(tmp_path, name):
    return _generated(tmp_path, name).lowered.program


def _kernels(prog):
    return [k.cname for k in prog.kernels]


def _alias(prog):
    return {s.hlo: (prog.slot(s.alias_of).hlo, s.offset) for s in prog.slots if s.place == "alias"}


def test_chain_writes_every_piece_in_place(tmp_path):
    prog = _program(tmp_path, "concat_slices_chain")
    assert "k_c1" not in _kernels(prog) and "k_c2" not in _kernels(prog)
    # c1 (a prefix of c2) passes its range on to its own pieces
    assert _alias(prog) == {"y1": ("c2", 0), "e1": ("c2", 96 * 128 * 4), "c1": ("c2", 0),
                            "y2": ("c2", 192 * 128 * 4)}
    c2 = next(s for s in prog.slots if s.hlo == "c2")
    # the block buffer is live from the first piece written to the last read of any view
    assert c2.live == (0, _kernels(prog).index("k_y3"))


def test_conv_and_reduce_pieces_behind_a_unit_dimension(tmp_path):
    prog = _program(tmp_path, "concat_slices_conv_reduce")
    assert "k_cat" not in _kernels(prog)
    assert _alias(prog) == {"cv": ("cat", 0), "rd": ("cat", 32 * 32 * 16 * 4)}


def test_dense_block_is_one_buffer(tmp_path):
    prog = _program(tmp_path, "concat_slices_dense_block")
    ks = _kernels(prog)
    # c2, read once, is fused into its BatchNorm; c1 is the block buffer; c0 (a max pool's
    # output is no strided writer) is copied into it once, rows 48 floats apart
    assert "k_c1" not in ks and "k_c0" in ks
    assert _alias(prog) == {"c0": ("c1", 0), "y2": ("c1", 32 * 4)}
    g = _generated(tmp_path, "concat_slices_dense_block")
    src = "".join(t for t in g.c_parts if isinstance(t, str))
    assert "s_y2, 48, " in src  # the convolution's rows, 48 apart
    assert "aotc_vf_store(&s_c0[i1 * 720 + i2 * 48 + i3], v_c0);" in src  # both pieces in lanes


def test_channel_pieces_of_a_loop_kernel_and_a_convolution(tmp_path):
    prog = _program(tmp_path, "concat_slices_channels")
    ks = _kernels(prog)
    assert "k_c" not in ks and "k_c3" in ks  # c3's reduce piece cannot write rows apart
    assert _alias(prog) == {"t": ("c", 0), "y": ("c", 16 * 4)}


def test_refusals_keep_the_copy(tmp_path):
    minor = _program(tmp_path, "concat_slices_minor")
    assert "k_c" in _kernels(minor) and not _alias(minor)  # a fusion (its exp piece is fused)
    rp = _program(tmp_path, "concat_slices_result_param")
    assert {"k_c1", "k_c2"} <= set(_kernels(rp)) and not _alias(rp)  # a result, a parameter
    root = _program(tmp_path, "concat_slices_root")
    assert "k_c" in _kernels(root) and not _alias(root)  # the concatenation is the result
    twice = _program(tmp_path, "concat_slices_twice")
    # c3 = [a, b] is decided first (outermost last in the schedule); c1 = [a, a] and
    # c2 = [b, a] keep their copies, since a and b are pieces of c3 already
    assert {"k_c1", "k_c2"} <= set(_kernels(twice)) and "k_c3" not in _kernels(twice)
    assert _alias(twice) == {"a": ("c3", 0), "b": ("c3", 64 * 96 * 4)}


def test_pieces_print_as_offsets_of_their_buffer(tmp_path):
    g = _generated(tmp_path, "concat_slices_chain")
    src = "".join(t for t in g.c_parts if isinstance(t, str))
    assert "float* const s_e1 = (float*)((unsigned char*)s_c2 + 49152);" in src
    assert "k_c1(" not in src and "k_c2(" not in src
    assert src == "".join(t for t in _generated(tmp_path, "concat_slices_chain").c_parts if isinstance(t, str))


def test_plan_keeps_live_buffers_apart(tmp_path):
    for name in CASES:
        prog = _program(tmp_path, name)
        ivs = [Interval(s.cname, s.nbytes, *s.live) for s in prog.slots if s.place in ("arena", "scratch")]
        check_plan(ivs, {s.cname: s.offset for s in prog.slots if s.place in ("arena", "scratch")})


def test_winograd_convolutions_keep_the_copy(tmp_path):
    # a convolution run by Winograd writes dense tiles: no strided piece
    p = tmp_path / "m.hlo"
    p.write_text(CASES["concat_slices_dense_block"][0])
    prog = generate(frontend(str(p)), "libm", CompileOptions(conv_algorithm="winograd2")).lowered.program
    assert "k_c1" in _kernels(prog) and "y2" not in _alias(prog)
