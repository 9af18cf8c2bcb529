"""RMSNorm kernels. rmsnorm_register: rows of N values held in registers (seed 004,
"Register-tiled reductions"); rms_norm_rows and add_rms_norm_rows: rows of any length, in
BLOCK-wide tiles (the guarded runtime's candidates, metile_kernels.candidates).

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


def _rms_norm_threads(arguments):
    """f32 rows: BLOCK // 8 threads, two float4 per thread per tile (on the H200, 65536 x
    4096: 0.996-1.007x torch.compile's time at 512 threads, 1.005-1.012x on the compiler's
    256, docs/cuda.md). 16-bit rows: the compiler's plan (two 8-half vectors per thread at
    BLOCK 4096; one, on 512 threads, ran 1.3x)."""
    if arguments["x"].dtype != metile.float32:
        return None
    return min(1024, max(32, arguments["BLOCK"] // 8))


@metile.kernel(num_threads=_rms_norm_threads)
def rms_norm_rows(x, w, y, n_cols, row_stride, eps, BLOCK: metile.constexpr):
    """RMSNorm of rows of any length in BLOCK-wide tiles, two passes (the FP32 sum of squares,
    then the output): rms_norm_rows[(rows,)](x, w, y, n_cols, row_stride, eps, BLOCK=...).
    An f32 row is read twice, as torch.compile's kernel reads it: the sum's read keeps its
    lines in the caches (evict_last), the output pass lets them go first (evict_first), so
    the re-read costs no DRAM traffic and the output displaces lines already used. A 16-bit
    row keeps its first tile in registers across both passes, so a row of at most BLOCK
    columns is read once. On the H200 (65536 x 4096, docs/cuda.md): f32 about 1.00x
    torch.compile's time re-read, 1.04x held; f16 0.97x held, 1.02x re-read; bf16 0.95x held,
    0.93x re-read, held all the same, since one run measured the hints both ways for the
    16-bit rows."""
    row_start = metile.program_id(0) * row_stride
    if x.dtype == metile.float32:
        _rms_norm_rows_reread(x + row_start, w, y + row_start, n_cols, eps, BLOCK)
    else:
        _rms_norm_rows_held(x + row_start, w, y + row_start, n_cols, eps, BLOCK)


@metile.kernel
def _rms_norm_rows_reread(x_row, w, y_row, n_cols, eps, BLOCK: metile.constexpr):
    total = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        v = metile.load(x_row + cols, cols < n_cols, eviction_policy="evict_last")
        total = total + metile.sum(v * v)
    scale = metile.rsqrt(total / n_cols.to(metile.float32) + eps)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row, eviction_policy="evict_first")
        weight = metile.load(w + cols, in_row, eviction_policy="evict_last")
        metile.store(y_row + cols, v * scale * weight, in_row)


@metile.kernel
def _rms_norm_rows_held(x_row, w, y_row, n_cols, eps, BLOCK: metile.constexpr):
    head = metile.arange(0, BLOCK)
    head_in_row = head < n_cols
    first = metile.load(x_row + head, head_in_row).to(metile.float32)
    # Each tile's squares are summed as it arrives: a tile of partial sums carried across the
    # loop would hold BLOCK more values in registers while the first tile is held too (on the
    # H200 that cost a quarter of the blocks each SM runs at once, and 6% of the bandwidth).
    total = metile.sum(first * first)
    for start in metile.tile_range(BLOCK, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        v = metile.load(x_row + cols, cols < n_cols).to(metile.float32)
        total = total + metile.sum(v * v)
    scale = metile.rsqrt(total / n_cols.to(metile.float32) + eps)
    weight = metile.load(w + head, head_in_row).to(metile.float32)
    metile.store(y_row + head, first * scale * weight, head_in_row)
    for start in metile.tile_range(BLOCK, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        weight = metile.load(w + cols, in_row).to(metile.float32)
        metile.store(y_row + cols, v * scale * weight, in_row)


@metile.kernel
def add_rms_norm_rows(x, residual, w, y, residual_out, n_cols, row_stride, eps,
                      BLOCK: metile.constexpr):
    """residual_out = x + residual (rounded to the dtype, as frameworks add) and y = RMSNorm of
    it, both written: add_rms_norm_rows[(rows,)](x, residual, w, y, residual_out, n_cols,
    row_stride, eps, BLOCK=...). The first tile of the sum stays in registers across both
    passes; past it, the second pass adds again instead of reading residual_out back."""
    row_start = metile.program_id(0) * row_stride
    x_row = x + row_start
    r_row = residual + row_start
    h_row = residual_out + row_start
    y_row = y + row_start
    head = metile.arange(0, BLOCK)
    head_in_row = head < n_cols
    first = metile.load(x_row + head, head_in_row) + metile.load(r_row + head, head_in_row)
    metile.store(h_row + head, first, head_in_row)
    first_f = first.to(metile.float32)
    total = metile.sum(first_f * first_f)  # per tile, as in rms_norm_rows
    for start in metile.tile_range(BLOCK, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        h = metile.load(x_row + cols, in_row) + metile.load(r_row + cols, in_row)
        metile.store(h_row + cols, h, in_row)
        hf = h.to(metile.float32)
        total = total + metile.sum(hf * hf)
    scale = metile.rsqrt(total / n_cols.to(metile.float32) + eps)
    weight = metile.load(w + head, head_in_row).to(metile.float32)
    metile.store(y_row + head, first_f * scale * weight, head_in_row)
    for start in metile.tile_range(BLOCK, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        h = (metile.load(x_row + cols, in_row) + metile.load(r_row + cols, in_row)).to(
            metile.float32)
        weight = metile.load(w + cols, in_row).to(metile.float32)
        metile.store(y_row + cols, h * scale * weight, in_row)
