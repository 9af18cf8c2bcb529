"""Sorting rows with `tl.sort` (Triton's bitonic sort along the last dimension): BLOCK_M
rows of a matrix a program, each padded to the power of two BLOCK_N with +inf (ascending)
or -inf (`descending=True`) so that the padding sorts past the real values; and a top-k of
each row as the first K of its descending sort, the way small-vocabulary top-k samplers
(vLLM's and FlagGems' `topk` first stage) write it."""
import triton
import triton.language as tl


@triton.jit
def sort_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_xm, stride_om,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, DESCENDING: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    pad = float("-inf") if DESCENDING else float("inf")
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=pad)
    y = tl.sort(x, descending=DESCENDING)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], y, mask=mask)


@triton.jit
def topk_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_om, K: tl.constexpr,
                BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n_cols, other=float("-inf"))
    y = tl.sort(x, dim=0, descending=True)
    tl.store(out_ptr + row * stride_om + cols, y, mask=cols < K)
