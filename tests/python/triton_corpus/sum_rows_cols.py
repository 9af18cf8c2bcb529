"""Row sums and column sums of a 2-D matrix, in the idiom of the Triton tutorials and of
FlagGems' `sum_dim`: a program takes BLOCK_M rows and walks the columns in BLOCK_N chunks,
adding `tl.sum(x, axis=1)` into an f32 row accumulator; the column sum takes BLOCK_N columns
and walks the rows in BLOCK_M chunks into a 2-D f32 accumulator, reduced with
`tl.sum(acc, axis=0)` after the loop. Strided, masked loads; any shape (ragged edges)."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_xm, stride_xn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for start_n in range(0, n_cols, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn,
                    mask=mask, other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + rows, acc, mask=row_mask)


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_xm, stride_xn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start_m in range(0, n_rows, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_rows) & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn,
                    mask=mask, other=0.0)
        acc += x.to(tl.float32)
    out = tl.sum(acc, axis=0)
    tl.store(out_ptr + cols, out.to(out_ptr.dtype.element_ty), mask=col_mask)
