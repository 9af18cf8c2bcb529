"""Seed 002's two_products: matrix fragments in shared memory, two products and a ReLU,
against numpy, in f32 and f16 shared storage, under Apple's lane map and a permuted one. The
second copy loop names its coordinates `place`: the tracer does not yet let a tuple variable
of one loop be reassigned in another."""

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
        place = (index // 8, index % 8)
        output.store(place, result_values.load(place))


@pytest.mark.parametrize("storage", ["f32", "f16"])
def test_two_products_matches_numpy(storage):
    rng = np.random.default_rng(3)
    a = (rng.integers(-4, 5, (8, 8)) / 4).astype(np.float32)
    b = (rng.integers(-4, 5, (8, 8)) / 4).astype(np.float32)
    out = np.zeros((8, 8), np.float32)
    two_products[(1,)](a, b, out, STRICT_MATH=True, STORAGE=storage)
    np.testing.assert_allclose(out, np.maximum(a @ b, 0) @ b, rtol=1e-6, atol=1e-6)


def test_two_products_under_a_permuted_lane_map():
    env = dict(os.environ, METILE_HOST_MATRIX_LANE_MAP="permuted")
    code = ("import sys; sys.path.insert(0, %r); import test_fragments as t; "
            "t.test_two_products_matches_numpy('f32'); t.test_two_products_matches_numpy('f16')"
            % os.path.dirname(__file__))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_device_fragment_views_name_scratch():
    @metile.kernel
    def device_view(Source):
        metile.tensor(Source, shape=(8, 8), block_shape=(8, 8), access="read")

    with pytest.raises(metile.NotSupportedError, match="scratch="):
        device_view[(1,)](np.zeros((8, 8), np.float32))
