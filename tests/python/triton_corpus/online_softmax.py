"""Softmax over rows longer than one block, in the idiom of Liger-Kernel's multi-block softmax
and FlagGems' online softmax: a first pass over `for off in range(0, n_cols, BLOCK_SIZE)`
keeps the running maximum and the running sum of exponentials rescaled to it (the online
softmax of Milakov and Gimelshein), a second pass normalises. `softmax_online_scalar_kernel`
keeps the running state as two scalars (one block max per step), `softmax_online_vector_kernel`
keeps one running max and sum per lane of the block and combines them at the end, as FlagGems
does. Inputs f32, f16 or bf16, computed in f32, stored in the output's dtype."""
import triton
import triton.language as tl


@triton.jit
def softmax_online_scalar_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, n_cols,
                                 BLOCK_SIZE: tl.constexpr):
    row_id = tl.program_id(0)
    X_ptr += row_id * X_row_stride
    Y_ptr += row_id * Y_row_stride
    offs = tl.arange(0, BLOCK_SIZE)

    m = float("-inf")
    d = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        x = tl.load(X_ptr + idx, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new

    for start in range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        mask = idx < n_cols
        x = tl.load(X_ptr + idx, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) / d
        tl.store(Y_ptr + idx, y.to(Y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_online_vector_kernel(output_ptr, input_ptr, M, N, TILE_N: tl.constexpr):
    pid_m = tl.program_id(0)
    m = tl.full((TILE_N,), value=-float("inf"), dtype=tl.float32)
    z = tl.full((TILE_N,), value=0.0, dtype=tl.float32)
    for start_n in range(0, N, TILE_N):
        n_offsets = start_n + tl.arange(0, TILE_N)
        offset = pid_m * N + n_offsets
        mask = n_offsets < N
        inp = tl.load(input_ptr + offset, mask=mask, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, inp)
        # lanes that have seen only padding keep m == -inf: rescale nothing there
        all_neg_inf = m_new == float("-inf")
        z = tl.where(all_neg_inf, z, z * tl.exp(m - m_new) + tl.exp(inp - m_new))
        m = m_new

    m_reduced = tl.max(m, 0)
    z = tl.sum(z * tl.exp(m - m_reduced), 0)
    m = m_reduced

    for start_n in range(0, N, TILE_N):
        n_offsets = start_n + tl.arange(0, TILE_N)
        offset = pid_m * N + n_offsets
        mask = n_offsets < N
        inp = tl.load(input_ptr + offset, mask=mask, other=-float("inf")).to(tl.float32)
        o = tl.exp(inp - m) / z
        tl.store(output_ptr + offset, o, mask=mask)
