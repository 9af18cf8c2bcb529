"""Triton tutorials 02 (fused softmax) and 05 (layer norm forward) in meTile, plus the
three-pass softmax whose running maximum starts as a Python number."""

import ml_dtypes
import numpy as np
import pytest

import metile


def softmax_reference(x):
    x = x.astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@metile.kernel
def fused_softmax(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                  BLOCK: metile.constexpr):
    row = metile.program_id(0)
    cols = metile.arange(0, BLOCK)
    mask = cols < n_cols
    x = metile.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-1e38).to("f32")
    numerator = metile.exp(x - metile.max(x))
    metile.store(out_ptr + row * out_row_stride + cols, numerator / metile.sum(numerator),
                 mask=mask)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("shape", [(1, 1), (7, 100), (33, 781)])
def test_fused_softmax(shape, np_dtype, rng):
    x = rng.standard_normal(shape).astype(np_dtype)
    out = np.zeros(shape, np_dtype)
    fused_softmax[(shape[0],)](out, x, shape[1], shape[1], shape[1],
                               BLOCK=metile.next_power_of_2(shape[1]))
    tolerance = {np.float32: 1e-6, np.float16: 1e-3, ml_dtypes.bfloat16: 8e-3}[np_dtype]
    np.testing.assert_allclose(out.astype(np.float32), softmax_reference(x), atol=tolerance)


@metile.kernel
def three_pass_softmax(x_ptr, out_ptr, n_cols, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    m = -1e38
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=-1e38)
        m = metile.maximum(m, x)
    m = metile.max(m)
    s = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=-1e38)
        s = s + metile.exp(x - m)
    s = metile.sum(s)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols)
        metile.store(out_ptr + row * n_cols + cols, metile.exp(x - m) / s, mask=cols < n_cols)


@pytest.mark.parametrize("shape", [(3, 1), (5, 256), (4, 1000)])
def test_three_pass_softmax_promotes_the_running_maximum(shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    out = np.zeros_like(x)
    three_pass_softmax[(shape[0],)](x, out, shape[1], BLOCK=256)
    np.testing.assert_allclose(out, softmax_reference(x), atol=1e-6)
    ir = three_pass_softmax.trace(x, out, shape[1], BLOCK=256).print()
    assert ir.count("tile<256xf32> {") == 2  # both reductions carry a promoted tile


@metile.kernel
def layer_norm_forward(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: metile.constexpr):
    row = metile.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = metile.zeros([BLOCK_SIZE], dtype=metile.float32)
    for off in metile.tile_range(0, N, BLOCK_SIZE):
        cols = off + metile.arange(0, BLOCK_SIZE)
        a = metile.load(X + cols, mask=cols < N, other=0.).to(metile.float32)
        _mean += a
    mean = metile.sum(_mean, axis=0) / N.to(metile.float32)  # dtypes never mix implicitly
    _var = metile.zeros([BLOCK_SIZE], dtype=metile.float32)
    for off in metile.tile_range(0, N, BLOCK_SIZE):
        cols = off + metile.arange(0, BLOCK_SIZE)
        x = metile.load(X + cols, mask=cols < N, other=0.).to(metile.float32)
        x = metile.where(cols < N, x - mean, 0.)
        _var += x * x
    var = metile.sum(_var, axis=0) / N.to(metile.float32)
    rstd = 1 / metile.sqrt(var + eps)
    metile.store(Mean + row, mean)
    metile.store(Rstd + row, rstd)
    for off in metile.tile_range(0, N, BLOCK_SIZE):
        cols = off + metile.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = metile.load(W + cols, mask=mask)
        b = metile.load(B + cols, mask=mask)
        x = metile.load(X + cols, mask=mask, other=0.).to(metile.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w.to("f32") + b.to("f32")
        metile.store(Y + cols, y, mask=mask)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(4, 100), (3, 1031)])
def test_layer_norm_forward_with_runtime_eps(shape, np_dtype, rng):
    M, N = shape
    x = rng.standard_normal(shape).astype(np_dtype)
    w = rng.standard_normal(N).astype(np_dtype)
    b = rng.standard_normal(N).astype(np_dtype)
    y = np.zeros(shape, np_dtype)
    mean, rstd = np.zeros(M, np.float32), np.zeros(M, np.float32)
    eps = 1e-5
    layer_norm_forward[(M,)](x, y, w, b, mean, rstd, N, N, eps, BLOCK_SIZE=256)
    xf = x.astype(np.float32)
    ref_mean = xf.mean(1)
    ref_rstd = 1 / np.sqrt(xf.var(1) + eps)
    ref = (xf - ref_mean[:, None]) * ref_rstd[:, None] * w.astype(np.float32) + b.astype(np.float32)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-4)
    tolerance = 1e-4 if np_dtype == np.float32 else 1e-2
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=tolerance, atol=tolerance)


# ---- the language pieces Triton code uses beside the tutorials: scans, custom reductions,
# join/split, written as Triton code is (tl = metile) -----------------------------------------
@metile.jit
def _max_combine(a, b):
    return metile.maximum(a, b)


@metile.kernel
def row_softmax_with_reduce(out_ptr, in_ptr, n_cols, BLOCK: metile.constexpr):
    """Tutorial 02 with the row maximum as a custom reduction and the row sum a scan's end."""
    row = metile.program_id(0)
    cols = metile.arange(0, BLOCK)
    mask = cols < n_cols
    x = metile.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    numerator = metile.exp(x - metile.reduce(x, 0, _max_combine))
    running = metile.associative_scan(numerator, 0, lambda a, b: a + b)
    total = metile.sum(metile.where(cols == BLOCK - 1, running, 0.0))
    metile.store(out_ptr + row * n_cols + cols, numerator / total, mask=mask)


def test_softmax_with_a_custom_reduce_and_a_scan(rng):
    x = rng.standard_normal((5, 300)).astype(np.float32)
    out = np.zeros_like(x)
    row_softmax_with_reduce[(5,)](out, x, 300, BLOCK=512)
    np.testing.assert_allclose(out, softmax_reference(x), rtol=1e-5, atol=1e-7)


@metile.kernel
def complex_multiply(a_ptr, b_ptr, out_ptr, n, BLOCK: metile.constexpr):
    """Interleaved complex numbers (re, im pairs) multiplied with split and join."""
    offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    pairs = offs[:, None] * 2 + metile.arange(0, 2)[None, :]
    inside = (offs < n)[:, None]
    a_re, a_im = metile.split(metile.load(a_ptr + pairs, mask=inside, other=0.0))
    b_re, b_im = metile.split(metile.load(b_ptr + pairs, mask=inside, other=0.0))
    product = metile.join(a_re * b_re - a_im * b_im, a_re * b_im + a_im * b_re)
    metile.store(out_ptr + pairs, product, mask=inside)


def test_complex_multiply_with_split_and_join(rng):
    a = (rng.standard_normal(700) + 1j * rng.standard_normal(700)).astype(np.complex64)
    b = (rng.standard_normal(700) + 1j * rng.standard_normal(700)).astype(np.complex64)
    out = np.zeros(1400, np.float32)
    complex_multiply[(metile.cdiv(700, 256),)](a.view(np.float32), b.view(np.float32), out, 700,
                                               BLOCK=256)
    np.testing.assert_allclose(out.view(np.complex64), a * b, rtol=1e-5, atol=1e-6)
