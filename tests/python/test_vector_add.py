"""Triton tutorial 01 (vector add) in meTile, on the host target."""

import ml_dtypes
import numpy as np
import pytest

import metile


@metile.kernel
def add(x, y, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask),
                 mask)


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 4097])
def test_buffers_ragged_sizes(n, rng):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = metile.Buffer.zeros(n)
    add[(metile.cdiv(n, 256),)](metile.Buffer(data=x), metile.Buffer(data=y), out, n, BLOCK=256)
    np.testing.assert_array_equal(out.numpy(), x + y)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_dtypes(np_dtype, rng):
    n = 777
    x = rng.standard_normal(n).astype(np_dtype)
    y = rng.standard_normal(n).astype(np_dtype)
    out = np.zeros(n, np_dtype)
    add[(metile.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    np.testing.assert_array_equal(out.astype(np.float32), (x + y).astype(np.float32))


def test_numpy_arrays_are_written_in_place_including_views(rng):
    n = 300
    x = rng.standard_normal(2 * n).astype(np.float32)[::2]  # a strided view
    y = rng.standard_normal(n).astype(np.float32)
    big = np.full((n, 3), 7.0, np.float32)
    out = big[:, 1]  # a non-contiguous view into a larger array
    add[(metile.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    np.testing.assert_array_equal(big[:, 1], x + y)
    np.testing.assert_array_equal(big[:, 0], 7.0)
    np.testing.assert_array_equal(big[:, 2], 7.0)


def test_dlpack_inputs(rng):
    class DLPackOnly:  # exposes only the DLPack protocol, like a framework tensor
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    n = 100
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    add[(1,)](DLPackOnly(x), DLPackOnly(y), DLPackOnly(out), n, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
