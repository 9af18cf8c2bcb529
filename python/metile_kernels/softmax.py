"""Row softmax of any row length, three passes over the row in BLOCK-wide tiles (maximum,
sum of exponentials, output), in FP32, rounded only on the store; the first tile stays in
registers across the passes, so a row of at most BLOCK columns is read once:

    softmax_rows[(rows,)](x, y, n_cols, row_stride, BLOCK=...)

x and y hold rows of n_cols values, row_stride elements apart. BLOCK is a power of two. The
exponentials are the target's fast ones (metile.fast_exp: on CUDA ex2.approx of x * log2(e),
as Triton's exp, a denormal result flushed to zero). Their error, about 2^-22 relative plus
|x - max| * 2^-24 from the scaling, is far below an FP16 or BF16 output's rounding; in FP32 it
is a few ulp for rows whose values lie within a few units of their maximum.
"""

import metile


@metile.kernel
def softmax_rows(x, y, n_cols, row_stride, BLOCK: metile.constexpr):
    row_start = metile.program_id(0) * row_stride
    x_row = x + row_start
    y_row = y + row_start
    # The row's first BLOCK columns stay in registers across the three passes (a row of at
    # most BLOCK columns is read once); the loops re-read the columns past them. Each tile is
    # reduced as it arrives: a tile of partial maxima or sums carried across a loop would hold
    # BLOCK more values in registers beside the first tile (on the H200, a third fewer blocks
    # per SM and 0.76 instead of 0.92 of the copy bandwidth in FP16).
    head = metile.arange(0, BLOCK)
    head_in_row = head < n_cols
    first = metile.load(x_row + head, head_in_row).to(metile.float32)
    # Below any finite input; not -inf, so that exp(lowest - max) stays 0, never NaN.
    row_max = metile.max(metile.where(head_in_row, first, -1e38))
    for start in metile.tile_range(BLOCK, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        row_max = metile.maximum(row_max, metile.max(metile.where(in_row, v, -1e38)))
    first_exp = metile.where(head_in_row, metile.fast_exp(first - row_max), 0.0)
    total = metile.sum(first_exp)
    for start in metile.tile_range(BLOCK, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        total = total + metile.sum(metile.where(in_row, metile.fast_exp(v - row_max), 0.0))
    inv_sum = 1.0 / total
    metile.store(y_row + head, first_exp * inv_sum, head_in_row)
    for start in metile.tile_range(BLOCK, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        metile.store(y_row + cols, metile.fast_exp(v - row_max) * inv_sum, in_row)
