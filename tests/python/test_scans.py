"""cumsum and cumprod (Tile IR scan) of 1-D and 2-D tiles, forward and reverse, against numpy
on ragged sizes, on one SIMD group and several."""

import numpy as np
import pytest

import metile as tl


@tl.jit
def scan_1d(x_ptr, sum_ptr, prod_ptr, isum_ptr, n, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside, other=0.0)
    tl.store(sum_ptr + offs, tl.cumsum(x, 0, reverse=REVERSE), mask=inside)
    ones = tl.load(x_ptr + offs, mask=inside, other=1.0)
    tl.store(prod_ptr + offs, tl.cumprod(ones, reverse=REVERSE), mask=inside)
    tl.store(isum_ptr + offs, tl.cumsum(x.to(tl.int32), reverse=REVERSE), mask=inside)


def _reference(scan, x, axis=0, reverse=False):
    if not reverse:
        return scan(x, axis=axis)
    return np.flip(scan(np.flip(x, axis), axis=axis), axis)


# (BLOCK, n): inside one SIMD group, ragged over several, and several slots per thread.
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("block,n", [(32, 29), (256, 200), (2048, 1500)])
def test_1d_scans_match_numpy(block, n, reverse, rng):
    # Small integers keep the sums exact; values near 1 keep the products in range.
    x = rng.integers(-3, 4, n).astype(np.float32)
    near_one = rng.choice(np.array([0.5, 1.0, 2.0], np.float32), n)
    sums, prods, isums = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32)
    scan_1d[(1,)](x, sums, prods, isums, n, REVERSE=reverse, BLOCK=block)
    np.testing.assert_array_equal(sums, _reference(np.cumsum, x, reverse=reverse))
    np.testing.assert_array_equal(isums, _reference(np.cumsum, x.astype(np.int32),
                                                    reverse=reverse))
    prods_out = np.zeros(n, np.float32)
    scan_1d[(1,)](near_one, sums, prods_out, isums, n, REVERSE=reverse, BLOCK=block)
    np.testing.assert_allclose(prods_out, _reference(np.cumprod, near_one, reverse=reverse),
                               rtol=1e-6)


@tl.jit
def scan_2d(x_ptr, out_ptr, M, N, AXIS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=inside, other=0.0)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=AXIS), mask=inside)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(4, 32, 3, 29), (64, 64, 50, 61)],
                         ids=lambda s: "x".join(map(str, s)))
def test_2d_cumsum_matches_numpy(axis, shape, rng):
    bm, bn, m, n = shape
    x = rng.integers(-4, 5, (m, n)).astype(np.float32)
    out = np.zeros_like(x)
    scan_2d[(1,)](x, out, m, n, AXIS=axis, BM=bm, BN=bn)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=axis))
