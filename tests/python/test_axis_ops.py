"""Per-axis reductions (sum, max, min, argmax, argmin with axis and keep_dims), trans,
permute and reshape of 2-D tiles, Triton-style, against numpy on ragged shapes."""

import numpy as np
import pytest

import metile as tl

@tl.jit
def reduce_along(x_ptr, sum_ptr, max_ptr, min_ptr, argmax_ptr, argmin_ptr, M, N,
                 AXIS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + (rows[:, None] * N + cols[None, :]), mask=inside)
    low = tl.where(inside, x, -float("inf"))
    high = tl.where(inside, x, float("inf"))
    offs = rows if AXIS == 1 else cols
    valid = offs < (M if AXIS == 1 else N)
    tl.store(sum_ptr + offs, tl.sum(x, axis=AXIS), mask=valid)
    tl.store(max_ptr + offs, tl.max(low, axis=AXIS), mask=valid)
    tl.store(min_ptr + offs, tl.min(high, AXIS), mask=valid)
    tl.store(argmax_ptr + offs, tl.argmax(low, axis=AXIS), mask=valid)
    tl.store(argmin_ptr + offs, high.argmin(AXIS), mask=valid)


# (BM, BN, M, N): one SIMD group, several, and the reduced axis across SIMD groups.
SHAPES = [(4, 32, 3, 29), (32, 4, 27, 3), (64, 64, 50, 61), (8, 128, 5, 100)]


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_reductions_along_an_axis_match_numpy(axis, shape, rng):
    bm, bn, m, n = shape
    # Small integers make every sum exact and give argmax/argmin ties to break.
    x = rng.integers(-4, 5, (m, n)).astype(np.float32)
    size = n if axis == 0 else m
    outs = [np.zeros(size, np.float32) for _ in range(3)] + [np.zeros(size, np.int32)
                                                             for _ in range(2)]
    reduce_along[(1,)](x, *outs, m, n, AXIS=axis, BM=bm, BN=bn)
    for out, reference in zip(outs, [np.sum, np.max, np.min, np.argmax, np.argmin]):
        np.testing.assert_array_equal(out, reference(x, axis=axis))


@tl.jit
def softmax_rows(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=inside, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=1, keep_dims=True))
    tl.store(out_ptr + offs, e / tl.sum(e, axis=1)[:, None], mask=inside)


def test_row_softmax_with_keep_dims(rng):
    m, n = 45, 50
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.zeros_like(x)
    softmax_rows[(tl.cdiv(m, 16),)](x, out, m, n, BM=16, BN=64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@tl.jit
def column_sums_f16(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + (rows[:, None] * N + cols[None, :]),
                mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
    tl.store(out_ptr + cols, tl.sum(x, axis=0, keep_dims=True).reshape(BN), mask=cols < N)


def test_f16_column_sum_accumulates_in_f32(rng):
    m, n = 30, 13
    x = rng.integers(0, 4000, (m, n)).astype(np.float16)
    out = np.zeros(n, np.float32)
    column_sums_f16[(1,)](x, out, m, n, BM=32, BN=16)
    np.testing.assert_array_equal(out, x.astype(np.float32).sum(axis=0))


@tl.jit
def transpose(x_ptr, out_ptr, M, N, FORM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + (rows[:, None] * N + cols[None, :]),
                mask=(rows[:, None] < M) & (cols[None, :] < N), other=0)
    if FORM == "trans":
        t = tl.trans(x)
    elif FORM == "permute":
        t = tl.permute(x, (1, 0))
    else:
        t = x.T
    # t is [BN, BM]: element (j, i) of the output is x[i, j].
    tl.store(out_ptr + (cols[:, None] * M + rows[None, :]), t,
             mask=(cols[:, None] < N) & (rows[None, :] < M))


# One SIMD group (shuffles), several (scratch), and a tile smaller than the threadgroup.
@pytest.mark.parametrize("form, shape", [("trans", (4, 8, 3, 7)), ("permute", (32, 4, 30, 3)),
                                         ("T", (64, 32, 60, 29)), ("trans", (2, 4, 2, 3))])
def test_transpose_matches_numpy(form, shape, rng):
    bm, bn, m, n = shape
    x = rng.integers(-100, 100, (m, n)).astype(np.int32)
    out = np.zeros((n, m), np.int32)
    transpose[(1,)](x, out, m, n, FORM=form, BM=bm, BN=bn)
    np.testing.assert_array_equal(out, x.T)


@tl.jit
def reshape_rows(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM * BN)
    x = tl.reshape(tl.load(x_ptr + offs), (BM, BN))
    sums = tl.sum(x, axis=1)
    flat = tl.view(x * sums[:, None], BM * BN)
    tl.store(out_ptr + offs, flat)


def test_reshape_keeps_the_row_major_order(rng):
    x = rng.integers(-3, 4, 256).astype(np.float32)
    out = np.zeros_like(x)
    reshape_rows[(1,)](x, out, BM=8, BN=32)
    rows = x.reshape(8, 32)
    np.testing.assert_array_equal(out, (rows * rows.sum(axis=1, keepdims=True)).reshape(-1))
