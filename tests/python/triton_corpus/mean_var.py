"""Mean and variance of long rows in one pass, FlagGems' `var_mean` Welford kernel: BLOCK_M
rows a program, the columns walked in BLOCK_N chunks with a running (mean, count, M2) per
lane, then the lanes merged with `tl.reduce((mean, count, m2), axis=1, combine_fn=...)` and a
`@triton.jit` Welford/Chan combine function on the tuple; the variance divides M2 by
N - correction."""
import triton
import triton.language as tl


@triton.jit
def welford_combine(mean_a, count_a, m2_a, mean_b, count_b, m2_b):
    count = count_a + count_b
    delta = mean_b - mean_a
    frac_b = tl.where(count == 0.0, 0.0, count_b / tl.maximum(count, 1.0))
    mean = mean_a + delta * frac_b
    m2 = m2_a + m2_b + delta * delta * count_a * frac_b
    return mean, count, m2


@triton.jit
def var_mean_welford_kernel(x_ptr, var_ptr, mean_ptr, M, N, correction,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    x_ptr = x_ptr + rows * N
    row_mask = rows < M
    _mean = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    _m2 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    _count = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)[None, :]
        mask = row_mask & (cols < N)
        x = tl.load(x_ptr + cols, mask, other=0.0).to(tl.float32)
        count = _count + mask.to(tl.float32)
        cur_mean = tl.where(mask, _mean + (x - _mean) / tl.maximum(count, 1.0), _mean)
        _m2 += tl.where(mask, (x - cur_mean) * (x - _mean), 0.0)
        _mean = cur_mean
        _count = count
    mean, _, m2 = tl.reduce((_mean, _count, _m2), axis=1, combine_fn=welford_combine)
    var = m2 / (N - correction)
    tl.store(mean_ptr + rows, mean[:, None], row_mask)
    tl.store(var_ptr + rows, var[:, None], row_mask)
