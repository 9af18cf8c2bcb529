"""Tiled 2-D transpose, y = x.T for x of (M, N): one program per [BLOCK_M, BLOCK_N] tile of x,
masked at ragged edges. `transpose_kernel` loads the tile and stores `tl.trans(tile)` at the
mirrored position of y; `transpose_strided_kernel` stores the tile as loaded through y's
swapped strides, as FlagGems' and torch-inductor's copy kernels write a permuted copy."""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(
    x_ptr, y_ptr,
    M, N,
    stride_xm, stride_xn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn
    x_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptrs, mask=x_mask, other=0)
    # y is (N, M): the tile lands at rows offs_n, columns offs_m
    y_ptrs = y_ptr + offs_n[:, None] * stride_ym + offs_m[None, :] * stride_yn
    y_mask = (offs_n[:, None] < N) & (offs_m[None, :] < M)
    tl.store(y_ptrs, tl.trans(tile), mask=y_mask)


@triton.jit
def transpose_strided_kernel(
    x_ptr, y_ptr,
    M, N,
    stride_xm, stride_xn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn,
                   mask=mask, other=0)
    # y[n, m] = x[m, n]: y's strides swapped
    tl.store(y_ptr + offs_m[:, None] * stride_yn + offs_n[None, :] * stride_ym, tile, mask=mask)
