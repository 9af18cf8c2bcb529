"""Prefix sums with `tl.cumsum`: the inclusive scan of each row of a matrix, BLOCK_M rows a
program over one BLOCK_N-wide tile (the next power of two of the row length, masked), and
one long vector scanned by a single program in BLOCK chunks, each chunk's `tl.cumsum` offset
by the running total of the chunks before it (the carried-sum idiom of FlagGems' `cumsum`
for a row that does not fit one block)."""
import triton
import triton.language as tl


@triton.jit
def cumsum_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_xm, stride_om,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    y = tl.cumsum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :],
             y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def cumsum_long_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    running = 0.0
    for start in range(0, n_elements, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + running
        tl.store(out_ptr + offsets, y, mask=mask)
        running += tl.sum(x, axis=0)
