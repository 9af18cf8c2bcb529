"""GEMM (seed 002's matmul): output = left @ right for row-major matrices.

``matmul[grid](left, right, output, rows, columns, inner, BLOCK_M=64, BLOCK_N=64, BLOCK_K=16)``
multiplies left [rows, inner] by right [inner, columns] into output [rows, columns]; ``grid``
covers the output tiles: ``grid(rows, columns)`` gives (cdiv(rows, BLOCK_M), cdiv(columns,
BLOCK_N)). Inputs are f16, bf16 or f32 of one dtype; products and sums are f32 (tf32 for f32
inputs under RELAXED_PRECISION=True) and the result is rounded once, to the output buffer's
dtype. Any shape works: the tensor descriptors read 0 past the edges of left and right (the
row, column and K tails) and never write past those of output.

``matmul_leaky`` adds seed 002's pointwise epilogue, ``where(s > 0, s, 0.1 * s)`` of
``s = acc * alpha + beta`` with runtime scalars alpha and beta: ordinary tile operations on
the accumulator before the store, so it is fused by construction (no intermediate tensor).
"""

import metile


def grid(rows, columns, BLOCK_M=64, BLOCK_N=64):
    """The launch grid covering a rows x columns output with BLOCK_M x BLOCK_N tiles."""
    return (metile.cdiv(rows, BLOCK_M), metile.cdiv(columns, BLOCK_N))


@metile.kernel
def _product(left, right, rows, columns, inner, BLOCK_M: metile.constexpr,
             BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    """The [BLOCK_M, BLOCK_N] f32 tile of left @ right at this program's output tile, and its
    row and column indices."""
    a = metile.tensor(left, shape=(rows, inner), access="read")
    b = metile.tensor(right, shape=(inner, columns), access="read")
    row = metile.program_id(0) * BLOCK_M + metile.arange(0, BLOCK_M)
    column = metile.program_id(1) * BLOCK_N + metile.arange(0, BLOCK_N)
    ks = metile.arange(0, BLOCK_K)
    acc = metile.zeros((BLOCK_M, BLOCK_N), dtype="f32")
    for k in metile.tile_range(0, inner, BLOCK_K):
        acc = metile.dot(a.load((row[:, None], (k + ks)[None, :])),
                         b.load(((k + ks)[:, None], column[None, :])), acc)
    return acc, row, column


@metile.kernel
def matmul(left, right, output, rows, columns, inner, BLOCK_M: metile.constexpr = 64,
           BLOCK_N: metile.constexpr = 64, BLOCK_K: metile.constexpr = 16):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK_M, BLOCK_N, BLOCK_K)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), acc)


@metile.kernel
def matmul_leaky(left, right, output, rows, columns, inner, alpha, beta,
                 BLOCK_M: metile.constexpr = 64, BLOCK_N: metile.constexpr = 64,
                 BLOCK_K: metile.constexpr = 16):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK_M, BLOCK_N, BLOCK_K)
    scaled = acc * alpha + beta
    activated = metile.where(scaled > 0, scaled, scaled * 0.1)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), activated)
