"""The tensor_ops backend on the host target: metile_kernels.gemm's descriptor GEMM lowered to
Metal 4's matmul2d (the emulated MetalPerformancePrimitives of the host metal_stdlib) against
numpy, ragged M/N/K, f16/bf16/f32, the fused leaky epilogue with runtime alpha and beta, the
automatic choice, the report's fused epilogues, and each epilogue the backend rejects."""

import re

import ml_dtypes
import numpy as np
import pytest

import metile
from metile_kernels.gemm import _product, grid, matmul, matmul_leaky

pytestmark = pytest.mark.skipif(metile.device() != "host",
                                reason="Metal 4 tensor ops: Apple GPUs and the host emulator")

BF16 = ml_dtypes.bfloat16
TENSOR_OPS = metile.Schedule(backend="tensor_ops")


def _inputs(rng, shape, dtype):
    # Small multiples of 1/2 keep every product and partial sum exact in f32.
    return (rng.integers(-4, 5, shape) * 0.5).astype(dtype)


def _reference(left, right):
    return left.astype(np.float32) @ right.astype(np.float32)


@pytest.mark.parametrize("dtype,out_dtype", [(np.float32, np.float32), (np.float16, np.float16),
                                             (BF16, np.float32)])
@pytest.mark.parametrize("rows,columns,inner", [(64, 64, 32), (70, 45, 32), (70, 45, 37),
                                                (33, 130, 5), (1, 64, 48)])
def test_tensor_ops_matmul_matches_numpy(rows, columns, inner, dtype, out_dtype, rng):
    left, right = _inputs(rng, (rows, inner), dtype), _inputs(rng, (inner, columns), dtype)
    # The output sits in a larger buffer: the row and column tails must stay bounded.
    backing = np.full(rows * columns + 64, 7, out_dtype)
    dispatch = matmul[grid(rows, columns, 32, 32)].prepare(
        left, right, backing, rows, columns, inner, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16,
        SCHEDULE=TENSOR_OPS)
    dispatch()
    np.testing.assert_array_equal(backing[:rows * columns].reshape(rows, columns),
                                  _reference(left, right).astype(out_dtype))
    np.testing.assert_array_equal(backing[rows * columns:], 7)
    assert dispatch.schedule_plan["backend"]["strategy"] == "mpp_matmul2d"
    assert "mpp::tensor_ops::matmul2d<" in dispatch.source


@pytest.mark.parametrize("backend", ["tensor_ops", "simdgroup"])
@pytest.mark.parametrize("alpha,beta", [(0.5, -1.0), (-2.0, 0.25)])
def test_leaky_epilogue_with_runtime_alpha_and_beta(backend, alpha, beta, rng):
    rows, columns, inner = 40, 72, 24
    left, right = _inputs(rng, (rows, inner), np.float16), _inputs(rng, (inner, columns),
                                                                  np.float16)
    output = np.zeros((rows, columns), np.float16)
    dispatch = matmul_leaky[grid(rows, columns, 32, 32)].prepare(
        left, right, output, rows, columns, inner, alpha, beta, BLOCK_M=32, BLOCK_N=32,
        SCHEDULE=metile.Schedule(backend=backend))
    dispatch()
    scaled = _reference(left, right) * np.float32(alpha) + np.float32(beta)
    expected = np.where(scaled > 0, scaled, scaled * np.float32(0.1)).astype(np.float16)
    np.testing.assert_allclose(output.astype(np.float32), expected.astype(np.float32),
                               rtol=1e-3, atol=1e-3)
    # Every GEMM backend reports the epilogue it fused.
    [epilogue] = dispatch.execution_report["fused_epilogues"]
    assert epilogue["ops"] == ["mul", "add", "cmp", "mul", "select", "cast"]
    assert epilogue["scalar_parameters"] == ["%alpha", "%beta"]
    assert epilogue["output_conversion"] == "f32 -> f16"
    assert epilogue["backend"].startswith(backend)


def test_auto_takes_tensor_ops_unless_a_control_needs_the_simdgroup_path(rng):
    left, right = _inputs(rng, (32, 16), np.float32), _inputs(rng, (16, 32), np.float32)
    output = np.zeros((32, 32), np.float32)
    args = (left, right, output, 32, 32, 16)
    automatic = matmul[(1, 1)].prepare(*args, BLOCK_M=32, BLOCK_N=32,
                                       SCHEDULE=metile.Schedule())
    assert automatic.schedule_plan["backend"]["value"] == "tensor_ops"
    assert "reads its operands from device memory" in automatic.schedule_plan["backend"]["reason"]
    assert automatic.schedule_plan["staging"]["value"] == "device"
    scalar = matmul[(1, 1)].prepare(*args, BLOCK_M=32, BLOCK_N=32,
                                    SCHEDULE=metile.Schedule(vector_width=1))
    assert scalar.schedule_plan["backend"]["value"] == "simdgroup"
    assert "controllable SIMD-group path" in scalar.schedule_plan["backend"]["reason"]
    for dispatch in (automatic, scalar):
        output[:] = 0
        dispatch()
        np.testing.assert_array_equal(output, _reference(left, right))


def test_an_explicit_width_rejects_tensor_ops(rng):
    left, right = _inputs(rng, (32, 16), np.float32), _inputs(rng, (16, 32), np.float32)
    with pytest.raises(metile.CompilationError,
                       match=r"Schedule\(vector_width=1\) cannot be met for kernel 'matmul': the "
                             "tensor backend's accesses are opaque"):
        matmul[(1, 1)].prepare(left, right, np.zeros((32, 32), np.float32), 32, 32, 16,
                               BLOCK_M=32, BLOCK_N=32,
                               SCHEDULE=metile.Schedule(backend="tensor_ops", vector_width=1))


# Epilogues the tensor backend cannot fuse, on the library's own K loop (`_product`): each names
# the op that does not fit.
@metile.kernel
def _with_bias(left, right, bias, output, rows, columns, inner, BLOCK: metile.constexpr = 32):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK, BLOCK, 16)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    shift = metile.tensor(bias, shape=(columns,), access="read")
    c.store((row[:, None], column[None, :]), acc + shift.load((column,))[None, :])


@metile.kernel
def _truncated(left, right, output, rows, columns, inner, BLOCK: metile.constexpr = 32):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK, BLOCK, 16)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), acc.to("i32").to("f32"))


@metile.kernel
def _stored_twice(left, right, output, copy, rows, columns, inner, BLOCK: metile.constexpr = 32):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK, BLOCK, 16)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    d = metile.tensor(copy, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), acc)
    d.store((row[:, None], column[None, :]), acc * 2.0)


@metile.kernel
def _reduced(left, right, output, rows, columns, inner, BLOCK: metile.constexpr = 32):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK, BLOCK, 16)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), acc - metile.max(acc, axis=1)[:, None])


@metile.kernel
def _two_recurrences(left, right, output, rows, columns, inner, BLOCK: metile.constexpr = 32):
    a = metile.tensor(left, shape=(rows, inner), access="read")
    b = metile.tensor(right, shape=(inner, columns), access="read")
    row = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    column = metile.program_id(1) * BLOCK + metile.arange(0, BLOCK)
    ks = metile.arange(0, 16)
    acc = metile.zeros((BLOCK, BLOCK), dtype="f32")
    other = metile.zeros((BLOCK, BLOCK), dtype="f32")
    for k in metile.tile_range(0, inner, 16):
        acc = metile.dot(a.load((row[:, None], (k + ks)[None, :])),
                         b.load(((k + ks)[:, None], column[None, :])), acc)
        other = other + 1.0
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), acc + other)


# What each kernel stores, from the product and its extra buffer: (output, extra buffer).
# Inner is 16, one step of the K loop, so _two_recurrences' other is 1.
_EXPECTED = {
    "_with_bias": lambda product, bias: (product + bias[:32][None, :], bias),
    "_truncated": lambda product, _: (np.trunc(product), None),
    "_stored_twice": lambda product, _: (product, (product * 2).reshape(-1)),
    "_reduced": lambda product, _: (product - product.max(axis=1, keepdims=True), None),
    "_two_recurrences": lambda product, _: (product + 1, None),
}


@pytest.mark.parametrize("kernel,extra,message", [
    (_with_bias, "bias", r"= tensor_load' at .* reads memory; an epilogue holds pointwise "
                         r"operations of the accumulator and scalars only"),
    (_truncated, None, r"= cast' at .* is a cast between i32 and f32; the epilogue converts "
                       r"between float types only"),
    (_stored_twice, "copy", r"= tensor_store|is a second output store of the accumulator"),
    (_reduced, None, r"= reduce_axis' at .* is a reduction; an epilogue is pointwise"),
    (_two_recurrences, None, r"'%\d+ = for' at .* carries 2 values; the tensor backend lowers "
                             r"one matrix recurrence"),
])
def test_unsupported_epilogues_fail_naming_the_op(kernel, extra, message, rng):
    left, right = _inputs(rng, (32, 16), np.float32), _inputs(rng, (16, 32), np.float32)
    output = np.zeros((32, 32), np.float32)
    # A bias of non-zero values, so that adding it is visible; a copy starts at zeros.
    extra_buffer = (_inputs(rng, (32 * 32,), np.float32) if extra == "bias" else
                    np.zeros(32 * 32, np.float32))
    # The bias comes before the output, the copy after it (the kernels' parameter order).
    args = [left, right] + {"bias": [extra_buffer, output], "copy": [output, extra_buffer],
                            None: [output]}[extra]
    # Integer scalars stay runtime values (no Schedule specialises them) in the launch below.
    with pytest.raises(metile.NotSupportedError,
                       match=r"form_descriptor_matmul: Schedule\(backend='tensor_ops'\) cannot "
                             r"lower kernel '" + kernel.__name__ + "' on target host: .*" + message):
        kernel[(1, 1)](*args, 32, 32, 16, SCHEDULE=TENSOR_OPS)
    # Automatic selection keeps them on the SIMD-group path, which runs any epilogue.
    expected_output, expected_extra = _EXPECTED[kernel.__name__](_reference(left, right),
                                                                 extra_buffer.copy())
    kernel[(1, 1)](*args, 32, 32, 16)
    np.testing.assert_array_equal(output, expected_output)
    if extra:
        np.testing.assert_array_equal(extra_buffer, expected_extra)


def test_automatic_selection_says_why_the_tensor_backend_declined(rng):
    left, right = _inputs(rng, (32, 16), np.float32), _inputs(rng, (16, 32), np.float32)
    dispatch = _reduced[(1, 1)].prepare(left, right, np.zeros((32, 32), np.float32), 32, 32, 16)
    backend = dispatch.schedule_plan["backend"]
    assert backend["value"] == "simdgroup"
    assert re.search(r"the tensor backend does not take this kernel: '%\d+ = reduce_axis' at .* "
                     r"is a reduction", backend["reason"]), backend["reason"]
