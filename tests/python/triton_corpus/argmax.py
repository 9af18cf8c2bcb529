"""Argmax over long rows, as FlagGems writes `argmax` along a dimension: a program takes
BLOCK_M rows and walks the columns in BLOCK_N chunks, each chunk reduced with
`tl.max(x, 1, return_indices=True)`; the best value and its index are kept across chunks with
a strict `>` (so ties keep the earlier chunk, and within a chunk `tl.max` gives the first
index, as Triton's). A second kernel gives one row per program with `tl.argmax(x, axis=0)` on
each chunk and carries the best value and index as scalars, in the way Liger-Kernel's
cross-entropy carries its running max (`m = float("-inf")` before the loop)."""
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, out_value_ptr, out_index_ptr, M, N, stride_m,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    m_offset = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = m_offset < M
    max_values = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    argmax_values = tl.full([BLOCK_M], 0, dtype=tl.int32)
    for start_n in range(0, N, BLOCK_N):
        n_offset = start_n + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (n_offset[None, :] < N)
        inp = tl.load(x_ptr + m_offset[:, None] * stride_m + n_offset[None, :], mask=mask,
                      other=float("-inf")).to(tl.float32)
        local_max, local_argmax = tl.max(inp, 1, return_indices=True)
        update = local_max > max_values
        max_values = tl.where(update, local_max, max_values)
        argmax_values = tl.where(update, start_n + local_argmax, argmax_values)
    tl.store(out_value_ptr + m_offset, max_values, mask=row_mask)
    tl.store(out_index_ptr + m_offset, argmax_values, mask=row_mask)


@triton.jit
def argmax_row_kernel(x_ptr, out_index_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_m
    best_value = float("-inf")
    best_index = 0
    for start_n in range(0, N, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        chunk_index = tl.argmax(x, axis=0)
        chunk_value = tl.max(x, axis=0)
        better = chunk_value > best_value
        best_index = tl.where(better, start_n + chunk_index, best_index)
        best_value = tl.where(better, chunk_value, best_value)
    tl.store(out_index_ptr + row, best_index)
