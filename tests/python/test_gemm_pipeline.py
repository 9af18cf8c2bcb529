"""The SIMD-group GEMM's expert controls (seed 002's table, seed 004's two-stage pipeline):
double_buffer=True against numpy on ragged shapes, f16/bf16/f32, with and without the double
buffer and under a permuted matrix lane map; the pipeline in execution_report.pipelines and
the allocation report; each rejection's message."""

import json
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import metile
from metile_kernels.gemm import grid, matmul

BF16 = ml_dtypes.bfloat16


def _inputs(rng, shape, dtype):
    # Small multiples of 1/2 keep every product and partial sum exact in f32.
    return (rng.integers(-4, 5, shape) * 0.5).astype(dtype)


def _run(rows, columns, inner, dtype, schedule, rng, blocks=(32, 32, 16), **options):
    left, right = _inputs(rng, (rows, inner), dtype), _inputs(rng, (inner, columns), dtype)
    output = np.full((rows, columns), 7, np.float32)  # every element must be overwritten
    dispatch = matmul[grid(rows, columns, blocks[0], blocks[1])].prepare(
        left, right, output, rows, columns, inner, BLOCK_M=blocks[0], BLOCK_N=blocks[1],
        BLOCK_K=blocks[2], SCHEDULE=schedule, **options)
    dispatch()
    np.testing.assert_array_equal(output, left.astype(np.float32) @ right.astype(np.float32))
    return dispatch


# Ragged in every dimension, K shorter than one BLOCK_K, and K one exact block.
@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
@pytest.mark.parametrize("rows,columns,inner", [(70, 45, 37), (9, 23, 5), (33, 17, 16)])
@pytest.mark.parametrize("double_buffer", [True, False])
def test_ragged_matmul_with_and_without_double_buffer(rows, columns, inner, dtype,
                                                      double_buffer, rng):
    schedule = metile.Schedule(backend="simdgroup", staging="threadgroup",
                               double_buffer=double_buffer)
    report = _run(rows, columns, inner, dtype, schedule, rng).execution_report
    assert len(report["pipelines"]) == (1 if double_buffer else 0)


# num_stages deepens the ring: the prologue copies stages - 1 tiles, each only where it exists
# (K of 3, 1 and 5 blocks against 2 and 3 tiles ahead).
@pytest.mark.parametrize("stages", [3, 4])
@pytest.mark.parametrize("rows,columns,inner", [(70, 45, 37), (9, 23, 5), (33, 17, 80)])
def test_deeper_pipelines_from_num_stages(rows, columns, inner, stages, rng):
    schedule = metile.Schedule(backend="simdgroup", staging="threadgroup", double_buffer=True)
    report = _run(rows, columns, inner, BF16, schedule, rng, num_stages=stages).execution_report
    (pipeline,) = report["pipelines"]
    assert pipeline["stages"] == stages
    assert [b["slots"] for b in pipeline["buffers"]] == [stages, stages]
    prologue = [s for s in pipeline["sequence"] if s["phase"] == "prologue"]
    assert len(prologue) == 2 * (stages - 1)  # a copy and a publication per tile ahead


@metile.kernel
def _staged_matmul(a, b, c, K, STAGES: metile.constexpr):
    """A 32 x 32 product whose K loop names its own depth, as Triton's tl.range does."""
    i = metile.arange(0, 32)
    k0 = metile.arange(0, 16)
    acc = metile.zeros((32, 32), dtype="f32")
    for k in metile.range(0, K, 16, num_stages=STAGES):
        x = metile.load(a + i[:, None] * K + (k + k0)[None, :], mask=(k + k0)[None, :] < K,
                        other=0.0)
        y = metile.load(b + (k + k0)[:, None] * 32 + i[None, :], mask=(k + k0)[:, None] < K,
                        other=0.0)
        acc = metile.dot(x, y, acc)
    metile.store(c + i[:, None] * 32 + i[None, :], acc)


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_a_loops_num_stages_sets_its_depth(stages, rng):
    inner = 37
    left, right = _inputs(rng, (32, inner), np.float16), _inputs(rng, (inner, 32), np.float16)
    out = np.zeros((32, 32), np.float32)
    schedule = metile.Schedule(backend="simdgroup", staging="threadgroup", double_buffer=True)
    dispatch = _staged_matmul[(1,)].prepare(left, right, out, inner, STAGES=stages,
                                             SCHEDULE=schedule)
    dispatch()
    np.testing.assert_array_equal(out, left.astype(np.float32) @ right.astype(np.float32))
    assert [p["stages"] for p in dispatch.execution_report["pipelines"]] == [stages]


def test_the_pipeline_is_reported_with_its_storage(rng):
    schedule = metile.Schedule(backend="simdgroup", staging="threadgroup", double_buffer=True)
    report = _run(40, 40, 40, np.float16, schedule, rng).execution_report
    (pipeline,) = report["pipelines"]
    # On CUDA the copies are cp.async and the rows padded by 16 bytes for ldmatrix.
    cuda = metile.device() == "cuda"
    assert (pipeline["stages"], pipeline["copy"], pipeline["sync"]) == (
        2, "asynchronous" if cuda else "synchronous", "threadgroup_barrier")
    a, b = pipeline["buffers"]
    pad = 8 if cuda else 0
    assert (a["operand"], a["dtype"], a["slot_shape"], a["slots"]) == ("a", "f16", [32, 16], 2)
    assert (b["operand"], b["slot_shape"], b["row_stride"], b["slot_bytes"]) == (
        "b", [16, 32], 32 + pad, 16 * (32 + pad) * 2)
    assert pipeline["bytes"] == 2 * (32 * (16 + pad) + 16 * (32 + pad)) * 2
    steps = [(s["phase"], s["action"]) for s in pipeline["sequence"]]
    assert steps == [("prologue", "copy"), ("prologue", "publish"), ("steady", "copy"),
                     ("steady", "consume"), ("steady", "publish"), ("steady", "release"),
                     ("steady", "rotate"), ("drain", "consume"), ("drain", "release")]
    allocations = {x["purpose"]: x for x in report["allocations"]}
    for buffer in (a, b):
        allocation = allocations[buffer["allocation"]]
        assert (allocation["offset"], allocation["bytes"]) == (buffer["offset"],
                                                               2 * buffer["slot_bytes"])
    assert [x["allocation"] for x in report["buffering"]] == [a["allocation"], b["allocation"]]
    assert report["schedule_plan"]["double_buffer"]["value"] is True
    assert pipeline["verified"] == ["types", "threadgroup capacity", "uniform control flow",
                                    "copy ownership", "fragment bounds", "publication",
                                    "slot reuse"]


def test_double_buffer_under_a_permuted_lane_map():
    env = dict(os.environ, METILE_HOST_MATRIX_LANE_MAP="permuted")
    code = ("import sys; sys.path.insert(0, %r); import numpy as np; import test_gemm_pipeline "
            "as t; t.test_ragged_matmul_with_and_without_double_buffer(70, 45, 37, np.float16, "
            "True, np.random.default_rng(3))" % os.path.dirname(__file__))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


@metile.kernel
def _dot_and_sum(left, right, output, total, BLOCK: metile.constexpr = 16):
    """A K loop that also sums its a tiles: not the canonical pipelined loop."""
    i = metile.arange(0, BLOCK)
    acc = metile.zeros((BLOCK, BLOCK), dtype="f32")
    running = metile.zeros((BLOCK, BLOCK), dtype="f32")
    for k in metile.tile_range(0, 32, BLOCK):
        a = metile.load(left + i[:, None] * 32 + (k + i)[None, :])
        b = metile.load(right + (k + i)[:, None] * BLOCK + i[None, :])
        acc = metile.dot(a, b, acc)
        running = running + a
    metile.store(output + i[:, None] * BLOCK + i[None, :], acc)
    metile.store(total + i[:, None] * BLOCK + i[None, :], running)


def test_a_loop_that_is_not_canonical_is_rejected_whole():
    left, right = np.ones((16, 32), np.float32), np.ones((32, 16), np.float32)
    output, total = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    schedule = metile.Schedule(backend="simdgroup", double_buffer=True)
    with pytest.raises(metile.NotSupportedError,
                       match=r"Schedule\(double_buffer=True\) cannot pipeline for .*: it carries "
                             r"2 values; the pipelined loop carries only the dot's accumulator"):
        _dot_and_sum[(1,)](left, right, output, total, SCHEDULE=schedule)
    # Without the requirement the same loop runs single-buffered.
    _dot_and_sum[(1,)](left, right, output, total, SCHEDULE=metile.Schedule(backend="simdgroup"))
    np.testing.assert_array_equal(output, left @ right)


def test_seed_002_checked_expert_controls_run_as_written(capsys):
    # Seed 002's first example, verbatim but for the setup its text describes: grid covers
    # the output tiles and the buffers hold row-major matrices of rows x inner, inner x
    # columns and rows x columns (ragged here: vectorized interiors, scalar tails).
    import metile
    from metile_kernels.gemm import matmul

    rows, columns, inner = 70, 45, 37
    rng = np.random.default_rng(5)
    left = _inputs(rng, (rows, inner), np.float16)
    right = _inputs(rng, (inner, columns), np.float16)
    output = np.zeros((rows, columns), np.float32)
    grid = (metile.cdiv(rows, 64), metile.cdiv(columns, 64))

    schedule = metile.Schedule(
        backend="simdgroup",
        num_simdgroups=4,
        staging="threadgroup",
        vector_width=4,
        double_buffer=False,
    )
    dispatch = matmul[grid].prepare(
        left, right, output, rows, columns, inner,
        BLOCK_M=64, BLOCK_N=64, BLOCK_K=16,
        RELAXED_PRECISION=False,
        SCHEDULE=schedule,
    )
    print(dispatch.explain())
    dispatch()

    np.testing.assert_array_equal(output, left.astype(np.float32) @ right.astype(np.float32))
    report = json.loads(capsys.readouterr().out)
    assert report["geometry"]["threads_per_threadgroup"] == [128, 1, 1]
    assert report["schedule_plan"]["vector_width"]["value"] == 4
    assert report["grouped_loads"] == 4  # two runs of four per thread in a and in b


def test_width_four_rejects_what_it_cannot_vectorize(rng):
    left, right = _inputs(rng, (64, 32), BF16), _inputs(rng, (32, 64), BF16)
    output = np.zeros((64, 64), np.float32)
    with pytest.raises(metile.NotSupportedError,
                       match=r"Schedule\(vector_width=4\) requires vectorized aligned operand "
                             r"interiors .*arbitrary ragged shapes may reject it: a tile "
                             r"tile<64x16xbf16>: grouped vector accesses move f16 or f32"):
        matmul[grid(64, 64)].prepare(left, right, output, 64, 64, 32,
                                     SCHEDULE=metile.Schedule(backend="simdgroup",
                                                              vector_width=4))
