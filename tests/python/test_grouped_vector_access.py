"""Grouped vector accesses from Python: a thread that loads and stores four adjacent
elements gets one packed access each (execution_report counts them), with ragged lengths and
shifted origins exact against numpy; Schedule(vector_width=1) keeps scalar accesses."""

import numpy as np
import pytest

import metile


@metile.kernel(num_threads=64)
def scale4(x, out, n, off):
    first = metile.program_id(0) * 256 + metile.thread_id(0) * 4 + off
    values = [metile.load(x + (first + r), first + r < n) for r in range(4)]
    for r in range(4):
        metile.store(out + (first + r), values[r] * 2 + 1, first + r < n)


def run(x, off, schedule=None):
    n = x.size
    out = np.full(n, -7, x.dtype)
    grid = (metile.cdiv(n - off, 256),)
    scale4[grid](x, out, n, off, SCHEDULE=schedule)
    report = scale4[grid].prepare(x, out, n, off, SCHEDULE=schedule).execution_report
    return out, report


@pytest.mark.parametrize("np_dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n, off", [(1024, 0), (1000, 1), (1003, 3), (5, 2)])
def test_packed_accesses_match_numpy(np_dtype, n, off):
    x = (np.arange(n) % 200 - 100).astype(np_dtype)
    out, report = run(x, off)
    expected = np.where(np.arange(n) < off, -7, 2 * x.astype(np.float32) + 1).astype(np_dtype)
    np.testing.assert_array_equal(out, expected)
    assert (report["grouped_loads"], report["grouped_stores"]) == (1, 1)


def test_vector_width_one_keeps_scalar_accesses():
    x = np.arange(300, dtype=np.float32)
    out, report = run(x, 1, metile.Schedule(vector_width=1))
    np.testing.assert_array_equal(out[1:], 2 * x[1:] + 1)
    assert (report["grouped_loads"], report["grouped_stores"]) == (0, 0)


def test_vector_width_four_cannot_be_forced():
    with pytest.raises(metile.NotSupportedError, match="vector_width=4 cannot be forced"):
        run(np.zeros(8, np.float32), 0, metile.Schedule(vector_width=4))


# Masks as bounds (docs/lowering.md, "The guard"): a window lo <= i < hi of each row, written
# both ways round (c >= lo, hi > c) beside the row's own mask, whose guard tests each group's
# first lower bound and last upper bound; with the window's edges at every offset within a
# group, some groups hold their masks only in part and must take the scalar fallback, element
# by element.
@metile.kernel
def window(x, out, rows, cols, lo, hi, BLOCK: metile.constexpr):
    r = metile.program_id(0)
    c = metile.arange(0, BLOCK)
    inside = (r < rows) & (c >= lo) & (hi > c)
    v = metile.load(x + r * cols + c, inside, other=-3.0)
    metile.store(out + r * cols + c, v * 2, c < cols)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float16])
@pytest.mark.parametrize("lo, hi", [(0, 256), (1, 255), (3, 253), (5, 6), (8, 249), (7, 7)])
def test_a_masked_window_matches_numpy_at_every_edge(np_dtype, lo, hi):
    rows, cols = 3, 256
    x = (np.arange(rows * cols) % 97 - 48).astype(np_dtype)
    out = np.full(rows * cols, 5, np_dtype)
    window[(rows,)](x, out, rows, cols, lo, hi, BLOCK=256)
    c = np.arange(cols)[None, :].repeat(rows, 0).ravel()
    expected = np.where((c >= lo) & (c < hi), x.astype(np.float32), -3.0) * 2
    np.testing.assert_array_equal(out, expected.astype(np_dtype))
    report = window[(rows,)].prepare(x, out, rows, cols, lo, hi, BLOCK=256).execution_report
    assert report["grouped_loads"] > 0


@metile.kernel
def wrapped_copy(x, out, n, BLOCK: metile.constexpr):
    offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + offs, metile.load(x + offs % n))


@pytest.mark.parametrize("n", [5, 37, 64, 100, 300])
def test_indices_modulo_a_runtime_size_group_and_wrap_correctly(n):
    # offs % n (Triton's `(pid * BLOCK + arange) % M`): runs of offsets group into vectors,
    # and a run that crosses a multiple of n fails the packed path's check and reads element
    # by element.
    x = np.arange(n, dtype=np.float32) * 1.5 - 7.0
    out = np.zeros(256, np.float32)
    dispatch = wrapped_copy[(2,)].prepare(x, out, n, BLOCK=128)
    dispatch()
    np.testing.assert_array_equal(out, x[np.arange(256) % n])
    assert dispatch.execution_report["grouped_loads"] >= 1
