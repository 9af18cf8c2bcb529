"""metile_kernels.rmsnorm.rmsnorm_register (seed 004) on the device against numpy: the seed's
call, other register/thread partitions, f16 storage, ragged widths, and the N/BLOCK check."""

import numpy as np
import pytest

import metile
from metile import ThreadLayout
from metile_kernels.rmsnorm import rmsnorm_register


def reference(x, w, eps):
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    scale = 1 / np.sqrt((x32.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + eps)
    return (x32 * scale.astype(np.float32) * w32).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", [1, 1009, 1024])
def test_the_seed_call(dtype, n, rng):
    rows = 5
    inputs = rng.standard_normal((rows, n)).astype(dtype)
    weights = rng.standard_normal(n).astype(dtype)
    output = metile.Buffer.from_numpy(np.zeros((rows, n), dtype))
    dispatch = rmsnorm_register[(rows,)].prepare(
        inputs, weights, output, 1e-5, N=n, BLOCK=1024, RELAXED_PRECISION=False,
    )
    dispatch()
    tol = 1e-5 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(output.numpy().astype(np.float32),
                               reference(inputs, weights, 1e-5).astype(np.float32),
                               rtol=tol, atol=tol)
    report = dispatch.execution_report
    assert report["geometry"]["threads_per_threadgroup"][0] == 256  # four values per thread
    [reduction] = report["register_reductions"]
    assert (reduction["dtype"], reduction["threads"], reduction["registers"]) == ("f32", 256, 4)


@pytest.mark.parametrize("per_thread, threads, scratch", [
    (16, 64, "private scratch at offset 0, 8 bytes"),  # two partials
    (32, 32, "none: one SIMD group"),
])
def test_an_explicit_layout_picks_the_partition(per_thread, threads, scratch, rng):
    rows, n = 3, 1000
    inputs = rng.standard_normal((rows, n)).astype(np.float32)
    weights = rng.standard_normal(n).astype(np.float32)
    output = metile.Buffer.zeros((rows, n))
    dispatch = rmsnorm_register[(rows,)].prepare(
        inputs, weights, output, 1e-5, N=n, BLOCK=1024,
        LAYOUT=ThreadLayout.identity(1024, elements_per_thread=per_thread),
    )
    dispatch()
    np.testing.assert_allclose(output.numpy(), reference(inputs, weights, 1e-5), rtol=1e-5,
                               atol=1e-5)
    report = dispatch.execution_report
    assert report["geometry"]["threads_per_threadgroup"][0] == threads
    assert report["register_reductions"][0]["scratch"] == scratch
    if threads == 32:
        assert report["threadgroup_bytes"] == 0


@pytest.mark.parametrize("n", [0, 1025])
def test_n_must_fit_the_block(n):
    x = np.zeros((1, 4), np.float32)
    with pytest.raises(Exception, match=r"0 < N <= BLOCK"):
        rmsnorm_register[(1,)](x, x, x, 1e-5, N=n, BLOCK=1024)
