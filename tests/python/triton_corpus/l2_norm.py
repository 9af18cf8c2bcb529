"""Per-row L2 normalisation, y = x / max(||x||_2, eps) (torch.nn.functional.normalize, as
FlagGems and the L2-norm kernels of the FLA/Liger libraries write it): one row per program in
one power-of-two block when the row fits, `tl.sqrt(tl.sum(x * x))` in f32 and the result
cast back to the input dtype; and a two-pass form for long rows that accumulates the sum of
squares over BLOCK_N chunks, then rescales each chunk by `1 / max(norm, eps)`, storing the
norm as well."""
import triton
import triton.language as tl


@triton.jit
def l2_norm_kernel(x_ptr, y_ptr, stride_x, stride_y, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=0))
    y = x / tl.maximum(norm, eps)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def l2_norm_long_kernel(x_ptr, y_ptr, norm_ptr, stride_x, stride_y, n_cols, eps,
                        BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride_x
    y_ptr += row * stride_y
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    norm = tl.sqrt(tl.sum(acc, axis=0))
    tl.store(norm_ptr + row, norm)
    scale = 1.0 / tl.maximum(norm, eps)
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + cols, (x * scale).to(y_ptr.dtype.element_ty), mask=mask)
