"""metile_kernels.gemm: matmul and the fused leaky epilogue against numpy, ragged M/N/K, f16,
bf16 and f32 inputs, the output in the output buffer's dtype."""

import ml_dtypes
import numpy as np
import pytest

from metile_kernels.gemm import grid, matmul, matmul_leaky

BF16 = ml_dtypes.bfloat16


def _inputs(rng, shape, dtype):
    # Small multiples of 1/2 keep every product and partial sum exact in f32.
    return (rng.integers(-4, 5, shape) * 0.5).astype(dtype)


def _reference(left, right):
    return left.astype(np.float32) @ right.astype(np.float32)


# Aligned, ragged rows and columns with K aligned (the row and column checks stay), ragged in
# every dimension, a K shorter than one BLOCK_K, and a single row.
SHAPES = [(64, 64, 32), (70, 45, 32), (70, 45, 37), (33, 130, 5), (1, 64, 48)]


@pytest.mark.parametrize("dtype,out_dtype", [(np.float32, np.float32), (np.float16, np.float16),
                                             (BF16, np.float32)])
@pytest.mark.parametrize("rows,columns,inner", SHAPES)
def test_matmul_matches_numpy(rows, columns, inner, dtype, out_dtype, rng):
    left, right = _inputs(rng, (rows, inner), dtype), _inputs(rng, (inner, columns), dtype)
    output = np.full((rows, columns), 7, out_dtype)  # every element must be overwritten
    matmul[grid(rows, columns, 32, 32)](left, right, output, rows, columns, inner, BLOCK_M=32,
                                        BLOCK_N=32, BLOCK_K=16)
    np.testing.assert_array_equal(output, _reference(left, right).astype(out_dtype))


def test_matmul_default_blocks_leave_memory_past_the_output_untouched(rng):
    rows, columns, inner = 65, 70, 20
    left, right = _inputs(rng, (rows, inner), np.float16), _inputs(rng, (inner, columns),
                                                                  np.float16)
    backing = np.full(rows * columns + 64, 3, np.float32)
    matmul[grid(rows, columns)](left, right, backing, rows, columns, inner)
    np.testing.assert_array_equal(backing[:rows * columns].reshape(rows, columns),
                                  _reference(left, right))
    np.testing.assert_array_equal(backing[rows * columns:], 3)


@pytest.mark.parametrize("alpha,beta", [(0.5, -1.0), (-2.0, 0.25)])
def test_leaky_epilogue_with_runtime_alpha_and_beta(alpha, beta, rng):
    rows, columns, inner = 40, 72, 24
    left, right = _inputs(rng, (rows, inner), np.float16), _inputs(rng, (inner, columns),
                                                                  np.float16)
    output = np.zeros((rows, columns), np.float32)
    matmul_leaky[grid(rows, columns, 32, 32)](left, right, output, rows, columns, inner, alpha,
                                              beta, BLOCK_M=32, BLOCK_N=32)
    scaled = _reference(left, right) * np.float32(alpha) + np.float32(beta)
    np.testing.assert_allclose(output, np.where(scaled > 0, scaled, scaled * np.float32(0.1)),
                               rtol=1e-6, atol=1e-6)
