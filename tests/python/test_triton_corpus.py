"""The Triton corpus (tests/python/triton_corpus/): kernels in Triton's language, run with
only the import renamed (`import metile as triton`, `import metile as tl`) on the default
device, each checked against numpy, ragged shapes included. benchmarks/h200_triton_sources.py
times the same sources against Triton on a GPU."""

import ml_dtypes
import numpy as np
import pytest

import metile
from triton_corpus.load import EDITS, load


@pytest.fixture(scope="module")
def matmul():
    module, edits = load("matmul", "metile")
    assert edits == [] and "matmul" not in EDITS  # the tutorial's text, as written
    return module.matmul_kernel


def strides(x):
    return [s // x.itemsize for s in x.strides]


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("shape,blocks", [
    ((70, 45, 37), (32, 32, 16)),   # ragged M, N and K; K not a multiple of BLOCK_SIZE_K
    ((1, 64, 48), (16, 32, 16)),    # one row
    ((64, 128, 64), (32, 64, 32)),  # complete tiles, several programs per group
], ids=["ragged", "one_row", "complete"])
def test_tutorial_matmul_runs_verbatim(matmul, dtype, shape, blocks, rng):
    m, n, k = shape
    bm, bn, bk = blocks
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = np.full((m, n), np.nan, np.float16)
    grid = (metile.cdiv(m, bm) * metile.cdiv(n, bn),)
    matmul[grid](a, b, c, m, n, k, *strides(a), *strides(b), *strides(c), BLOCK_SIZE_M=bm,
                 BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-3,
                               atol=2e-3)
