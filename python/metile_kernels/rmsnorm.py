"""RMSNorm over rows of N values held in registers (seed 004, "Register-tiled reductions").

rmsnorm_register[(rows,)](inputs, weights, output, eps, N=..., BLOCK=...) normalizes each of
the rows of N inputs: output = inputs * rsqrt(mean(inputs^2) + eps) * weights, in FP32, rounded
only on the output store. The row stays in registers across the FP32 sum, so it is read once.
N and BLOCK are compile-time; 0 < N <= BLOCK, a power of two. The buffers hold rows * N inputs
and outputs and N weights. LAYOUT picks the register/thread partition of the BLOCK-element
tile; the default holds four values per thread (ThreadLayout.identity(BLOCK, 4)).
"""

import metile
from metile import ThreadLayout


@metile.kernel
def rmsnorm_register(inputs, weights, output, eps, N: metile.constexpr, BLOCK: metile.constexpr,
                     LAYOUT: metile.constexpr = None):
    if not 0 < N <= BLOCK:
        raise ValueError(f"rmsnorm_register: N = {N} must satisfy 0 < N <= BLOCK = {BLOCK}")
    layout = ThreadLayout.identity(BLOCK, 4) if LAYOUT is None else LAYOUT
    rows = metile.num_programs(0)
    x_rows = metile.tensor(inputs, shape=(rows, N), access="read")
    w_row = metile.tensor(weights, shape=(N,), access="read")
    y_rows = metile.tensor(output, shape=(rows, N), access="write")
    row = metile.program_id(0)
    cols = metile.arange(0, BLOCK, layout=layout)
    x = x_rows.load((row, cols)).to("f32")
    w = w_row.load((cols,)).to("f32")
    scale = metile.rsqrt(metile.sum(x * x) / N + eps)
    y_rows.store((row, cols), x * scale * w)
