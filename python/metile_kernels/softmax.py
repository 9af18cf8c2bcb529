"""Row softmax of any row length, three passes over the row in BLOCK-wide tiles (maximum,
sum of exponentials, output), in FP32, rounded only on the store:

    softmax_rows[(rows,)](x, y, n_cols, row_stride, BLOCK=...)

x and y hold rows of n_cols values, row_stride elements apart. BLOCK is a power of two.
"""

import metile


@metile.kernel
def softmax_rows(x, y, n_cols, row_stride, BLOCK: metile.constexpr):
    row_start = metile.program_id(0) * row_stride
    x_row = x + row_start
    y_row = y + row_start
    # Below any finite input; not -inf, so that exp(lowest - max) stays 0, never NaN.
    m = metile.full([BLOCK], -1e38, metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        m = metile.maximum(m, metile.where(in_row, v, -1e38))
    row_max = metile.max(m)
    s = metile.zeros([BLOCK], metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        s = s + metile.where(in_row, metile.exp(v - row_max), 0.0)
    inv_sum = 1.0 / metile.sum(s)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        metile.store(y_row + cols, metile.exp(v - row_max) * inv_sum, in_row)
