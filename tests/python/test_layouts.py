"""metile.ThreadLayout (seed 004) and ownership in traced kernels: arange(layout=),
convert_layout, layouts as constexprs, and the ownership errors at the user's line."""

import copy
import json
import pickle

import numpy as np
import pytest

import metile
from metile import ThreadLayout, disk_cache

X = np.zeros(64, np.float32)
TRANSPOSE = ThreadLayout((3, 4, 5, 0, 1, 2))


def line_of(marker):
    with open(__file__, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(marker)


# ---- the algebra ------------------------------------------------------------------------
def test_swapping_the_first_two_bits():
    layout = ThreadLayout((1, 0, 2, 3, 4))
    assert (layout.size, layout.thread_count, layout.elements_per_thread) == (32, 32, 1)
    swapped = [(t & ~3) | ((t & 1) << 1) | ((t >> 1) & 1) for t in range(32)]
    assert [layout.logical_index(t) for t in range(32)] == swapped
    assert [layout.owner(i) for i in range(32)] == swapped  # the swap is its own inverse
    assert all(layout.register(i) == 0 for i in range(32))


def test_striped_identity_with_four_registers():
    layout = ThreadLayout.identity(1024, 4)
    assert (layout.size, layout.thread_count, layout.elements_per_thread) == (1024, 256, 4)
    for t in range(256):
        for r in range(4):
            index = layout.logical_index(t, r)
            assert index == t + r * 256
            assert (layout.owner(index), layout.register(index)) == (t, r)


def test_four_adjacent_elements_per_thread():
    layout = ThreadLayout((8, 9, 0, 1, 2, 3, 4, 5, 6, 7), elements_per_thread=4)
    assert layout.thread_count == 256
    for t in range(256):
        assert [layout.logical_index(t, r) for r in range(4)] == [4 * t + r for r in range(4)]


def test_xor_mask_applies_to_the_logical_index():
    layout = ThreadLayout((0, 1, 2, 3, 4, 5), xor_mask=5)
    assert [layout.logical_index(t) for t in range(64)] == [t ^ 5 for t in range(64)]
    assert [layout.owner(t ^ 5) for t in range(64)] == list(range(64))


def test_every_layout_is_a_bijection():
    for layout in (TRANSPOSE, ThreadLayout((5, 0, 4, 1, 3, 2), 9, 2),
                   ThreadLayout((2, 0, 1), elements_per_thread=8)):
        held = [layout.logical_index(t, r) for t in range(layout.thread_count)
                for r in range(layout.elements_per_thread)]
        assert sorted(held) == list(range(layout.size))
        for index in range(layout.size):
            assert layout.logical_index(layout.owner(index), layout.register(index)) == index


def test_value_semantics():
    assert TRANSPOSE == ThreadLayout([3, 4, 5, 0, 1, 2])
    assert hash(TRANSPOSE) == hash(ThreadLayout((3, 4, 5, 0, 1, 2)))
    assert TRANSPOSE != ThreadLayout.identity(64)
    assert TRANSPOSE != (3, 4, 5, 0, 1, 2)
    assert len({TRANSPOSE, ThreadLayout((3, 4, 5, 0, 1, 2)), ThreadLayout.identity(64)}) == 2
    assert TRANSPOSE.bit_order == (3, 4, 5, 0, 1, 2)
    assert TRANSPOSE.xor_mask == 0
    assert repr(TRANSPOSE) == "ThreadLayout((3, 4, 5, 0, 1, 2), xor_mask=0, elements_per_thread=1)"
    assert repr(ThreadLayout((0,))) == "ThreadLayout((0,), xor_mask=0, elements_per_thread=1)"
    assert eval(repr(ThreadLayout((1, 0), 1, 2)), {"ThreadLayout": ThreadLayout}) == \
        ThreadLayout((1, 0), 1, 2)
    assert str(ThreadLayout.identity(1024, 4)) == "identity(1024 elements, 256 threads, 4 per thread)"


def test_layouts_pickle_and_copy_by_value():
    layout = ThreadLayout((5, 0, 4, 1, 3, 2), 9, 2)
    assert pickle.loads(pickle.dumps(layout)) == layout
    assert copy.deepcopy(layout) == layout


def test_layouts_are_immutable():
    with pytest.raises(AttributeError):
        TRANSPOSE.xor_mask = 1
    with pytest.raises(AttributeError):
        TRANSPOSE.extra = 1


@pytest.mark.parametrize("make, message", [
    (lambda: ThreadLayout((0, 0)), "bit_order must be a permutation of 0..2 - 1, but entry 0 "
                                   "is out of range or repeated"),
    (lambda: ThreadLayout((0, 2)), "entry 2 is out of range or repeated"),
    (lambda: ThreadLayout((0, 1), xor_mask=4), "xor_mask 4 must lie in [0, 4)"),
    (lambda: ThreadLayout((0, 1), elements_per_thread=3),
     "elements_per_thread 3 must be a power of two no larger than the size 4"),
    (lambda: ThreadLayout.identity(1000), "identity: the size 1000 must be a positive power of two"),
    (lambda: ThreadLayout.identity(64, 128),
     "elements_per_thread 128 must be a power of two no larger than the size 64"),
    (lambda: TRANSPOSE.owner(64), "index 64 is outside [0, 64)"),
    (lambda: TRANSPOSE.logical_index(64), "thread 64 is outside [0, 64)"),
    (lambda: TRANSPOSE.logical_index(0, 1), "register 1 is outside [0, 1)"),
])
def test_bad_input_is_a_value_error(make, message):
    with pytest.raises(ValueError) as caught:
        make()
    assert message in str(caught.value)
    assert str(caught.value).startswith("ThreadLayout: ")


def test_bit_orders_are_integers():
    with pytest.raises(TypeError):
        ThreadLayout(("a", "b"))


# ---- in kernels -------------------------------------------------------------------------
# The seed's transpose8, as written there (test_layout_lowering runs it end to end).
from test_layout_lowering import transpose8  # noqa: E402


def test_the_seed_transpose_traces_with_its_layout():
    source = np.zeros((2, 8, 8), np.float32)
    kernel = transpose8.trace(source, source.copy(), 2, OUTPUT_LAYOUT=TRANSPOSE)
    text = kernel.print()
    layout = "#layout<(3, 4, 5, 0, 1, 2), xor 0, ept 1>"
    assert f"convert_layout %" in text and f"{{layout = {layout}}} : tile<64xf32>" in text
    assert f"arange {{end = 64, layout = {layout}, start = 0}}" in text
    assert kernel.attrs["OUTPUT_LAYOUT"] == layout


def test_a_traced_layout_reads_back_from_its_text():
    source = np.zeros((1, 8, 8), np.float32)
    text = transpose8.trace(source, source.copy(), 1, OUTPUT_LAYOUT=TRANSPOSE).print()
    assert metile._core.Kernel.parse(text).print() == text


def test_each_layout_is_its_own_specialisation():
    source = np.zeros((1, 8, 8), np.float32)
    first = transpose8.trace(source, source.copy(), 1, OUTPUT_LAYOUT=TRANSPOSE).print()
    again = transpose8.trace(source, source.copy(), 1,
                             OUTPUT_LAYOUT=ThreadLayout((3, 4, 5, 0, 1, 2))).print()
    other = transpose8.trace(source, source.copy(), 1,
                             OUTPUT_LAYOUT=ThreadLayout((0, 1, 2, 3, 5, 4))).print()
    assert first == again
    assert other != first and "#layout<(0, 1, 2, 3, 5, 4)" in other
    assert transpose8.signature([source, source, 1, TRANSPOSE])[0] != \
        transpose8.signature([source, source, 1, ThreadLayout.identity(64)])[0]


def test_the_disk_cache_prints_a_global_layout_in_full():
    assert disk_cache._value_print(TRANSPOSE, set()) == repr(TRANSPOSE)


@metile.kernel
def layout_not_a_layout(x):
    metile.arange(0, 64, layout=(3, 4, 5, 0, 1, 2))  # not-a-layout


@metile.kernel
def layout_wrong_size(x):
    metile.arange(0, 32, layout=TRANSPOSE)  # wrong-size


@metile.kernel
def convert_not_a_layout(x):
    metile.convert_layout(metile.arange(0, 64), "transpose")  # convert-not-a-layout


@pytest.mark.parametrize("kernel, marker, rule", [
    (layout_not_a_layout, "not-a-layout", "arange: layout must be a metile.ThreadLayout, got tuple"),
    (layout_wrong_size, "wrong-size",
     "arange: the layout ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 threads, 1 per thread) owns "
     "64 elements but the tile has end - start = 32"),
    (convert_not_a_layout, "convert-not-a-layout",
     "convert_layout: layout must be a metile.ThreadLayout, got str"),
])
def test_misuse_names_the_line(kernel, marker, rule):
    with pytest.raises(metile.CompilationError) as caught:
        kernel.trace(X)
    assert (caught.value.file, caught.value.line) == (__file__, line_of(marker))
    assert rule in caught.value.rule


@metile.kernel
def mixed_owners(x, y):
    owned = metile.arange(0, 64, layout=TRANSPOSE)
    plain = metile.arange(0, 64)
    metile.store(y + plain, metile.load(x + owned))  # mixed-owners


@metile.kernel
def per_thread_scalar(x):
    owned = metile.arange(0, 64, layout=TRANSPOSE)
    metile.store(x + owned, (owned + metile.thread_id()).to("f32"))  # per-thread


def compile_error(kernel, *args):
    with pytest.raises(metile.CompilationError) as caught:
        kernel[(1,)].prepare(*args)
    return caught.value


def test_different_owners_are_named_at_the_line():
    e = compile_error(mixed_owners, X, X.copy())
    assert (e.file, e.line) == (__file__, line_of("mixed-owners"))
    assert "ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 threads, 1 per thread)" in e.rule
    assert "the implicit layout identity(64 elements, 64 threads, 1 per thread)" in e.rule
    assert "values with different owners combine only through convert_layout" in e.rule


def test_a_per_thread_scalar_is_not_a_broadcast():
    e = compile_error(per_thread_scalar, X)
    assert (e.file, e.line) == (__file__, line_of("per-thread"))
    assert "was built from a per-thread scalar" in e.rule and "has no owner" in e.rule


@metile.kernel
def round_trip(x, y, n, LAYOUT: metile.constexpr):
    offs = metile.arange(0, 64)
    there = metile.convert_layout(metile.load(x + offs, mask=offs < n), LAYOUT)
    back = metile.convert_layout(there, metile.ThreadLayout.identity(64))
    metile.store(y + offs, back * 2.0, mask=offs < n)


def test_a_conversion_and_its_inverse_cancel_before_planning(rng):
    x = rng.standard_normal(50).astype(np.float32)
    y = metile.Buffer.zeros(50)
    dispatch = round_trip[(1,)].prepare(x, y, 50, LAYOUT=TRANSPOSE)
    dispatch()
    np.testing.assert_array_equal(y.numpy(), x * 2)
    report = json.loads(dispatch.explain())
    optimizations = report["layout_optimizations"]
    assert optimizations["inverse_pairs_cancelled"] == 1
    assert optimizations["rewrites"][0]["rule"] == "inverse pair"
    passes = {p["name"]: p["changed"] for p in report["passes"]}
    assert passes["eliminate_redundant_conversions"] is True
    assert passes["check_ownership"] is False
