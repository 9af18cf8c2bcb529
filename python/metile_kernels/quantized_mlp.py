"""Seed 000's affine-quantised SwiGLU MLP as a composition of library kernels:

    out = residual + down(silu(gate(x)) * up(x))

with gate, up [I, H] and down [H, I] in MLX's affine layout (affine_quant.py) and x [M, H].

Two launches. The first, ``quantized_swiglu`` (prefill tiles) or ``quantized_swiglu_rows``
(decode, one row a program), computes hidden = silu(x @ gate.T) * (x @ up.T) in one kernel, the
epilogue applied on-chip, in one of two schedules:

- register-fused (LOW_REGISTER=False): one K loop carries the gate and the up accumulators;
- low-register (LOW_REGISTER=True, seed 000's schedule): the gate reduction completes first,
  its result goes to threadgroup scratch, the up reduction reuses the accumulator's registers,
  and after a barrier silu(gate) * up is formed from the scratch.

The second is the down projection with the residual epilogue (quantized_matmul.launch_linear).
``quantized_swiglu_mlp`` checks the layouts and runs both. Choosing between the schedules and the
native MLP by measurement is the ParallelEpilogueRule's (metile.graph), not this module's.
"""

import metile

from .quantized_matmul import (DECODE_ROWS, _layout, _step, check_operands, decode_blocks,
                               dequantized, empty_like_rows, launch_linear, prefill_blocks,
                               quantized_product, quantized_row)


def _silu(v):
    return v / (1.0 + metile.exp(-v))


def _spill(value, size):
    """``value`` (a 1-D or 2-D f32 tile) written to threadgroup scratch; returns the reader."""
    scratch = metile.shared(size, "f32")
    if len(value.shape) == 2:
        rows, columns = value.shape
        at = metile.arange(0, rows)[:, None] * columns + metile.arange(0, columns)[None, :]
    else:
        at = metile.arange(0, value.shape[0])
    metile.store(scratch + at, value)
    metile.barrier()
    return scratch + at


@metile.kernel
def _gate_up_tiles(x, gate_q, gate_s, gate_b, up_q, up_s, up_b, rows, columns, inner,
                   GROUP: metile.constexpr, BITS: metile.constexpr, BLOCK_M: metile.constexpr,
                   BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    """Both [BLOCK_M, BLOCK_N] f32 products in one K loop (the register-fused schedule)."""
    per_word = 32 // BITS
    a = metile.tensor(x, shape=(rows, inner), access="read")
    g_packed, g_s, g_b = _layout(gate_q, gate_s, gate_b, columns, inner, GROUP, BITS)
    u_packed, u_s, u_b = _layout(up_q, up_s, up_b, columns, inner, GROUP, BITS)
    row = metile.program_id(0) * BLOCK_M + metile.arange(0, BLOCK_M)
    column = metile.program_id(1) * BLOCK_N + metile.arange(0, BLOCK_N)
    words = metile.arange(0, BLOCK_K // per_word)
    gate = metile.zeros((BLOCK_M, BLOCK_N), dtype="f32")
    up = metile.zeros((BLOCK_M, BLOCK_N), dtype="f32")
    for kw in metile.tile_range(0, inner // per_word, BLOCK_K // per_word):
        word = kw + words
        g_words, g_scale, g_bias = _step(g_packed, g_s, g_b, word, column, GROUP, BITS, False)
        u_words, u_scale, u_bias = _step(u_packed, u_s, u_b, word, column, GROUP, BITS, False)
        for j in metile.static_range(per_word):
            xj = a.load((row[:, None], (word * per_word + j)[None, :]))
            dtype = x.dtype.element_ty
            gate = metile.dot(xj, dequantized(g_words, g_scale, g_bias, j, BITS, dtype), gate)
            up = metile.dot(xj, dequantized(u_words, u_scale, u_bias, j, BITS, dtype), up)
    return gate, up, row, column


@metile.kernel
def quantized_swiglu(x, gate_q, gate_s, gate_b, up_q, up_s, up_b, hidden, rows, columns, inner,
                     GROUP: metile.constexpr, BITS: metile.constexpr,
                     LOW_REGISTER: metile.constexpr, BLOCK_M: metile.constexpr,
                     BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    if LOW_REGISTER:
        gate, row, column = quantized_product(x, gate_q, gate_s, gate_b, rows, columns, inner,
                                              GROUP, BITS, BLOCK_M, BLOCK_N, BLOCK_K)
        spilled = _spill(_silu(gate), BLOCK_M * BLOCK_N)
        up, row, column = quantized_product(x, up_q, up_s, up_b, rows, columns, inner, GROUP,
                                            BITS, BLOCK_M, BLOCK_N, BLOCK_K)
        activated = metile.load(spilled) * up
    else:
        gate, up, row, column = _gate_up_tiles(x, gate_q, gate_s, gate_b, up_q, up_s, up_b,
                                               rows, columns, inner, GROUP, BITS, BLOCK_M,
                                               BLOCK_N, BLOCK_K)
        activated = _silu(gate) * up
    h = metile.tensor(hidden, shape=(rows, columns), access="write")
    h.store((row[:, None], column[None, :]), activated)


@metile.kernel
def _gate_up_rows(x, gate_q, gate_s, gate_b, up_q, up_s, up_b, rows, columns, inner,
                  GROUP: metile.constexpr, BITS: metile.constexpr, BLOCK_N: metile.constexpr,
                  BLOCK_K: metile.constexpr):
    """Both products of one row over BLOCK_N columns in one K loop, sharing the row's loads."""
    per_word = 32 // BITS
    a = metile.tensor(x, shape=(rows, inner), access="read")
    g_packed, g_s, g_b = _layout(gate_q, gate_s, gate_b, columns, inner, GROUP, BITS)
    u_packed, u_s, u_b = _layout(up_q, up_s, up_b, columns, inner, GROUP, BITS)
    row = metile.program_id(0)
    column = metile.program_id(1) * BLOCK_N + metile.arange(0, BLOCK_N)
    words = metile.arange(0, BLOCK_K // per_word)
    gate = metile.zeros((BLOCK_N, BLOCK_K // per_word), dtype="f32")
    up = metile.zeros((BLOCK_N, BLOCK_K // per_word), dtype="f32")
    for kw in metile.tile_range(0, inner // per_word, BLOCK_K // per_word):
        word = kw + words
        g_words, g_scale, g_bias = _step(g_packed, g_s, g_b, word, column, GROUP, BITS, True)
        u_words, u_scale, u_bias = _step(u_packed, u_s, u_b, word, column, GROUP, BITS, True)
        for j in metile.static_range(per_word):
            xj = a.load((row, word * per_word + j)).to("f32")[None, :]
            gate += dequantized(g_words, g_scale, g_bias, j, BITS, "f32") * xj
            up += dequantized(u_words, u_scale, u_bias, j, BITS, "f32") * xj
    return metile.sum(gate, axis=1), metile.sum(up, axis=1), row, column


@metile.kernel
def quantized_swiglu_rows(x, gate_q, gate_s, gate_b, up_q, up_s, up_b, hidden, rows, columns,
                          inner, GROUP: metile.constexpr, BITS: metile.constexpr,
                          LOW_REGISTER: metile.constexpr, BLOCK_N: metile.constexpr,
                          BLOCK_K: metile.constexpr):
    if LOW_REGISTER:
        gate, row, column = quantized_row(x, gate_q, gate_s, gate_b, rows, columns, inner,
                                          GROUP, BITS, BLOCK_N, BLOCK_K)
        spilled = _spill(_silu(gate), BLOCK_N)
        up, row, column = quantized_row(x, up_q, up_s, up_b, rows, columns, inner, GROUP, BITS,
                                        BLOCK_N, BLOCK_K)
        activated = metile.load(spilled) * up
    else:
        gate, up, row, column = _gate_up_rows(x, gate_q, gate_s, gate_b, up_q, up_s, up_b,
                                              rows, columns, inner, GROUP, BITS, BLOCK_N,
                                              BLOCK_K)
        activated = _silu(gate) * up
    h = metile.tensor(hidden, shape=(rows, columns), access="write")
    h.store((row, column), activated)


def quantized_swiglu_mlp(x, gate, up, down, group_size=64, bits=4, residual=None,
                         low_register=False, decode=None):
    """residual + down(silu(gate(x)) * up(x)) for x [M, H] and gate, up, down each a
    (wq, scales, biases) triple in MLX's affine layout (gate and up [I, H], down [H, I]);
    ``residual`` [M, H] or None. ``low_register`` picks seed 000's low-register gate/up
    schedule; ``decode`` the tiling (by default M <= 16 decodes). numpy arrays, or torch CUDA
    tensors on the cuda device; the hidden activations and the output have x's dtype."""
    op = "quantized_swiglu_mlp"
    rows, intermediate, hidden_size = check_operands(op + " (gate)", x, *gate, group_size, bits)
    check_operands(op + " (up)", x, *up, group_size, bits)
    if tuple(gate[0].shape) != tuple(up[0].shape):
        raise ValueError(f"{op}: gate and up must have the same shape, got "
                         f"{tuple(gate[0].shape)} and {tuple(up[0].shape)}")
    hidden = empty_like_rows(x, rows, intermediate)
    out_columns = check_operands(op + " (down)", hidden, *down, group_size, bits)[1]
    if out_columns != hidden_size:
        raise ValueError(f"{op}: down must map the intermediate size {intermediate} back to "
                         f"H = {hidden_size}, got {out_columns} outputs")
    if residual is not None and tuple(residual.shape) != (rows, hidden_size):
        raise ValueError(f"{op}: residual must have shape [M, H] = [{rows}, {hidden_size}], got "
                         f"{tuple(residual.shape)}")
    if decode is None:
        decode = rows <= DECODE_ROWS
    arguments = (x, *gate, *up, hidden, rows, intermediate, hidden_size)
    if decode:
        block_n, block_k = decode_blocks()
        quantized_swiglu_rows[(rows, metile.cdiv(intermediate, block_n))](
            *arguments, GROUP=group_size, BITS=bits, LOW_REGISTER=low_register,
            BLOCK_N=block_n, BLOCK_K=block_k)
    else:
        block_m, block_n, block_k = prefill_blocks()
        quantized_swiglu[(metile.cdiv(rows, block_m), metile.cdiv(intermediate, block_n))](
            *arguments, GROUP=group_size, BITS=bits, LOW_REGISTER=low_register,
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
    output = empty_like_rows(x, rows, hidden_size)
    launch_linear(hidden, down, output, residual, rows, hidden_size, intermediate, group_size,
                  bits, decode)
    return output
