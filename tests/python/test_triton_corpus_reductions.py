"""The Triton corpus's reductions, scans, atomics and sorting (tests/python/triton_corpus/):
row and column sums, argmax, cumsum, a linear recurrence by associative scan, histograms,
global max/min by atomics, split-K accumulation, sorting and top-k, Welford mean/variance,
segment sums and L2 normalisation, each run with only the import renamed
(`import metile as triton`, `import metile as tl`) on the default device and checked against
numpy, ragged shapes included."""

import ml_dtypes
import numpy as np
import pytest

import metile
from triton_corpus.load import load, on_device, to_numpy

F16, BF16 = np.float16, ml_dtypes.bfloat16


def corpus(name):
    module, edits = load(name, "metile")
    assert edits == []  # the Triton text, as written
    return module


def tolerance(dtype):
    return {np.float32: 1e-5, F16: 2e-3, BF16: 1e-2}[dtype]


# --- sum_rows_cols ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("shape", [(37, 70), (8, 16), (50, 129)], ids=["ragged", "whole",
                                                                       "wide"])
def test_row_and_column_sums(dtype, shape, rng):
    module = corpus("sum_rows_cols")
    m, n = shape
    x = rng.standard_normal((m, n)).astype(dtype)
    want_rows = x.astype(np.float64).sum(1)
    want_cols = x.astype(np.float64).sum(0)
    rows, cols = np.full(m, np.nan, np.float32), np.full(n, np.nan, np.float32)
    xd, rows_d, cols_d = on_device(x, rows, cols)
    module.row_sum_kernel[(metile.cdiv(m, 16),)](xd, rows_d, m, n, n, 1, BLOCK_M=16,
                                                  BLOCK_N=32)
    grid = lambda META: (metile.cdiv(n, META["BLOCK_N"]),)  # noqa: E731
    module.col_sum_kernel[grid](xd, cols_d, m, n, n, 1, BLOCK_M=8, BLOCK_N=32)
    np.testing.assert_allclose(to_numpy(rows_d), want_rows, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(to_numpy(cols_d), want_cols, rtol=1e-5, atol=1e-4)


# --- argmax ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("shape", [(13, 300), (4, 64)], ids=["ragged", "whole"])
def test_argmax_in_chunks(dtype, shape, rng):
    module = corpus("argmax")
    m, n = shape
    # Few distinct values: many ties, within a chunk and across chunks.
    x = rng.integers(-20, 20, (m, n)).astype(dtype)
    values, index = np.full(m, np.nan, np.float32), np.full(m, -1, np.int32)
    index_row = np.full(m, -1, np.int32)
    xd, vd, idd, irow = on_device(x, values, index, index_row)
    module.argmax_kernel[(metile.cdiv(m, 8),)](xd, vd, idd, m, n, n, BLOCK_M=8, BLOCK_N=32)
    module.argmax_row_kernel[(m,)](xd, irow, n, n, BLOCK_N=64)
    want = np.argmax(x.astype(np.float32), axis=1)  # the first of equal maxima
    np.testing.assert_array_equal(to_numpy(idd), want)
    np.testing.assert_array_equal(to_numpy(irow), want)
    np.testing.assert_array_equal(to_numpy(vd), x.astype(np.float32).max(1))


# --- cumsum ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("shape", [(21, 45), (16, 64)], ids=["ragged", "whole"])
def test_cumsum_of_rows(dtype, shape, rng):
    module = corpus("cumsum")
    m, n = shape
    x = rng.standard_normal((m, n)).astype(dtype)
    out = np.full((m, n), np.nan, dtype)
    xd, od = on_device(x, out)
    block_n = 1 << (n - 1).bit_length()
    module.cumsum_rows_kernel[(metile.cdiv(m, 8),)](xd, od, m, n, n, n, BLOCK_M=8,
                                                     BLOCK_N=block_n)
    want = np.cumsum(x.astype(np.float64), axis=1)
    tol = tolerance(dtype) * 4
    np.testing.assert_allclose(to_numpy(od).astype(np.float32), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [1000, 256, 1], ids=["ragged", "whole", "one"])
def test_cumsum_long_vector_with_carry(n, rng):
    module = corpus("cumsum")
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    xd, od = on_device(x, out)
    module.cumsum_long_kernel[(1,)](xd, od, n, BLOCK=128)
    np.testing.assert_allclose(to_numpy(od), np.cumsum(x.astype(np.float64)), rtol=1e-4,
                               atol=1e-4)


# --- linear_recurrence -----------------------------------------------------------------

def recurrence_reference(a, b):
    h = np.zeros_like(a, dtype=np.float64)
    state = np.zeros(a.shape[0])
    for t in range(a.shape[1]):
        state = a[:, t].astype(np.float64) * state + b[:, t]
        h[:, t] = state
    return h


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["f32", "bf16"])
@pytest.mark.parametrize("shape", [(11, 50), (8, 32)], ids=["ragged", "whole"])
def test_linear_recurrence_scan(dtype, shape, rng):
    module = corpus("linear_recurrence")
    c, length = shape
    a = rng.uniform(0.5, 1.0, (c, length)).astype(dtype)
    b = rng.standard_normal((c, length)).astype(dtype)
    h = np.full((c, length), np.nan, np.float32)
    ad, bd, hd = on_device(a, b, h)
    block_l = 1 << (length - 1).bit_length()
    module.linear_recurrence_kernel[(metile.cdiv(c, 4),)](ad, bd, hd, c, length, length,
                                                          BLOCK_D=4, BLOCK_L=block_l)
    want = recurrence_reference(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(to_numpy(hd), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("length", [300, 128], ids=["ragged", "whole"])
def test_linear_recurrence_in_chunks(length, rng):
    module = corpus("linear_recurrence")
    c = 3
    a = rng.uniform(0.8, 1.0, (c, length)).astype(np.float32)
    b = rng.standard_normal((c, length)).astype(np.float32)
    h = np.full((c, length), np.nan, np.float32)
    ad, bd, hd = on_device(a, b, h)
    module.linear_recurrence_chunked_kernel[(c,)](ad, bd, hd, length, length, BLOCK_L=64)
    np.testing.assert_allclose(to_numpy(hd), recurrence_reference(a, b), rtol=1e-4,
                               atol=1e-4)


# --- histogram -------------------------------------------------------------------------

@pytest.mark.parametrize("n,bins", [(3001, 8), (1024, 16)], ids=["ragged", "whole"])
def test_histogram_by_atomic_add(n, bins, rng):
    module = corpus("histogram")
    lo, hi = -2.0, 6.0
    # Values well inside their bins, so that no rounding moves one across an edge.
    k = rng.integers(0, bins, n)
    x = (lo + (k + rng.uniform(0.1, 0.9, n)) * (hi - lo) / bins).astype(np.float32)
    hist = np.zeros(bins, np.int32)
    xd, hd = on_device(x, hist)
    module.histogram_atomic_kernel[(metile.cdiv(n, 128),)](xd, hd, n, lo, hi, NUM_BINS=bins,
                                                           BLOCK=128)
    np.testing.assert_array_equal(to_numpy(hd), np.bincount(k, minlength=bins))


@pytest.mark.parametrize("n,bins", [(1000, 16), (256, 8)], ids=["ragged", "whole"])
def test_histogram_by_tl_histogram(n, bins, rng):
    # tl.histogram counts a block's values per bin; the padding's zeros are taken back from
    # bin 0 and the blocks' counts added atomically.
    module = corpus("histogram")
    x = rng.integers(0, bins, n).astype(np.int32)
    hist = np.zeros(bins, np.int32)
    xd, hd = on_device(x, hist)
    module.histogram_block_kernel[(metile.cdiv(n, 128),)](xd, hd, n, NUM_BINS=bins, BLOCK=128)
    np.testing.assert_array_equal(to_numpy(hd), np.bincount(x, minlength=bins))


# --- atomic_max ------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2000, 512], ids=["ragged", "whole"])
def test_global_max_min_by_atomics(n, rng):
    module = corpus("atomic_max")
    x = rng.integers(-10**6, 10**6, n).astype(np.int32)
    vmax, vmin = np.full(1, -2**31, np.int32), np.full(1, 2**31 - 1, np.int32)
    xd, maxd, mind = on_device(x, vmax, vmin)
    module.max_min_i32_kernel[(metile.cdiv(n, 128),)](xd, maxd, mind, n, BLOCK=128)
    assert to_numpy(maxd)[0] == x.max() and to_numpy(mind)[0] == x.min()


@pytest.mark.parametrize("n", [2000, 256], ids=["ragged", "whole"])
def test_absmax_by_float_atomic_max(n, rng):
    module = corpus("atomic_max")
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    out = np.zeros(1, np.float32)
    xd, outd = on_device(x, out)
    module.absmax_f32_kernel[(metile.cdiv(n, 128),)](xd, outd, n, BLOCK=128)
    assert to_numpy(outd)[0] == np.abs(x).max()


# --- split_k_reduce --------------------------------------------------------------------

def strides(x):
    return [s // x.itemsize for s in x.strides]


@pytest.mark.parametrize("shape,split_k", [((37, 45, 150), 4), ((32, 32, 64), 2),
                                            ((20, 17, 33), 1)],
                         ids=["ragged", "whole", "no_split"])
def test_split_k_matmul_by_atomic_add(shape, split_k, rng):
    module = corpus("split_k_reduce")
    m, n, k = shape
    a = rng.standard_normal((m, k)).astype(F16)
    b = rng.standard_normal((k, n)).astype(F16)
    c = np.zeros((m, n), np.float32)
    ad, bd, cd = on_device(a, b, c)
    def grid(META):
        return (metile.cdiv(m, META["BLOCK_M"]) * metile.cdiv(n, META["BLOCK_N"]),
                META["SPLIT_K"])

    module.splitk_matmul_kernel[grid](ad, bd, cd, m, n, k, *strides(a), *strides(b),
                                      *strides(c), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16,
                                      SPLIT_K=split_k)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(to_numpy(cd), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape", [(37, 300), (16, 256)], ids=["ragged", "whole"])
def test_split_k_row_sum_by_atomic_add(shape, rng):
    module = corpus("split_k_reduce")
    m, k = shape
    x = rng.standard_normal((m, k)).astype(np.float32)
    out = np.zeros(m, np.float32)
    xd, od = on_device(x, out)
    module.splitk_row_sum_kernel[(metile.cdiv(m, 16), metile.cdiv(k, 64))](
        xd, od, m, k, k, BLOCK_M=16, BLOCK_K=64)
    np.testing.assert_allclose(to_numpy(od), x.astype(np.float64).sum(1), rtol=1e-5,
                               atol=1e-4)


# --- sort ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_sort_rows(dtype, descending, rng):
    module = corpus("sort")
    m, n = 19, 45  # ragged rows and columns
    x = rng.standard_normal((m, n)).astype(dtype)
    x[0, :10] = x[0, 10]  # equal keys
    out = np.zeros_like(x)
    xd, od = on_device(x, out)
    module.sort_rows_kernel[(metile.cdiv(m, 4),)](xd, od, m, n, n, n, BLOCK_M=4, BLOCK_N=64,
                                                  DESCENDING=descending)
    want = np.sort(x, axis=1)
    if descending:
        want = want[:, ::-1]
    np.testing.assert_array_equal(to_numpy(od), want)


@pytest.mark.parametrize("n,k", [(100, 5), (64, 16)], ids=["ragged", "whole"])
def test_topk_by_sorting(n, k, rng):
    module = corpus("sort")
    m = 6
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.full((m, k), np.nan, np.float32)
    xd, od = on_device(x, out)
    module.topk_kernel[(m,)](xd, od, n, n, k, K=k, BLOCK_N=1 << (n - 1).bit_length())
    np.testing.assert_array_equal(to_numpy(od), -np.sort(-x, axis=1)[:, :k])


# --- mean_var --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["f32", "bf16"])
@pytest.mark.parametrize("shape,correction", [((13, 1000), 1), ((8, 256), 0)],
                         ids=["ragged", "whole"])
def test_welford_var_mean(dtype, shape, correction, rng):
    module = corpus("mean_var")
    m, n = shape
    x = (rng.standard_normal((m, n)) * 3 + 5).astype(dtype)
    var, mean = np.full(m, np.nan, np.float32), np.full(m, np.nan, np.float32)
    xd, vd, md = on_device(x, var, mean)
    module.var_mean_welford_kernel[(metile.cdiv(m, 4),)](xd, vd, md, m, n, correction,
                                                         BLOCK_M=4, BLOCK_N=64)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(to_numpy(md), x64.mean(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(vd), x64.var(1, ddof=correction), rtol=1e-4)


# --- segment_sum -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("shape", [(300, 45, 7), (128, 32, 4)], ids=["ragged", "whole"])
def test_segment_sum_by_atomic_add(dtype, shape, rng):
    module = corpus("segment_sum")
    n, d, segments = shape
    values = rng.standard_normal((n, d)).astype(dtype)
    keys = rng.integers(0, segments, n).astype(np.int32)
    out = np.zeros((segments, d), np.float32)
    vd, kd, od = on_device(values, keys, out)
    module.segment_sum_kernel[(metile.cdiv(n, 16),)](vd, kd, od, n, d, d, d, BLOCK_R=16,
                                                     BLOCK_D=32)
    want = np.zeros((segments, d))
    np.add.at(want, keys, values.astype(np.float64))
    np.testing.assert_allclose(to_numpy(od), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape", [(21, 45), (16, 32)], ids=["ragged", "whole"])
def test_row_xor_sum_and_reduce_max(shape, rng):
    module = corpus("segment_sum")
    m, n = shape
    x = rng.integers(-2**31, 2**31 - 1, (m, n), dtype=np.int64).astype(np.int32)
    xor, vmax = np.zeros(m, np.int32), np.zeros(m, np.int32)
    xd, xo, mo = on_device(x, xor, vmax)
    module.row_xor_max_kernel[(metile.cdiv(m, 8),)](xd, xo, mo, m, n, n, BLOCK_M=8,
                                                    BLOCK_N=1 << (n - 1).bit_length())
    np.testing.assert_array_equal(to_numpy(xo), np.bitwise_xor.reduce(x, axis=1))
    np.testing.assert_array_equal(to_numpy(mo), x.max(1))


# --- l2_norm ---------------------------------------------------------------------------

def l2_reference(x, eps):
    x = x.astype(np.float64)
    norm = np.sqrt((x * x).sum(-1, keepdims=True))
    return x / np.maximum(norm, eps), norm[:, 0]


@pytest.mark.parametrize("dtype", [np.float32, F16, BF16], ids=["f32", "f16", "bf16"])
def test_l2_norm_rows(dtype, rng):
    module = corpus("l2_norm")
    m, n = 23, 77
    x = rng.standard_normal((m, n)).astype(dtype)
    x[3] = 0  # a zero row: the eps keeps it finite
    y = np.full((m, n), np.nan, dtype)
    xd, yd = on_device(x, y)
    module.l2_norm_kernel[(m,)](xd, yd, n, n, n, 1e-12, BLOCK_N=128)
    want, _ = l2_reference(x, 1e-12)
    tol = tolerance(dtype)
    np.testing.assert_allclose(to_numpy(yd).astype(np.float32), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["f32", "bf16"])
def test_l2_norm_long_rows(dtype, rng):
    module = corpus("l2_norm")
    m, n = 5, 1000
    x = rng.standard_normal((m, n)).astype(dtype)
    y, norm = np.full((m, n), np.nan, dtype), np.full(m, np.nan, np.float32)
    xd, yd, nd = on_device(x, y, norm)
    module.l2_norm_long_kernel[(m,)](xd, yd, nd, n, n, n, 1e-6, BLOCK_N=128)
    want, want_norm = l2_reference(x, 1e-6)
    tol = tolerance(dtype)
    np.testing.assert_allclose(to_numpy(yd).astype(np.float32), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(to_numpy(nd), want_norm, rtol=1e-5)


# --- atomic_cas_lock -------------------------------------------------------------------


@pytest.mark.parametrize("rows,group_size_m", [(29, 4), (8, 8)], ids=["contended", "one_row_each"])
def test_locked_partial_sums(rows, group_size_m, rng):
    # Every program adds its row into partial row `row % GROUP_SIZE_M` under that row's spin
    # lock (`while tl.atomic_cas(lock, 0, 1) == 1: pass`); the first writer marks the count.
    module = corpus("atomic_cas_lock")
    n = 45
    x = rng.standard_normal((rows, n)).astype(np.float32)
    partial = np.full((group_size_m, n), np.nan, np.float32)
    locks = np.zeros(2 * group_size_m, np.int32)  # the locks, then the counts
    xd, pd, ld = on_device(x, partial, locks)
    module.locked_partial_sum_kernel[(rows,)](xd, pd, ld, n, n, GROUP_SIZE_M=group_size_m,
                                              BLOCK_N=64)
    groups = np.arange(rows) % group_size_m
    want = np.stack([x.astype(np.float64)[groups == g].sum(0) for g in range(group_size_m)])
    np.testing.assert_allclose(to_numpy(pd), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(to_numpy(ld), [0] * group_size_m + [1] * group_size_m)


def test_sum_of_locked_partials(rng):
    module = corpus("atomic_cas_lock")
    groups, n = 6, 45
    partial = rng.standard_normal((groups, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    pd, od = on_device(partial, out)
    module.sum_partials_kernel[(metile.cdiv(n, 32),)](pd, od, groups, n, BLOCK_M=4,
                                                      BLOCK_N=32)
    np.testing.assert_allclose(to_numpy(od), partial.astype(np.float64).sum(0), rtol=1e-5,
                               atol=1e-5)
