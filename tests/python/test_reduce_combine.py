"""metile.reduce with combine functions that are associative but not commutative, lowered as
the built-in reductions are (slots, SIMD shuffles, threadgroup partials): every level must keep
index order. Against sequential numpy references, on ragged lengths (padded with the combine's
identity), tiles smaller than the threadgroup and tiles over several SIMD groups."""

import numpy as np
import pytest

import metile as tl


@tl.jit
def affine(a1, b1, a2, b2):
    """x -> a * x + b, applying (a1, b1) first: not commutative."""
    return a1 * a2, b1 * a2 + b2


@tl.jit
def matmul2x2(p, q, r, s, t, u, v, w):
    """[[p, q], [r, s]] @ [[t, u], [v, w]]."""
    return p * t + q * v, p * u + q * w, r * t + s * v, r * u + s * w


@tl.jit
def argmax_combine(value1, index1, value2, index2):
    take_first = (value1 > value2) | ((value1 == value2) & (index1 < index2))
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)


def _affine_reference(a, b):
    h = 0.0
    for x, y in zip(a, b):
        h = x * h + y
    return h


@tl.jit
def affine_1d(a_ptr, b_ptr, out_ptr, any_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    inside = offs < n
    a = tl.load(a_ptr + offs, mask=inside, other=1.0)  # (1, 0): the identity pads
    b = tl.load(b_ptr + offs, mask=inside, other=0.0)
    _, h = tl.reduce((a, b), 0, affine)
    tl.store(out_ptr, h)
    tl.store(any_ptr, tl.reduce((b > 3) & inside, 0, lambda x, y: x | y).to(tl.int32))


@pytest.mark.parametrize("block,n", [(16, 9), (32, 29), (256, 200), (1024, 1000)])
def test_1d_affine_composition_keeps_index_order(block, n, rng):
    a = rng.choice(np.array([0.5, 1.0, -1.0, 2.0], np.float32), n)
    b = rng.integers(-4, 5, n).astype(np.float32)
    out, found = np.zeros(1, np.float32), np.zeros(1, np.int32)
    affine_1d[(1,)](a, b, out, found, n, BLOCK=block)
    np.testing.assert_allclose(out[0], _affine_reference(a, b), rtol=1e-5)
    assert found[0] == int((b > 3).any())


@tl.jit
def matrices_2d(m_ptr, out_ptr, M, N, AXIS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    at = (rows[:, None] * N + cols[None, :]) * 4
    # Padding is the identity matrix.
    p = tl.load(m_ptr + at, mask=inside, other=1)
    q = tl.load(m_ptr + at + 1, mask=inside, other=0)
    r = tl.load(m_ptr + at + 2, mask=inside, other=0)
    s = tl.load(m_ptr + at + 3, mask=inside, other=1)
    products = tl.reduce((p, q, r, s), AXIS, matmul2x2)
    line = cols if AXIS == 0 else rows
    for k in tl.static_range(4):
        tl.store(out_ptr + line * 4 + k, products[k], mask=line < (N if AXIS == 0 else M))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(4, 32, 3, 29), (64, 16, 50, 9), (16, 64, 9, 50),
                                   (32, 32, 32, 32)], ids=lambda s: "x".join(map(str, s)))
def test_2d_matrix_products_along_each_axis(axis, shape, rng):
    bm, bn, m, n = shape
    mats = rng.integers(0, 10, (m, n, 2, 2)).astype(np.uint32)
    lines = n if axis == 0 else m
    out = np.zeros((lines, 2, 2), np.uint32)
    matrices_2d[(1,)](mats, out, m, n, AXIS=axis, BM=bm, BN=bn)
    with np.errstate(over="ignore"):
        for line in range(lines):
            product = np.eye(2, dtype=np.uint32)
            for mat in (mats[:, line] if axis == 0 else mats[line]):
                product = product @ mat
            np.testing.assert_array_equal(out[line], product, err_msg=f"line {line}")


@tl.jit
def argmax_2d(x_ptr, value_ptr, index_ptr, M, N, AXIS: tl.constexpr, BM: tl.constexpr,
              BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=-float("inf"))
    index = tl.broadcast_to(rows[:, None] if AXIS == 0 else cols[None, :], (BM, BN))
    best, where = tl.reduce((x, index), AXIS, argmax_combine)
    line = cols if AXIS == 0 else rows
    valid = line < (N if AXIS == 0 else M)
    tl.store(value_ptr + line, best, mask=valid)
    tl.store(index_ptr + line, where, mask=valid)


@pytest.mark.parametrize("axis", [0, 1])
# 128 x 128 along axis 0: each column's 128 partials would fill 128 KiB of scratch, so they
# cross threadgroup memory in rounds of 16 columns.
@pytest.mark.parametrize("shape", [(8, 128, 5, 100), (128, 8, 100, 5), (128, 128, 120, 100)],
                         ids=lambda s: "x".join(map(str, s)))
def test_2d_tuple_argmax_takes_the_first_of_ties(axis, shape, rng):
    bm, bn, m, n = shape
    x = rng.integers(0, 4, (m, n)).astype(np.float32)  # many ties
    lines = n if axis == 0 else m
    values, indices = np.zeros(lines, np.float32), np.zeros(lines, np.int32)
    argmax_2d[(1,)](x, values, indices, m, n, AXIS=axis, BM=bm, BN=bn)
    np.testing.assert_array_equal(values, x.max(axis))
    np.testing.assert_array_equal(indices, x.argmax(axis))


@tl.jit
def captures_a_tile(x_ptr):
    offs = tl.arange(0, 32)
    x = tl.load(x_ptr + offs)
    tl.reduce(x, 0, lambda a, b: a + b + x)


def test_a_combine_that_uses_an_outside_tile_says_why():
    with pytest.raises(tl.CompilationError) as caught:
        captures_a_tile.trace(np.zeros(32, np.float32))
    assert ("metile.reduce: combine_fn combines scalars (one element of each input), but it "
            "returned the tile tile<32xf32>; it may not use tiles from outside it"
            in caught.value.rule)


def test_a_combine_in_a_kernel_with_explicit_layouts_says_what_to_use():
    @tl.kernel
    def explicit(x, out):
        offsets = tl.arange(0, 64, layout=tl.ThreadLayout.identity(64))
        total = tl.reduce(tl.load(x + offsets), 0, lambda a, b: a + b)
        tl.store(out, total)

    x = np.arange(64, dtype=np.float32)
    with pytest.raises(tl.NotSupportedError,
                       match=r"metile.reduce with a combine_fn is not supported in a kernel with "
                             r"explicit thread layouts; only sums reduce tiles there"):
        explicit[(1,)](x, np.zeros(1, np.float32))
