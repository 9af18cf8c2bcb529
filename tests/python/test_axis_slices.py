"""Row statistics stay with their rows: the result of an axis reduction whose reduced elements
lie in one SIMD group takes the slice of its source's layout (docs/lowering.md, "Axis
slices"), replicated over the lanes that held the row, so the reduction and the broadcast
back over the row need no threadgroup memory. Each kernel runs against numpy, ragged shapes
included."""

import numpy as np
import pytest

import metile


@metile.jit
def row_softmax(X, Y, Row_max, M, N, BLOCK_M: metile.constexpr, BLOCK_N: metile.constexpr):
    rows = metile.program_id(0) * BLOCK_M + metile.arange(0, BLOCK_M)
    cols = metile.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = metile.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=-float("inf"))
    m = metile.max(x, 1)
    p = metile.exp(x - m[:, None])
    s = metile.sum(p, 1)
    metile.store(Y + rows[:, None] * N + cols[None, :], p / s[:, None], mask=mask)
    metile.store(Row_max + rows, m, mask=rows < M)


@metile.jit
def column_sums(X, Out, M, N, BLOCK_M: metile.constexpr, BLOCK_N: metile.constexpr):
    cols = metile.program_id(0) * BLOCK_N + metile.arange(0, BLOCK_N)
    rows = metile.arange(0, BLOCK_M)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = metile.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    total = metile.sum(x, 0)
    metile.store(Out + cols, total - metile.max(x, 0), mask=cols < N)


@metile.jit
def online_softmax_denominator(X, Out, M, N, BLOCK_M: metile.constexpr,
                               BLOCK_N: metile.constexpr):
    """log(sum(exp(x))) per row over BLOCK_N-column blocks, the running max and sum carried."""
    rows = metile.program_id(0) * BLOCK_M + metile.arange(0, BLOCK_M)
    m_i = metile.zeros([BLOCK_M], dtype=metile.float32) - float("inf")
    l_i = metile.zeros([BLOCK_M], dtype=metile.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + metile.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = metile.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=-float("inf"))
        m_new = metile.maximum(m_i, metile.max(x, 1))
        l_i = l_i * metile.exp(m_i - m_new) + metile.sum(metile.exp(x - m_new[:, None]), 1)
        m_i = m_new
    metile.store(Out + rows, m_i + metile.log(l_i), mask=rows < M)


def replicated(dispatch):
    return [v for v in dispatch.execution_report["value_layouts"] if "replicated" in v]


@pytest.mark.parametrize("shape", [(16, 32), (37, 29), (5, 1)])
def test_row_softmax_keeps_row_statistics_in_the_rows_lanes(shape, rng):
    m, n = shape
    x = rng.standard_normal((m, n)).astype(np.float32)
    y = np.full_like(x, np.nan)
    row_max = np.full(m, np.nan, np.float32)
    dispatch = row_softmax[(metile.cdiv(m, 16),)].prepare(x, y, row_max, m, n, BLOCK_M=16,
                                                           BLOCK_N=32)
    dispatch()
    want = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, want / want.sum(1, keepdims=True), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(row_max, x.max(1))
    report = dispatch.execution_report
    assert replicated(dispatch), report["value_layouts"]
    # Both reductions and both broadcasts stay in registers and lanes.
    assert report["threadgroup_bytes"] == 0 and report["allocations"] == []


def test_column_reductions_take_the_columns_slice(rng):
    m, n = 29, 70
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    dispatch = column_sums[(metile.cdiv(n, 4),)].prepare(x, out, m, n, BLOCK_M=32, BLOCK_N=4)
    dispatch()
    np.testing.assert_allclose(out, x.sum(0) - x.max(0), rtol=1e-5, atol=1e-5)
    assert replicated(dispatch)
    assert dispatch.execution_report["threadgroup_bytes"] == 0


@pytest.mark.parametrize("shape", [(16, 96), (21, 45)])
def test_carried_row_statistics_keep_the_slice_across_iterations(shape, rng):
    m, n = shape
    x = (rng.standard_normal((m, n)) * 4).astype(np.float32)
    out = np.full(m, np.nan, np.float32)
    dispatch = online_softmax_denominator[(metile.cdiv(m, 16),)].prepare(x, out, m, n,
                                                                         BLOCK_M=16, BLOCK_N=32)
    dispatch()
    top = x.max(1)
    np.testing.assert_allclose(out, top + np.log(np.exp(x - top[:, None]).sum(1)), rtol=1e-5)
    assert replicated(dispatch)
    assert dispatch.execution_report["threadgroup_bytes"] == 0
