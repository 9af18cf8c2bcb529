"""Affine-quantised weights (issue 30): metile_kernels.affine_quant against MLX's mx.quantize and
mx.dequantize, the dequantising matmul (prefill and decode tilings) against a numpy product of
the dequantised weights, for bits 4 and 8, groups 32/64/128, f16/bf16/f32 activations, ragged M
and N, the residual epilogue, and the errors for a wrong layout."""

import ml_dtypes
import numpy as np
import pytest

from metile_kernels import affine_quant as aq
from metile_kernels.quantized_matmul import quantized_linear

BF16 = ml_dtypes.bfloat16


def _mlx():
    return pytest.importorskip("mlx.core", reason="MLX (CPU wheel) is not available here")


def _weights(rng, shape, dtype, scale=0.1):
    w = (rng.standard_normal(shape) * scale).astype(dtype)
    w[0, :32] = 0.5  # a constant group: MLX's smallest scale and a bias of the value
    return w


def _codes(wq, bits):
    """The codes of packed words, low bits first, by plain shifts (independent of aq.unpack)."""
    per_word = 32 // bits
    out = np.empty((wq.shape[0], wq.shape[1] * per_word), np.uint32)
    for j in range(per_word):
        out[:, j::per_word] = (wq >> np.uint32(j * bits)) & np.uint32((1 << bits) - 1)
    return out


def _kernel_weights(wq, scales, biases, group_size, bits, dtype):
    """What the kernels multiply by: f32 scale * q + bias rounded once to the activation dtype."""
    s = np.repeat(scales.astype(np.float32), group_size, axis=1)
    b = np.repeat(biases.astype(np.float32), group_size, axis=1)
    return (s * _codes(wq, bits).astype(np.float32) + b).astype(dtype).astype(np.float32)


# ---- the layout against MLX ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
def test_quantize_and_dequantize_match_mlx(dtype, bits, group_size, rng):
    mx = _mlx()
    mlx_dtype = {np.float16: mx.float16, BF16: mx.bfloat16, np.float32: mx.float32}[dtype]
    w = _weights(rng, (24, 384), dtype, scale=2.0)
    w[1, :group_size] = -0.25
    wq, scales, biases = aq.quantize(w, group_size, bits)
    mq, ms, mb = mx.quantize(mx.array(w.astype(np.float32)).astype(mlx_dtype),
                             group_size=group_size, bits=bits)
    assert wq.dtype == np.uint32 and wq.shape == (24, 384 * bits // 32)
    assert scales.dtype == dtype and scales.shape == (24, 384 // group_size)
    np.testing.assert_array_equal(wq, np.array(mq))
    np.testing.assert_array_equal(scales.astype(np.float32), np.array(ms.astype(mx.float32)))
    np.testing.assert_array_equal(biases.astype(np.float32), np.array(mb.astype(mx.float32)))
    ours = aq.dequantize(wq, scales, biases, group_size, bits)
    theirs = mx.dequantize(mq, ms, mb, group_size=group_size, bits=bits)
    np.testing.assert_array_equal(ours.astype(np.float32), np.array(theirs.astype(mx.float32)))


def test_packing_is_low_bits_first():
    codes = np.arange(16, dtype=np.uint32)[None, :] % 16
    assert aq.pack(codes, 4)[0, 0] == 0x76543210 and aq.pack(codes, 4)[0, 1] == 0xFEDCBA98
    assert aq.pack(np.array([[1, 2, 3, 255]], np.uint32), 8)[0, 0] == 0xFF030201
    np.testing.assert_array_equal(aq.unpack(aq.pack(codes, 4), 4), codes)


@pytest.mark.parametrize("bits", [4, 8])
def test_round_trip_error_is_within_a_step(bits, rng):
    # Half a step, but for the far edge of a group, which MLX's exact near edge may clip.
    w = rng.standard_normal((8, 256)).astype(np.float32)
    wq, scales, biases = aq.quantize(w, 64, bits)
    back = aq.dequantize(wq, scales, biases, 64, bits)
    step = np.repeat(np.abs(scales), 64, axis=1)
    error = np.abs(back - w)
    assert np.all(error <= step + 1e-6) and np.mean(error <= step * 0.5 + 1e-6) > 0.99


def test_kernel_weights_are_within_one_rounding_of_mlx_dequantize(rng):
    # MLX rounds scale * q and then the sum; the kernels round the f32 sum once. They differ by
    # at most the rounding of the product (half an ulp of |scale * q|) and of the sum.
    w = _weights(rng, (16, 256), BF16, scale=3.0)
    wq, scales, biases = aq.quantize(w, 64, 4)
    ours = _kernel_weights(wq, scales, biases, 64, 4, BF16)
    mlx_order = aq.dequantize(wq, scales, biases, 64, 4).astype(np.float32)
    product = np.repeat(scales.astype(np.float32), 64, axis=1) * _codes(wq, 4)
    bound = (np.abs(product) + np.abs(mlx_order) + np.abs(ours)) * 2.0**-8
    assert np.all(np.abs(ours - mlx_order) <= bound)


# ---- the dequantising matmul --------------------------------------------------------------

def _check(rng, rows, columns, inner, group_size, bits, dtype, decode=None, residual=False):
    w = _weights(rng, (columns, inner), dtype)
    x = rng.standard_normal((rows, inner)).astype(dtype)
    wq, scales, biases = aq.quantize(w, group_size, bits)
    r = rng.standard_normal((rows, columns)).astype(dtype) if residual else None
    out = quantized_linear(x, wq, scales, biases, group_size, bits, residual=r, decode=decode)
    expected = x.astype(np.float32) @ _kernel_weights(wq, scales, biases, group_size, bits,
                                                      dtype).T
    if residual:
        expected = expected + r.astype(np.float32)
    assert out.dtype == np.dtype(dtype) and out.shape == (rows, columns)
    # Rounded once to the output dtype, after f32 sums in another order than numpy's.
    tolerance = {np.float16: 2.0**-10, BF16: 2.0**-7, np.float32: 2.0**-20}[dtype]
    np.testing.assert_allclose(out.astype(np.float32), expected,
                               atol=tolerance * (np.abs(expected).max() + 1), rtol=tolerance)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
@pytest.mark.parametrize("rows", [1, 7, 16, 512])
def test_quantized_linear_f16_bits_groups_and_rows(bits, group_size, rows, rng):
    # rows <= 16 take the decode tiling, 512 the prefill one; 45 columns are ragged.
    _check(rng, rows, 45, 256, group_size, bits, np.float16)


@pytest.mark.parametrize("dtype", [BF16, np.float32])
@pytest.mark.parametrize("rows", [3, 40])
def test_quantized_linear_bf16_and_f32_activations(dtype, rows, rng):
    _check(rng, rows, 70, 384, 128, 4, dtype)
    _check(rng, rows, 33, 96, 32, 8, dtype)


@pytest.mark.parametrize("decode", [True, False])
def test_both_tilings_at_any_row_count_with_the_residual_epilogue(decode, rng):
    _check(rng, 19, 50, 192, 64, 4, np.float16, decode=decode, residual=True)
    _check(rng, 2, 17, 128, 32, 8, BF16, decode=decode, residual=True)


# ---- errors -------------------------------------------------------------------------------

def _operands(rng, rows=4, columns=8, inner=128, group_size=64, bits=4):
    x = rng.standard_normal((rows, inner)).astype(np.float16)
    wq, scales, biases = aq.quantize(_weights(rng, (columns, inner), np.float16), group_size,
                                     bits)
    return x, wq, scales, biases


def test_a_packing_that_does_not_match_bits_is_an_error(rng):
    x, wq, scales, biases = _operands(rng, bits=4)
    with pytest.raises(ValueError, match=r"hold 4 8-bit values a word, so K = 64, but the "
                                         r"activations have K = 128: the packing does not "
                                         r"match bits=8"):
        quantized_linear(x, wq, scales, biases, 64, bits=8)


def test_a_group_size_that_does_not_divide_k_is_an_error(rng):
    x = rng.standard_normal((2, 96)).astype(np.float16)
    wq = np.zeros((8, 12), np.uint32)
    scales = np.zeros((8, 1), np.float16)
    with pytest.raises(ValueError, match=r"group_size=64 does not divide the input dimension "
                                         r"K = 96"):
        quantized_linear(x, wq, scales, scales, 64, 4)
    with pytest.raises(ValueError, match=r"quantize: group_size=128 does not divide the input "
                                         r"dimension K = 96"):
        aq.quantize(np.zeros((8, 96), np.float16), 128, 4)


def test_mismatched_scales_and_biases_are_errors(rng):
    x, wq, scales, biases = _operands(rng)
    with pytest.raises(ValueError, match=r"scales must have shape \[N, K // group_size\] = "
                                         r"\[8, 2\] \(K = 128, group_size=64, bits=4\), got "
                                         r"\(8, 4\)"):
        quantized_linear(x, wq, np.zeros((8, 4), np.float16), biases, 64, 4)
    with pytest.raises(ValueError, match=r"biases must have shape \[N, K // group_size\] = "
                                         r"\[8, 2\] .*got \(7, 2\)"):
        quantized_linear(x, wq, scales, biases[:7], 64, 4)
    with pytest.raises(ValueError, match=r"biases must be in the activation dtype f16, got f32"):
        quantized_linear(x, wq, scales, biases.astype(np.float32), 64, 4)


def test_unsupported_bits_group_and_dtypes_are_errors(rng):
    x, wq, scales, biases = _operands(rng)
    with pytest.raises(ValueError, match=r"bits must be 4 or 8 \(MLX's affine layout\), got 3"):
        quantized_linear(x, wq, scales, biases, 64, 3)
    with pytest.raises(ValueError, match=r"group_size must be 32, 64 or 128, got 16"):
        quantized_linear(x, wq, scales, biases, 16, 4)
    with pytest.raises(ValueError, match=r"the packed weights must be uint32 \(MLX's layout\), "
                                         r"got i32"):
        quantized_linear(x, wq.astype(np.int32), scales, biases, 64, 4)
    with pytest.raises(ValueError, match=r"residual must have shape \[M, N\] = \[4, 8\]"):
        quantized_linear(x, wq, scales, biases, 64, 4, residual=np.zeros((4, 9), np.float16))


# ---- seed 000's quantised SwiGLU MLP ------------------------------------------------------

@pytest.mark.parametrize("low_register", [False, True])
@pytest.mark.parametrize("rows,bits,group_size,dtype", [(3, 4, 64, np.float16),
                                                        (20, 8, 32, BF16)])
def test_quantized_swiglu_mlp_matches_numpy(rows, bits, group_size, dtype, low_register, rng):
    from metile_kernels.quantized_mlp import quantized_swiglu_mlp

    hidden_size, intermediate = 128, 192
    x = rng.standard_normal((rows, hidden_size)).astype(dtype)
    gate, up = (aq.quantize(_weights(rng, (intermediate, hidden_size), dtype), group_size, bits)
                for _ in range(2))
    down = aq.quantize(_weights(rng, (hidden_size, intermediate), dtype), group_size, bits)
    residual = rng.standard_normal((rows, hidden_size)).astype(dtype)
    out = quantized_swiglu_mlp(x, gate, up, down, group_size, bits, residual=residual,
                               low_register=low_register)
    weights = [_kernel_weights(*w, group_size, bits, dtype) for w in (gate, up, down)]
    g, u = (x.astype(np.float32) @ w.T for w in weights[:2])
    h = (g / (1 + np.exp(-g)) * u).astype(dtype).astype(np.float32)  # stored in x's dtype
    expected = residual.astype(np.float32) + h @ weights[2].T
    tolerance = {np.float16: 2.0**-9, BF16: 2.0**-6}[dtype]
    np.testing.assert_allclose(out.astype(np.float32), expected,
                               atol=tolerance * (np.abs(expected).max() + 1), rtol=tolerance)


def test_swiglu_mlp_layout_errors(rng):
    from metile_kernels.quantized_mlp import quantized_swiglu_mlp

    x = rng.standard_normal((2, 64)).astype(np.float16)
    gate = aq.quantize(_weights(rng, (96, 64), np.float16), 32, 4)
    up = aq.quantize(_weights(rng, (64, 64), np.float16), 32, 4)
    down = aq.quantize(_weights(rng, (64, 96), np.float16), 32, 4)
    with pytest.raises(ValueError, match=r"gate and up must have the same shape, got \(96, 8\) "
                                         r"and \(64, 8\)"):
        quantized_swiglu_mlp(x, gate, up, down, 32, 4)
    with pytest.raises(ValueError, match=r"quantized_swiglu_mlp \(down\): packed weights "
                                         r"\[N, 8\] hold 8 4-bit values a word, so K = 64, but "
                                         r"the activations have K = 96"):
        quantized_swiglu_mlp(x, gate, gate, up, 32, 4)
