"""Softmax backward per row, dx = y * (dy - sum(y * dy)), in Liger-Kernel's two forms: one
block per row (`softmax_bwd_single_block_kernel`, BLOCK_SIZE the next power of two of
n_cols) and, for rows longer than a block, two passes over `tl.range(0, n_cols, BLOCK_SIZE)`
(`softmax_bwd_multi_block_kernel`: the dot product first, then dx). y and dy in f32, f16 or
bf16, computed in f32, dx in dy's dtype."""
import triton
import triton.language as tl


@triton.jit
def softmax_bwd_single_block_kernel(dy_ptr, dy_stride, y_ptr, y_stride, dx_ptr, dx_stride,
                                    n_cols, BLOCK_SIZE: tl.constexpr):
    row_id = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols

    dy = tl.load(dy_ptr + row_id * dy_stride + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + row_id * y_stride + offs, mask=mask, other=0.0,
                cache_modifier=".ca")
    dot = tl.sum(dy.to(tl.float32) * y.to(tl.float32), axis=0)
    dx = y.to(tl.float32) * (dy.to(tl.float32) - dot)
    tl.store(dx_ptr + row_id * dx_stride + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask,
             cache_modifier=".wb")


@triton.jit
def softmax_bwd_multi_block_kernel(dy_ptr, dy_stride, y_ptr, y_stride, dx_ptr, dx_stride,
                                   n_cols, BLOCK_SIZE: tl.constexpr):
    row_id = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    acc = 0.0

    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        dy_blk = tl.load(dy_ptr + row_id * dy_stride + idx, mask=mask, other=0.0)
        y_blk = tl.load(y_ptr + row_id * y_stride + idx, mask=mask, other=0.0,
                        cache_modifier=".ca")
        acc += tl.sum(dy_blk.to(tl.float32) * y_blk.to(tl.float32), axis=0)

    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        dy_blk = tl.load(dy_ptr + row_id * dy_stride + idx, mask=mask, other=0.0)
        y_blk = tl.load(y_ptr + row_id * y_stride + idx, mask=mask, other=0.0,
                        cache_modifier=".ca")
        dx_blk = y_blk.to(tl.float32) * (dy_blk.to(tl.float32) - acc)
        tl.store(dx_ptr + row_id * dx_stride + idx, dx_blk.to(dx_ptr.dtype.element_ty),
                 mask=mask, cache_modifier=".wb")
