"""Sums by integer key with f32 atomics, the embedding-bag / scatter-add idiom (the backward
of an embedding lookup in Liger-Kernel and unsloth, `index_add` and `scatter_add` in
FlagGems): BLOCK_R rows of `values` [n, D] a program, each row added into row `keys[i]` of the
pre-zeroed `out` [num_segments, D] by a masked 2-D `tl.atomic_add`. Beside it, per-row
integer checksums: `tl.xor_sum` of each row and its maximum through `tl.reduce` with a
`@triton.jit` combine that returns `tl.maximum(a, b)`."""
import triton
import triton.language as tl


@triton.jit
def segment_sum_kernel(values_ptr, keys_ptr, out_ptr, n_rows, D, stride_v, stride_o,
                       BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < n_rows
    keys = tl.load(keys_ptr + rows, mask=row_mask, other=0)
    for start_d in range(0, D, BLOCK_D):
        cols = start_d + tl.arange(0, BLOCK_D)
        mask = row_mask[:, None] & (cols[None, :] < D)
        v = tl.load(values_ptr + rows[:, None] * stride_v + cols[None, :], mask=mask,
                    other=0.0)
        tl.atomic_add(out_ptr + keys[:, None] * stride_o + cols[None, :], v.to(tl.float32),
                      mask=mask)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def row_xor_max_kernel(x_ptr, xor_ptr, max_ptr, n_rows, n_cols, stride_m,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0)
    checksum = tl.xor_sum(x, axis=1)
    row_max = tl.reduce(tl.where(mask, x, -2147483648), 1, _max_combine)
    tl.store(xor_ptr + rows, checksum, mask=rows < n_rows)
    tl.store(max_ptr + rows, row_max, mask=rows < n_rows)
