"""The library's row kernels (metile_kernels: softmax_rows, rms_norm_rows, add_rms_norm_rows)
against numpy on rows shorter than, equal to and longer than BLOCK: the loops cover the columns
past the first tile (which softmax_rows and add_rms_norm_rows hold in registers across the
passes, and rms_norm_rows reads again), and a ragged tail reads and writes nothing past the
row."""

import ml_dtypes
import numpy as np
import pytest

import metile

from metile_kernels.rmsnorm import add_rms_norm_rows, rms_norm_rows
from metile_kernels.softmax import softmax_rows

BLOCK = 128
EPS = 1e-5
ROWS = 3
TOLERANCE = {np.float32: 2e-6, np.float16: 2e-3, ml_dtypes.bfloat16: 1.6e-2}


def rms(h, w):
    hf = h.astype(np.float64)
    return hf / np.sqrt(np.mean(hf * hf, axis=-1, keepdims=True) + EPS) * w.astype(np.float64)


def close(got, want, dtype):
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("n_cols", [1, 77, BLOCK, 300])
@pytest.mark.parametrize("specialised", [False, True], ids=["dynamic", "specialised"])
def test_row_kernels_match_numpy(dtype, n_cols, specialised):
    # specialised: a Schedule makes n_cols and the stride constants, so the head tile's mask of
    # a row of BLOCK columns folds away (canonicalize) and the empty loops vanish; a ragged or
    # longer row keeps its masks.
    options = {"SCHEDULE": metile.Schedule()} if specialised else {}
    rng = np.random.default_rng(n_cols)
    stride = n_cols + 3  # rows apart by more than their length: nothing between is touched
    x = rng.standard_normal((ROWS, stride)).astype(dtype)
    r = rng.standard_normal((ROWS, stride)).astype(dtype)
    w = rng.standard_normal(n_cols).astype(dtype)
    row = np.s_[:, :n_cols]

    y = np.full((ROWS, stride), 7, dtype)
    softmax_rows[(ROWS,)](x, y, n_cols, stride, BLOCK=BLOCK, **options)
    xf = x[row].astype(np.float64)
    e = np.exp(xf - xf.max(axis=-1, keepdims=True))
    close(y[row], e / e.sum(axis=-1, keepdims=True), dtype)
    assert np.all(y[:, n_cols:] == 7)

    y = np.full((ROWS, stride), 7, dtype)
    rms_norm_rows[(ROWS,)](x, w, y, n_cols, stride, EPS, BLOCK=BLOCK, **options)
    close(y[row], rms(x[row], w), dtype)
    assert np.all(y[:, n_cols:] == 7)

    y = np.full((ROWS, stride), 7, dtype)
    h = np.full((ROWS, stride), 7, dtype)
    add_rms_norm_rows[(ROWS,)](x, r, w, y, h, n_cols, stride, EPS, BLOCK=BLOCK, **options)
    np.testing.assert_array_equal(h[row], x[row] + r[row])
    close(y[row], rms(x[row] + r[row], w), dtype)
    assert np.all(y[:, n_cols:] == 7) and np.all(h[:, n_cols:] == 7)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rms_norm_rows_reads_an_f32_row_twice_with_inductors_cache_hints(dtype):
    # f32: the form torch.compile's kernel has (docs/cuda.md): the sum's read keeps the row's
    # lines (evict_last), the output pass re-reads them and lets them go first (evict_first),
    # and the weight stays (evict_last). 16-bit rows hold the first tile instead, unhinted.
    x = np.zeros((ROWS, 300), dtype)
    text = str(rms_norm_rows.trace(x, x[0], x, 300, 300, EPS, BLOCK=BLOCK))
    loads = [line for line in text.splitlines() if " = load " in line]
    hints = [line.split("{eviction = ")[1].split("}")[0] for line in loads if "eviction" in line]
    if dtype == np.float32:
        assert hints == ['"evict_last"', '"evict_first"', '"evict_last"']
    else:
        assert hints == [] and len(loads) == 5


@pytest.mark.parametrize("dtype, block, threads", [(np.float32, 4096, 512), (np.float32, 128, 32),
                                                   (np.float16, 4096, None),
                                                   (ml_dtypes.bfloat16, 1024, None)])
def test_rms_norm_rows_gives_f32_rows_two_float4_per_thread(dtype, block, threads):
    # Its num_threads callable: BLOCK // 8 threads for f32 rows (512 at 4096 columns, measured
    # faster than the compiler's 256 on the H200); the compiler's plan (None) for 16-bit rows.
    x = np.zeros((ROWS, 300), dtype)
    args = (x, x[0], x, 300, 300, EPS)
    compiled = rms_norm_rows.compile(*args, BLOCK=block)
    if threads is None:
        threads = metile.KernelFunction(rms_norm_rows.fn).compile(*args, BLOCK=block).abi[
            "threads_per_threadgroup"][0]
    assert compiled.abi["threads_per_threadgroup"][0] == threads
