"""A grouped GEMM in the mixture-of-experts style (the grouped GEMMs of unsloth's and vLLM's
MoE kernels, written after Triton's grouped GEMM tutorial 08): the rows of all problems are
packed into one activation buffer `x` [total_rows, K], sorted by expert, with `expert_offsets`
(int32, [E + 1], cumulative) giving each expert's rows; the experts' weights are one stacked
buffer `w` [E, K, N]; each problem y[rows of e] = x[rows of e] @ w[e] writes its rows of one
output buffer `y` [total_rows, N]. NUM_SMS persistent programs walk the tiles of every expert
in turn, `tl.range(tile_idx, problem_end, NUM_SMS)`, an expert with no rows having no tiles;
masks take the ragged edges of every problem."""
import triton
import triton.language as tl


@triton.jit
def grouped_gemm_packed_kernel(
    x_ptr, w_ptr, y_ptr,
    expert_offsets_ptr,
    N, K,
    stride_xm, stride_xk,
    stride_we, stride_wk, stride_wn,
    stride_ym, stride_yn,
    NUM_EXPERTS,
    NUM_SMS: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    tile_idx = tl.program_id(0)
    num_n_tiles = tl.cdiv(N, BLOCK_SIZE_N)
    last_problem_end = 0
    for expert in range(NUM_EXPERTS):
        row_start = tl.load(expert_offsets_ptr + expert)
        row_end = tl.load(expert_offsets_ptr + expert + 1)
        m_size = row_end - row_start
        num_m_tiles = tl.cdiv(m_size, BLOCK_SIZE_M)
        problem_end = last_problem_end + num_m_tiles * num_n_tiles
        for tile in tl.range(tile_idx, problem_end, NUM_SMS):
            tile_in_problem = tile - last_problem_end
            tile_m = tile_in_problem // num_n_tiles
            tile_n = tile_in_problem % num_n_tiles

            offs_m = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_n = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            mask_m = offs_m < m_size
            mask_n = offs_n < N
            x_ptrs = (x_ptr + (row_start + offs_m)[:, None] * stride_xm
                      + offs_k[None, :] * stride_xk)
            w_ptrs = (w_ptr + expert * stride_we + offs_k[:, None] * stride_wk
                      + offs_n[None, :] * stride_wn)
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
                k_remaining = K - k * BLOCK_SIZE_K
                x = tl.load(x_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_remaining),
                            other=0.0)
                w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_remaining) & mask_n[None, :],
                            other=0.0)
                accumulator = tl.dot(x, w, accumulator)
                x_ptrs += BLOCK_SIZE_K * stride_xk
                w_ptrs += BLOCK_SIZE_K * stride_wk

            y_ptrs = (y_ptr + (row_start + offs_m)[:, None] * stride_ym
                      + offs_n[None, :] * stride_yn)
            tl.store(y_ptrs, accumulator.to(y_ptr.dtype.element_ty),
                     mask=mask_m[:, None] & mask_n[None, :])
        # this program's first tile of the next problem: the next of its tiles past this one
        tile_idx += tl.cdiv(tl.maximum(problem_end - tile_idx, 0), NUM_SMS) * NUM_SMS
        last_problem_end = problem_end
