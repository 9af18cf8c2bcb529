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


@pytest.mark.skipif(metile.device() != "cuda", reason="the tutorial's blocks need more shared "
                    "memory than the host target's 32 KB; wgmma is sm90's")
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("blocks,warps", [((128, 128, 64), 4), ((128, 256, 64), 8)],
                         ids=["128x128x64", "128x256x64"])
def test_tutorial_matmul_on_wgmma(matmul, dtype, blocks, warps, rng):
    # Ragged everywhere: the K loop runs on wgmma from swizzled slots (docs/gemm.md, "Software
    # pipelines"), the last K block zero-filled, the epilogue on wgmma's registers.
    m, n, k = 130, 300, 129
    bm, bn, bk = blocks
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = np.full((m, n), np.nan, np.float16)
    grid = (metile.cdiv(m, bm) * metile.cdiv(n, bn),)
    dispatch = matmul[grid].prepare(a, b, c, m, n, k, *strides(a), *strides(b), *strides(c),
                                    BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                                    GROUP_SIZE_M=8, num_warps=warps, num_stages=3)
    dispatch()
    plan = dispatch.execution_report["schedule_plan"]
    assert plan["backend"]["strategy"] == "wgmma_pipelined", plan["double_buffer"]["reason"]
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-2,
                               atol=2e-2)


@pytest.mark.skipif(metile.device() != "cuda", reason="torch CUDA tensors; wgmma is sm90's")
@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "offset_by_one_element"])
def test_tutorial_matmul_on_wgmma_with_divisible_arguments(matmul, offset):
    # Sizes, strides and (at offset 0) addresses multiples of 16: each run of 8 elements is one
    # predicated cp.async without a fallback (docs/gemm.md, "Divisibility"). One element past
    # an aligned allocation, the operands' addresses are not: the copies test them at run time.
    torch = pytest.importorskip("torch")
    m, n, k = 256, 512, 192
    gen = torch.Generator(device="cuda").manual_seed(0)

    def operand(rows, cols):
        storage = torch.randn(rows * cols + offset, device="cuda", generator=gen)
        return storage.to(torch.float16)[offset:].view(rows, cols)

    a, b = operand(m, k), operand(k, n)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid = (metile.cdiv(m, 128) * metile.cdiv(n, 256),)
    dispatch = matmul[grid].prepare(a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                    b.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=128,
                                    BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                                    num_warps=8, num_stages=3)
    dispatch()
    torch.cuda.synchronize()
    # The copies' element-by-element fallback (zero-filled f16 loads) exists only where the
    # addresses are not known to be aligned.
    assert ("metile_half(0.0f)" in dispatch.source) == bool(offset)
    want = (a.float() @ b.float()).half()
    torch.testing.assert_close(c.float(), want.float(), rtol=2e-2, atol=2e-2)


def attention_reference(q, k, v, scale, causal):
    s = np.einsum("zhmd,zhnd->zhmn", q.astype(np.float32), k.astype(np.float32)) * scale
    if causal:
        n = q.shape[2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float32)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_attention_runs_verbatim(dtype, causal, rng):
    module, edits = load("attention", "metile")
    assert edits == []
    z, h, n, d = 2, 2, 70, 32  # a ragged sequence: the last query and key tiles are partial
    q, k, v = (rng.standard_normal((z, h, n, d)).astype(dtype) for _ in range(3))
    out = np.full((z, h, n, d), np.nan, dtype)
    args = [q, k, v, out, 0.3]
    for x in (q, k, v, out):
        args += strides(x)
    module.attn_fwd[(metile.cdiv(n, 32), z * h)](*args, h, n, HEAD_DIM=d, BLOCK_M=32,
                                                BLOCK_N=16, CAUSAL=causal)
    tolerance = 2e-3 if dtype == np.float16 else 2e-2
    np.testing.assert_allclose(out.astype(np.float32), attention_reference(q, k, v, 0.3, causal),
                               rtol=tolerance, atol=tolerance)
