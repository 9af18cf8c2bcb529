"""The out-of-bounds probes test_bounds.py (the host emulator) and test_cuda_bounds.py
(METILE_DEBUG=bounds on an NVIDIA GPU) both run: two kernels that read a tile of BLOCK elements
from a runtime or a constant offset, the reads that end 1, 2, 3, 15 and 16 bytes, one element
and 100,000 elements past a buffer of N elements, a write one element too many, a masked copy that stays
inside, and the launch that makes the tile's last element a given one."""

import inspect

import numpy as np

import metile

N = 61  # elements: no size below is a multiple of 16 bytes, so each buffer has slack
BLOCK = 16
DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32}
try:
    import ml_dtypes

    DTYPES["bf16"] = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover
    pass


@metile.kernel
def read_runtime(X, out, start, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    x = metile.load(X + start + offs)  # the runtime-offset read
    metile.store(out + offs, x)


@metile.kernel
def read_constant(X, out, START: metile.constexpr, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    x = metile.load(X + offs + START)  # the constant-offset read
    metile.store(out + offs, x)


@metile.kernel
def write_past(out, n, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    metile.store(out + offs, offs.to(metile.float32), offs <= n)  # one too many


@metile.kernel
def masked_copy(X, out, n, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    metile.store(out + offs, metile.load(X + offs, offs < n, other=-1.0), offs < n)


def line_of(function, text):
    source, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(source) if text in line)


def last_index(dtype, bytes_past):
    """The element whose read is the first to reach `bytes_past` bytes beyond the buffer."""
    size = np.dtype(dtype).itemsize
    return (N * size + bytes_past - 1) // size


CASES = {f"{b}_bytes": (lambda dtype, b=b: last_index(dtype, b)) for b in (1, 2, 3, 15, 16)}
CASES["one_element"] = lambda dtype: N
CASES["far_beyond"] = lambda dtype: N + 100000


def launch(kernel, dtype, target, constant):
    """Runs `kernel` so that its tile's last element is `target`."""
    x = np.arange(N).astype(dtype)
    out = np.zeros(BLOCK, dtype)
    start = target - (BLOCK - 1)
    if constant:
        kernel[(1,)](x, out, START=start, BLOCK=BLOCK)
    else:
        kernel[(1,)](x, out, start, BLOCK=BLOCK)
    return x, out
