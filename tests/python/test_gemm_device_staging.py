"""Schedule(staging="device") for the SIMD-group GEMM (seed 002's staging control): operand
fragments read straight from device memory, against numpy on square and ragged shapes in
f16, bf16 and f32, with and without the library's epilogue and under a permuted matrix lane
map; the plan and report fields; each rejection's message."""

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import metile
from metile_kernels.gemm import grid, matmul, matmul_leaky

BF16 = ml_dtypes.bfloat16
DEVICE = metile.Schedule(backend="simdgroup", staging="device")


def _inputs(rng, shape, dtype):
    # Small multiples of 1/2 keep every product and partial sum exact in f32.
    return (rng.integers(-4, 5, shape) * 0.5).astype(dtype)


def _operands(rows, columns, inner, dtype, rng):
    left, right = _inputs(rng, (rows, inner), dtype), _inputs(rng, (inner, columns), dtype)
    return left, right, left.astype(np.float32) @ right.astype(np.float32)


def _run(rows, columns, inner, dtype, rng, schedule=DEVICE, blocks=(32, 32, 16)):
    left, right, expected = _operands(rows, columns, inner, dtype, rng)
    output = np.full((rows, columns), 7, np.float32)  # every element must be overwritten
    dispatch = matmul[grid(rows, columns, blocks[0], blocks[1])].prepare(
        left, right, output, rows, columns, inner, BLOCK_M=blocks[0], BLOCK_N=blocks[1],
        BLOCK_K=blocks[2], SCHEDULE=schedule)
    dispatch()
    np.testing.assert_array_equal(output, expected)
    return dispatch


# Square and aligned; ragged in every dimension; K shorter than one BLOCK_K; a single row.
@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
@pytest.mark.parametrize("rows,columns,inner", [(64, 64, 32), (70, 45, 37), (9, 23, 5),
                                                (1, 40, 24)])
def test_device_staged_matmul_matches_numpy(rows, columns, inner, dtype, rng):
    _run(rows, columns, inner, dtype, rng)


def test_device_staging_with_the_default_blocks_and_four_simd_groups(rng):
    schedule = metile.Schedule(backend="simdgroup", num_simdgroups=4, staging="device")
    report = _run(130, 70, 50, np.float16, rng, schedule, (64, 64, 16)).execution_report
    assert report["geometry"]["threads_per_threadgroup"] == [128, 1, 1]


@pytest.mark.parametrize("alpha,beta", [(0.5, -1.0), (-2.0, 0.25)])
def test_device_staged_leaky_epilogue(alpha, beta, rng):
    rows, columns, inner = 40, 72, 24
    left, right, product = _operands(rows, columns, inner, np.float16, rng)
    output = np.zeros((rows, columns), np.float32)
    matmul_leaky[grid(rows, columns, 32, 32)](left, right, output, rows, columns, inner, alpha,
                                              beta, BLOCK_M=32, BLOCK_N=32, SCHEDULE=DEVICE)
    scaled = product * np.float32(alpha) + np.float32(beta)
    np.testing.assert_allclose(output, np.where(scaled > 0, scaled, scaled * np.float32(0.1)),
                               rtol=1e-6, atol=1e-6)


def test_device_staging_under_a_permuted_lane_map():
    env = dict(os.environ, METILE_HOST_MATRIX_LANE_MAP="permuted")
    code = ("import sys; sys.path.insert(0, %r); import numpy as np; import "
            "test_gemm_device_staging as t; t._run(70, 45, 37, np.float16, "
            "np.random.default_rng(3))" % os.path.dirname(__file__))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_the_plan_and_report_show_no_operand_staging(rng):
    dispatch = _run(70, 45, 37, np.float16, rng)
    plan = dispatch.schedule_plan
    assert plan["staging"]["value"] == "device"
    assert plan["staging"]["reason"].startswith(
        "required: each SIMD group reads its operand fragments straight from device memory")
    assert plan["double_buffer"]["reason"].startswith("auto: staging='device' keeps no")
    report = dispatch.execution_report
    purposes = [a["purpose"] for a in report["allocations"]]
    assert not any(p.startswith("dot operands") for p in purposes)
    tails = [a for a in report["allocations"] if a["purpose"].startswith("dot operand tails")]
    groups = report["geometry"]["threads_per_threadgroup"][0] // 32
    assert len(tails) == 1 and tails[0]["bytes"] == groups * 64 * 2  # f16
    assert report["buffering"] == [] and report["pipelines"] == []
    # The threadgroup-staged kernel stages its operand tiles.
    staged = _run(70, 45, 37, np.float16, rng,
                  metile.Schedule(backend="simdgroup", staging="threadgroup")).execution_report
    assert any(a["purpose"].startswith("dot operands") for a in staged["allocations"])


def test_auto_keeps_threadgroup_staging(rng):
    plan = _run(70, 45, 37, np.float16, rng, metile.Schedule(backend="simdgroup")).schedule_plan
    assert plan["staging"]["value"] == "threadgroup"
    assert plan["staging"]["reason"].startswith("auto: operand tiles through threadgroup memory")


def _compile_error(schedule, error, message, rng, **blocks):
    left, right, _ = _operands(64, 64, 32, np.float16, rng)
    output = np.zeros((64, 64), np.float32)
    with pytest.raises(error, match=message):
        matmul[grid(64, 64)].prepare(left, right, output, 64, 64, 32, SCHEDULE=schedule,
                                     **blocks)


def test_device_staging_rejects_a_double_buffer(rng):
    _compile_error(metile.Schedule(backend="simdgroup", staging="device", double_buffer=True),
                   metile.CompilationError,
                   r"Schedule\(staging='device'\) cannot be met for kernel 'matmul': "
                   r"staging='device' reads each operand fragment straight from device "
                   r"memory, so there is no threadgroup operand buffer for "
                   r"Schedule\(double_buffer=True\) to double-buffer", rng)


def test_device_staging_rejects_width_four(rng):
    _compile_error(metile.Schedule(backend="simdgroup", staging="device", vector_width=4),
                   metile.NotSupportedError,
                   r"Schedule\(staging='device'\) cannot be met for kernel 'matmul': "
                   r"staging='device' reads operand fragments with matrix loads, not the "
                   r"scalar operand copies that Schedule\(vector_width=4\) vectorises", rng)


@metile.kernel
def _scaled_operand(left, right, output, BLOCK: metile.constexpr = 16):
    """A dot whose a operand is computed (2 * a load), not loaded."""
    i = metile.arange(0, BLOCK)
    a = metile.load(left + i[:, None] * BLOCK + i[None, :]) * 2.0
    b = metile.load(right + i[:, None] * BLOCK + i[None, :])
    acc = metile.dot(a, b, metile.zeros((BLOCK, BLOCK), dtype="f32"))
    metile.store(output + i[:, None] * BLOCK + i[None, :], acc)


def test_an_operand_that_is_not_a_load_is_rejected():
    left = np.ones((16, 16), np.float32)
    output = np.zeros((16, 16), np.float32)
    with pytest.raises(metile.NotSupportedError,
                       match=r"Schedule\(staging='device'\) cannot be met for kernel "
                             r"'_scaled_operand': its operand fragments cannot be read straight "
                             r"from device memory: operand a \(tile<16x16xf32>\) is not a tile "
                             r"load \(it is defined by mul\)"):
        _scaled_operand[(1,)](left, left, output, SCHEDULE=DEVICE)
    _scaled_operand[(1,)](left, left, output, SCHEDULE=metile.Schedule(backend="simdgroup"))
    np.testing.assert_array_equal(output, (2 * left) @ left)


def test_tensor_ops_keeps_rejecting_explicit_staging(rng):
    # A tile every tensor backend takes (sm90's wgmma_tma included), so staging is what fails.
    _compile_error(metile.Schedule(backend="tensor_ops", staging="threadgroup"),
                   metile.CompilationError,
                   r"Schedule\(staging='threadgroup'\) cannot be met for kernel 'matmul': ",
                   rng, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)


@metile.kernel
def _masked_product(left, right, output, M, N, K, BLOCK: metile.constexpr = 16):
    """One dot of pointer loads with the kernel's own masks (no descriptors)."""
    i = metile.arange(0, BLOCK)
    a = metile.load(left + i[:, None] * K + i[None, :], mask=(i[:, None] < M) & (i[None, :] < K),
                    other=0.0)
    b = metile.load(right + i[:, None] * N + i[None, :], mask=(i[:, None] < K) & (i[None, :] < N),
                    other=0.0)
    acc = metile.dot(a, b, metile.zeros((BLOCK, BLOCK), dtype="f32"))
    metile.store(output + i[:, None] * N + i[None, :], acc,
                 mask=(i[:, None] < M) & (i[None, :] < N))


@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (9, 13, 5), (1, 16, 3)])
def test_pointer_loads_with_their_own_masks(m, n, k, rng):
    left, right, expected = _operands(m, n, k, np.float32, rng)
    output = np.full((m, n), 7, np.float32)
    dispatch = _masked_product[(1,)].prepare(left, right, output, m, n, k, SCHEDULE=DEVICE)
    dispatch()
    np.testing.assert_array_equal(output, expected)
    assert dispatch.schedule_plan["staging"]["value"] == "device"


@metile.kernel
def _diagonal_operand(left, right, output, BLOCK: metile.constexpr = 16):
    """a keeps only its diagonal: a mask with ==, which no block corner bounds."""
    i = metile.arange(0, BLOCK)
    a = metile.load(left + i[:, None] * BLOCK + i[None, :], mask=i[:, None] == i[None, :],
                    other=0.0)
    b = metile.load(right + i[:, None] * BLOCK + i[None, :])
    acc = metile.dot(a, b, metile.zeros((BLOCK, BLOCK), dtype="f32"))
    metile.store(output + i[:, None] * BLOCK + i[None, :], acc)


def test_a_mask_with_equality_is_rejected():
    left = np.ones((16, 16), np.float32)
    output = np.zeros((16, 16), np.float32)
    with pytest.raises(metile.NotSupportedError,
                       match=r"the mask of operand a \(tile<16x16xf32>\) compares with 'eq' "
                             r"\(only lt, le, gt and ge bound a block by its corners\)"):
        _diagonal_operand[(1,)](left, left, output, SCHEDULE=DEVICE)
