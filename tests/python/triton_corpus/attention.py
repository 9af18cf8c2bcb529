"""Flash attention forward in Triton's classic form (FlashAttention-2, as Triton's fused
attention tutorial wrote it before its TMA rewrite): one program per BLOCK_M query rows of one
(batch, head), an online softmax over BLOCK_N-column K/V tiles in base 2, two dots per step,
optional causal masking; and its host-side launcher."""
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale,
             stride_qz, stride_qh, stride_qm, stride_qk,
             stride_kz, stride_kh, stride_kn, stride_kk,
             stride_vz, stride_vh, stride_vn, stride_vk,
             stride_oz, stride_oh, stride_om, stride_ok,
             H, N_CTX,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = (Q + off_z * stride_qz + off_h * stride_qh
              + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk)
    k_ptrs = (K + off_z * stride_kz + off_h * stride_kh
              + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kk)
    v_ptrs = (V + off_z * stride_vz + off_h * stride_vh
              + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vk)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2)
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptrs + start_n * stride_kn, mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        valid = cols[None, :] < N_CTX
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_ij[:, None])
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_vn, mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = (Out + off_z * stride_oz + off_h * stride_oh
              + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok)
    tl.store(o_ptrs, acc.to(q.dtype), mask=offs_m[:, None] < N_CTX)


def attention(q, k, v, out, sm_scale, causal, BLOCK_M, BLOCK_N, **options):
    Z, H, N_CTX, HEAD_DIM = q.shape
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H)
    attn_fwd[grid](q, k, v, out, sm_scale,
                   q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                   k.stride(0), k.stride(1), k.stride(2), k.stride(3),
                   v.stride(0), v.stride(1), v.stride(2), v.stride(3),
                   out.stride(0), out.stride(1), out.stride(2), out.stride(3),
                   H, N_CTX, HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                   **options)
    return out
