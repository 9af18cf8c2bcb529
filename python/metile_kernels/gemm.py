"""GEMM (seed 002's matmul): output = left @ right for row-major matrices.

``matmul[grid(rows, columns)](left, right, output, rows, columns, inner)`` multiplies left
[rows, inner] by right [inner, columns] into output [rows, columns]. The tile is BLOCK_M x
BLOCK_N x BLOCK_K, by default ``default_blocks``'s for the operands' dtype on the default
device (16-bit operands on the cuda device: 128 x 256 x 64, the wgmma tile; otherwise 64 x 64
x 16); ``grid(rows, columns, BLOCK_M, BLOCK_N)`` covers the output tiles, and without the
blocks it is a function of the launch's values that uses the blocks the kernel runs with.
Inputs are f16, bf16 or f32 of one dtype; products and sums are f32 (tf32 for f32
inputs under RELAXED_PRECISION=True) and the result is rounded once, to the output buffer's
dtype. Any shape works: the tensor descriptors read 0 past the edges of left and right (the
row, column and K tails) and never write past those of output.

``matmul_leaky`` adds seed 002's pointwise epilogue, ``where(s > 0, s, 0.1 * s)`` of
``s = acc * alpha + beta`` with runtime scalars alpha and beta: ordinary tile operations on
the accumulator before the store, so it is fused by construction (no intermediate tensor).

``mm(left, right)`` is the entry point that picks the path: decode_gemm's strategies up to 16
rows (a read of the weights, docs/decode_gemm.md), ``matmul`` above; ``mm_plan`` says why.
"""

import metile
from metile.buffer import describe


def default_blocks(dtype):
    """(BLOCK_M, BLOCK_N, BLOCK_K) for operands of meTile dtype `dtype` on the default device:
    on the cuda device 16-bit operands take 128 x 256 x 64, the tile sm90's wgmma strategies
    run at the tensor cores' speed (TMA's ring, or the cp.async pipeline where TMA cannot
    describe an operand); elsewhere, and for f32, 64 x 64 x 16."""
    if metile.device() == "cuda" and dtype in ("f16", "bf16"):
        return 128, 256, 64
    return 64, 64, 16


def _default(index):
    return lambda args: default_blocks(describe(args["left"], "left")[1])[index]


# The blocks a launch does not give: default_blocks's for the left operand's dtype.
_DEFAULT_BLOCKS = {"BLOCK_M": _default(0), "BLOCK_N": _default(1), "BLOCK_K": _default(2)}


def grid(rows, columns, BLOCK_M=None, BLOCK_N=None):
    """The launch grid covering a rows x columns output with BLOCK_M x BLOCK_N tiles; without
    the blocks, a function of the launch's values (the blocks it runs with)."""
    if BLOCK_M is None or BLOCK_N is None:
        return lambda meta: (metile.cdiv(rows, BLOCK_M or meta["BLOCK_M"]),
                             metile.cdiv(columns, BLOCK_N or meta["BLOCK_N"]))
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


@metile.heuristics(_DEFAULT_BLOCKS)
@metile.kernel
def matmul(left, right, output, rows, columns, inner, BLOCK_M: metile.constexpr,
           BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK_M, BLOCK_N, BLOCK_K)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), acc)


@metile.heuristics(_DEFAULT_BLOCKS)
@metile.kernel
def matmul_leaky(left, right, output, rows, columns, inner, alpha, beta,
                 BLOCK_M: metile.constexpr, BLOCK_N: metile.constexpr,
                 BLOCK_K: metile.constexpr):
    acc, row, column = _product(left, right, rows, columns, inner, BLOCK_M, BLOCK_N, BLOCK_K)
    scaled = acc * alpha + beta
    activated = metile.where(scaled > 0, scaled, scaled * 0.1)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row[:, None], column[None, :]), activated)


def mm_plan(rows, columns, inner, dtype):
    """How ``mm`` computes a [rows, inner] @ [inner, columns] product of ``dtype``: a dict with
    ``path`` ("decode" or "tiled"), ``reason`` and, for the decode path, decode_gemm.plan's
    plan. Up to decode_gemm.DECODE_ROWS rows the product is a read of the weights and takes the
    decode strategies (docs/decode_gemm.md); above, the tiled matmul with default_blocks."""
    from . import decode_gemm

    if rows <= decode_gemm.DECODE_ROWS:
        p = decode_gemm.plan(rows, columns, inner, dtype)
        return {"path": "decode", "plan": p,
                "reason": f"M = {rows} <= {decode_gemm.DECODE_ROWS}: a read of the weights; "
                          + p["reason"]}
    blocks = default_blocks(dtype)
    return {"path": "tiled", "blocks": blocks,
            "reason": f"M = {rows} > {decode_gemm.DECODE_ROWS}: tiled matmul, "
                      f"{blocks[0]} x {blocks[1]} x {blocks[2]} blocks"}


def mm(left, right, out=None):
    """left [M, K] @ right [K, N] (numpy arrays, or torch CUDA tensors on the cuda device), as
    torch.mm: the output has left's dtype unless ``out`` is given. ``mm_plan`` says which path
    and why."""
    from . import decode_gemm

    rows, columns, inner, dtype = decode_gemm.check_operands(left, right)
    chosen = mm_plan(rows, columns, inner, dtype)
    if chosen["path"] == "decode":
        return decode_gemm.run_plan(chosen["plan"], left, right, out=out)
    output = decode_gemm.empty_output(left, rows, columns) if out is None else out
    block_m, block_n, block_k = chosen["blocks"]
    matmul[grid(rows, columns, block_m, block_n)](left, right, output, rows, columns, inner,
                                                  BLOCK_M=block_m, BLOCK_N=block_n,
                                                  BLOCK_K=block_k)
    return output
