"""Flash attention forward over variable-length sequences, as FlashAttention-2's varlen
interface lays them out and the Triton varlen kernels of vLLM (`triton_flash_attention.py`)
and FlashAttention's AMD Triton backend compute it: queries, keys and values of all sequences
packed along the token dimension, `[total_tokens, heads, head_dim]`, with `cu_seqlens_q` and
`cu_seqlens_k` (int32, [batch + 1], cumulative) giving each sequence's tokens; a 3-D grid of
(query block, head, sequence); an online softmax in base 2 over BLOCK_N-key tiles with two
`tl.dot`s per step; optional causal masking aligned to the bottom right (query i sees key j
when j <= i + seqlen_k - seqlen_q), the key loop stopping at the causal bound. Query blocks
past a short sequence's end run no key block and store nothing."""
import triton
import triton.language as tl


@triton.jit
def attn_fwd_varlen(Q, K, V, Out, sm_scale,
                    cu_seqlens_q, cu_seqlens_k,
                    stride_qm, stride_qh, stride_qk,
                    stride_kn, stride_kh, stride_kk,
                    stride_vn, stride_vh, stride_vk,
                    stride_om, stride_oh, stride_ok,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    off_z = tl.program_id(2)
    cu_seqlens_q_start = tl.load(cu_seqlens_q + off_z)
    cu_seqlens_q_end = tl.load(cu_seqlens_q + off_z + 1)
    seqlen_q = cu_seqlens_q_end - cu_seqlens_q_start
    cu_seqlens_k_start = tl.load(cu_seqlens_k + off_z)
    cu_seqlens_k_end = tl.load(cu_seqlens_k + off_z + 1)
    seqlen_k = cu_seqlens_k_end - cu_seqlens_k_start

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = (Q + cu_seqlens_q_start * stride_qm + off_h * stride_qh
              + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk)
    k_ptrs = (K + cu_seqlens_k_start * stride_kn + off_h * stride_kh
              + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kk)
    v_ptrs = (V + cu_seqlens_k_start * stride_vn + off_h * stride_vh
              + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vk)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2)
    q = tl.load(q_ptrs, mask=offs_m[:, None] < seqlen_q, other=0.0)

    # the keys this query block sees: all of them, or up to its last row's causal bound
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M + seqlen_k - seqlen_q, seqlen_k)
    else:
        hi = seqlen_k
    # a query block past the end of a short sequence has nothing to do
    hi = tl.where(start_m * BLOCK_M < seqlen_q, hi, 0)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptrs + start_n * stride_kn, mask=cols[None, :] < seqlen_k, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        valid = cols[None, :] < seqlen_k
        if CAUSAL:
            valid = valid & (offs_m[:, None] + (seqlen_k - seqlen_q) >= cols[None, :])
        qk = tl.where(valid, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_vn, mask=cols[:, None] < seqlen_k, other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = (Out + cu_seqlens_q_start * stride_om + off_h * stride_oh
              + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok)
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < seqlen_q)
