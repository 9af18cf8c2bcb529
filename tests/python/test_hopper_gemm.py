"""sm90's tensor_ops backend (wgmma_tma, docs/hopper.md) on the GPU: metile_kernels.gemm's matmul
and matmul_leaky with 128 x 256 x 64 (and 128 x 128 x 64) tiles against torch, in bf16 and f16,
square and ragged (M, N, K not multiples of the tile; K below the tile; M = 1), with and
without the leaky epilogue, and into an f32 output. Skipped unless the default device is cuda
with an sm90 GPU."""

import pytest

import metile

torch = pytest.importorskip("torch")
if metile.device() != "cuda" or not torch.cuda.is_available() or \
        torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("needs the cuda device on an sm90 GPU", allow_module_level=True)

from metile_kernels.gemm import grid, matmul, matmul_leaky  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
# max |out - ref| / max |ref|, by the output's dtype (f32: wgmma's f32 sums, in another order)
TOLERANCE = {"bf16": 2e-2, "f16": 4e-3, "f32": 1e-5}
ALPHA, BETA = 0.5, -0.25
# (M, N, K): a tile multiple, ragged in every dimension, K below BLOCK_K, a single row.
SHAPES = [(512, 512, 256), (300, 200, 72), (129, 264, 1000), (77, 64, 8), (1, 512, 512)]


def run(kernel, dtype, shape, block_n, *scalars, out_dtype=None):
    """The product (computed in f64) and the kernel's output, which starts as NaN: an
    unwritten element fails the comparison."""
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=DTYPES[dtype])
    b = torch.randn(k, n, device="cuda", dtype=DTYPES[dtype])
    c = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype or DTYPES[dtype])
    blocks = dict(BLOCK_M=128, BLOCK_N=block_n, BLOCK_K=64)
    dispatch = kernel[grid(m, n, 128, block_n)].prepare(
        a, b, c, m, n, k, *scalars, SCHEDULE=metile.Schedule(backend="tensor_ops"), **blocks)
    dispatch()
    torch.cuda.synchronize()
    assert dispatch.schedule_plan["backend"]["strategy"] == "wgmma_tma"
    return (a.double() @ b.double()).float(), c.float()


def assert_close(got, want, dtype):
    scale = max(want.abs().max().item(), 1e-30)
    assert (got - want).abs().max().item() / scale <= TOLERANCE[dtype]


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("block_n", [256, 128])
def test_matmul_matches_torch(dtype, shape, block_n):
    want, got = run(matmul, dtype, shape, block_n)
    assert_close(got, want, dtype)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shape", SHAPES)
def test_an_f32_output_matches_torch(dtype, shape):
    # The epilogue's lane-pair exchange moves the accumulator itself: 16-byte pieces.
    want, got = run(matmul, dtype, shape, 256, out_dtype=torch.float32)
    assert_close(got, want, "f32")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shape", SHAPES)
def test_leaky_epilogue_matches_torch(dtype, shape):
    product, got = run(matmul_leaky, dtype, shape, 256, ALPHA, BETA)
    scaled = product * ALPHA + BETA
    assert_close(got, torch.where(scaled > 0, scaled, scaled * 0.1), dtype)


def test_a_grid_that_misses_tiles_is_rejected():
    a = torch.zeros(256, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(64, 256, device="cuda", dtype=torch.bfloat16)
    c = torch.zeros(256, 256, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(Exception, match="grid must cover"):
        matmul[(1, 1)](a, b, c, 256, 256, 64, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
                       SCHEDULE=metile.Schedule(backend="tensor_ops"))


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_a_row_stride_tma_cannot_take_falls_back_under_auto(dtype):
    # K = 129: the left operand's rows are 258 bytes apart, which TMA's tensor maps cannot
    # describe. The launch's divisibility says so, and auto takes the next strategy.
    m, n, k = 1000, 777, 129
    a = torch.randn(m, k, device="cuda", dtype=DTYPES[dtype])
    b = torch.randn(k, n, device="cuda", dtype=DTYPES[dtype])
    c = torch.full((m, n), float("nan"), device="cuda", dtype=DTYPES[dtype])
    dispatch = matmul[grid(m, n, 128, 128)].prepare(a, b, c, m, n, k, BLOCK_M=128, BLOCK_N=128,
                                                   BLOCK_K=64)
    dispatch()
    torch.cuda.synchronize()
    backend = dispatch.schedule_plan["backend"]
    assert backend["strategy"] != "wgmma_tma"
    assert "no multiple of 16 bytes (TMA's rule)" in backend["reason"], backend
    assert_close(c.float(), (a.double() @ b.double()).float(), dtype)
    # Asked for explicitly, the tensor backend says why it cannot.
    with pytest.raises(metile.CompilationError, match="TMA's rule"):
        matmul[grid(m, n, 128, 128)](a, b, c, m, n, k, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                                     SCHEDULE=metile.Schedule(backend="tensor_ops"))


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shape", [(512, 512, 256), (1000, 777, 129), (77, 64, 8), (1, 512, 512)])
def test_default_arguments_take_the_wgmma_tile(dtype, shape):
    # No blocks, no Schedule: default_blocks's 128 x 256 x 64, on TMA where the operands allow
    # it and on the cp.async pipeline where they do not (K = 129).
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=DTYPES[dtype])
    b = torch.randn(k, n, device="cuda", dtype=DTYPES[dtype])
    c = torch.full((m, n), float("nan"), device="cuda", dtype=DTYPES[dtype])
    dispatch = matmul[grid(m, n)].prepare(a, b, c, m, n, k)
    dispatch()
    torch.cuda.synchronize()
    assert dispatch.grid[:2] == (metile.cdiv(m, 128), metile.cdiv(n, 256))
    strategy = dispatch.schedule_plan["backend"]["strategy"]
    assert strategy == ("wgmma_pipelined" if k % 16 else "wgmma_tma"), dispatch.schedule_plan
    assert_close(c.float(), (a.double() @ b.double()).float(), dtype)
