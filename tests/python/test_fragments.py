"""Seed 002's two_products: matrix fragments in shared memory, two products and a ReLU,
against numpy, in f32 and f16 shared storage, under Apple's lane map and a permuted one. The
kernel is the seed's, with STORAGE for the operands' shared dtype (f16 needs the ReLU cast to
it, as both inputs of a dot share one dtype)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import metile


@metile.kernel
def two_products(A, B, Output, *, BLOCK: metile.constexpr = 32, STORAGE: metile.constexpr = "f32"):
    left_memory = metile.shared(64, dtype=STORAGE)
    right_memory = metile.shared(64, dtype=STORAGE)
    result_memory = metile.shared(64, dtype="f32")
    left = metile.tensor(A, shape=(8, 8), access="read")
    right = metile.tensor(B, shape=(8, 8), access="read")
    output = metile.tensor(Output, shape=(8, 8), access="write")
    left_values = metile.tensor(left_memory, shape=(8, 8))
    right_values = metile.tensor(right_memory, shape=(8, 8))
    result_values = metile.tensor(result_memory, shape=(8, 8))
    left_matrix = metile.tensor(left_memory, shape=(8, 8), block_shape=(8, 8))
    right_matrix = metile.tensor(right_memory, shape=(8, 8), block_shape=(8, 8))
    result_matrix = metile.tensor(result_memory, shape=(8, 8), block_shape=(8, 8))
    for index in metile.tile_range(metile.thread_id(), 64, BLOCK):
        position = (index // 8, index % 8)
        left_values.store(position, left.load(position).to(STORAGE))
        right_values.store(position, right.load(position).to(STORAGE))
    metile.barrier()
    left_fragment = left_matrix.load((0, 0))
    right_fragment = right_matrix.load((0, 0))
    first = metile.dot(left_fragment, right_fragment, metile.zeros((8, 8)))
    relu = metile.maximum(first, 0.0).to(STORAGE)
    second = metile.dot(relu, right_fragment, metile.zeros((8, 8)))
    result_matrix.store((0, 0), second)
    metile.barrier()
    for index in metile.tile_range(metile.thread_id(), 64, BLOCK):
        position = (index // 8, index % 8)
        output.store(position, result_values.load(position))


@pytest.mark.parametrize("storage", ["f32", "f16"])
def test_two_products_matches_numpy(storage):
    rng = np.random.default_rng(3)
    a = (rng.integers(-4, 5, (8, 8)) / 4).astype(np.float32)
    b = (rng.integers(-4, 5, (8, 8)) / 4).astype(np.float32)
    out = np.zeros((8, 8), np.float32)
    two_products[(1,)](a, b, out, STRICT_MATH=True, STORAGE=storage,
                       SCHEDULE=metile.Schedule(backend="simdgroup_inline"))
    np.testing.assert_allclose(out, np.maximum(a @ b, 0) @ b, rtol=1e-6, atol=1e-6)


def test_two_products_under_a_permuted_lane_map():
    env = dict(os.environ, METILE_HOST_MATRIX_LANE_MAP="permuted")
    code = ("import sys; sys.path.insert(0, %r); import test_fragments as t; "
            "t.test_two_products_matches_numpy('f32'); t.test_two_products_matches_numpy('f16')"
            % os.path.dirname(__file__))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_fragments_without_the_inline_backend_name_the_schedule():
    a = np.eye(8, dtype=np.float32)
    with pytest.raises(metile.CompilationError, match=r'SCHEDULE=metile.Schedule\(backend="simdgroup_inline"\)'):
        two_products[(1,)](a, a, np.zeros((8, 8), np.float32), STRICT_MATH=True)


@metile.kernel
def publish(A, Output, *, BARRIERS: metile.constexpr = (True, True)):
    memory = metile.shared(64, dtype="f32")
    source = metile.tensor(A, shape=(8, 8), access="read")
    output = metile.tensor(Output, shape=(8, 8), access="write")
    values = metile.tensor(memory, shape=(8, 8))
    matrix = metile.tensor(memory, shape=(8, 8), block_shape=(8, 8))
    for index in metile.tile_range(metile.thread_id(), 64, 32):
        position = (index // 8, index % 8)
        values.store(position, source.load(position))
    if BARRIERS[0]:
        metile.barrier()
    doubled = matrix.load((0, 0)) * 2.0
    metile.barrier()
    matrix.store((0, 0), doubled)
    if BARRIERS[1]:
        metile.barrier()
    for index in metile.tile_range(metile.thread_id(), 64, 32):
        position = (index // 8, index % 8)
        output.store(position, values.load(position))


@pytest.mark.parametrize("barriers, rule", [
    ((False, True), "a matrix load of shared allocation .* follows a scalar store .*"
                    "a barrier must publish scalar writes before a matrix load reads them"),
    ((True, False), "a scalar load of shared allocation .* follows a matrix store .*"
                    "a barrier must publish a matrix store before scalar loads read it"),
])
def test_a_missing_barrier_is_named(barriers, rule):
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    with pytest.raises(metile.CompilationError, match=rule):
        publish[(1,)](a, np.zeros((8, 8), np.float32), BARRIERS=barriers,
                      SCHEDULE=metile.Schedule(backend="simdgroup_inline"))
    out = np.zeros((8, 8), np.float32)
    publish[(1,)](a, out, SCHEDULE=metile.Schedule(backend="simdgroup_inline"))
    np.testing.assert_array_equal(out, 2 * a)


@metile.kernel
def carried(A, Output, *, STEPS: metile.constexpr = 3):
    memory = metile.shared(64, dtype="f32")
    source = metile.tensor(A, shape=(8, 8), access="read")
    output = metile.tensor(Output, shape=(8, 8), access="write")
    values = metile.tensor(memory, shape=(8, 8))
    matrix = metile.tensor(memory, shape=(8, 8), block_shape=(8, 8))
    for index in metile.tile_range(metile.thread_id(), 64, 32):
        position = (index // 8, index % 8)
        values.store(position, source.load(position))
    metile.barrier()
    a = matrix.load((0, 0))
    total = metile.loop_state(metile.zeros((8, 8)))
    power = a
    for step in metile.tile_range(0, STEPS, 1):
        power = metile.dot(power, a, metile.zeros((8, 8)))
        total = metile.dot(a, a, total) + 1.0
    metile.barrier()
    matrix.store((0, 0), power + total)
    metile.barrier()
    for index in metile.tile_range(metile.thread_id(), 64, 32):
        position = (index // 8, index % 8)
        output.store(position, values.load(position))


def test_loops_carry_fragments():
    rng = np.random.default_rng(5)
    a = (rng.integers(-2, 3, (8, 8)) / 2).astype(np.float32)
    out = np.zeros((8, 8), np.float32)
    carried[(1,)](a, out, STRICT_MATH=True, SCHEDULE=metile.Schedule(backend="simdgroup_inline"))
    expected = np.linalg.matrix_power(a, 4) + 3 * (a @ a) + 3
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


def test_loop_state_takes_fragments_or_uniform_tiles():
    @metile.kernel
    def ramp(Output):
        metile.loop_state(metile.arange(0, 8).to("f32"))

    with pytest.raises(metile.CompilationError,
                       match=r"loop_state: a matrix fragment, or a uniform float 8x8 tile"):
        ramp[(1,)](np.zeros(8, np.float32), SCHEDULE=metile.Schedule(backend="simdgroup_inline"))


# Seed 002's example exactly as the seed writes it (the kernel above adds only STORAGE).
@metile.kernel
def seed_two_products(A, B, Output, *, BLOCK: metile.constexpr = 32):
    left_memory = metile.shared(64, dtype="f32")
    right_memory = metile.shared(64, dtype="f32")
    result_memory = metile.shared(64, dtype="f32")
    left = metile.tensor(A, shape=(8, 8), access="read")
    right = metile.tensor(B, shape=(8, 8), access="read")
    output = metile.tensor(Output, shape=(8, 8), access="write")
    left_values = metile.tensor(left_memory, shape=(8, 8))
    right_values = metile.tensor(right_memory, shape=(8, 8))
    result_values = metile.tensor(result_memory, shape=(8, 8))
    left_matrix = metile.tensor(left_memory, shape=(8, 8), block_shape=(8, 8))
    right_matrix = metile.tensor(right_memory, shape=(8, 8), block_shape=(8, 8))
    result_matrix = metile.tensor(result_memory, shape=(8, 8), block_shape=(8, 8))
    for index in metile.tile_range(metile.thread_id(), 64, BLOCK):
        position = (index // 8, index % 8)
        left_values.store(position, left.load(position))
        right_values.store(position, right.load(position))
    metile.barrier()
    left_fragment = left_matrix.load((0, 0))
    right_fragment = right_matrix.load((0, 0))
    first = metile.dot(left_fragment, right_fragment, metile.zeros((8, 8)))
    second = metile.dot(metile.maximum(first, 0.0), right_fragment, metile.zeros((8, 8)))
    result_matrix.store((0, 0), second)
    metile.barrier()
    for index in metile.tile_range(metile.thread_id(), 64, BLOCK):
        position = (index // 8, index % 8)
        output.store(position, result_values.load(position))


def test_the_seed_two_products_runs_as_written():
    rng = np.random.default_rng(5)
    left_buffer = rng.standard_normal((8, 8)).astype(np.float32)
    right_buffer = rng.standard_normal((8, 8)).astype(np.float32)
    output_buffer = np.zeros((8, 8), np.float32)
    seed_two_products[(1,)](
        left_buffer, right_buffer, output_buffer,
        STRICT_MATH=True,
        SCHEDULE=metile.Schedule(backend="simdgroup_inline"),
    )
    expected = np.maximum(left_buffer.astype(np.float64) @ right_buffer, 0) @ right_buffer
    np.testing.assert_allclose(output_buffer, expected, rtol=1e-5, atol=1e-5)


def test_fragments_under_another_matrix_backend_are_rejected_by_the_plan():
    a = np.eye(8, dtype=np.float32)
    with pytest.raises(metile.CompilationError,
                       match=r"matrix fragment op\(s\) are lowered by backend='simdgroup_inline' only"):
        seed_two_products[(1,)](a, a, np.zeros((8, 8), np.float32), STRICT_MATH=True,
                                SCHEDULE=metile.Schedule(backend="simdgroup"))
