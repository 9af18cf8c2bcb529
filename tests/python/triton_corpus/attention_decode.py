"""Decode attention over a KV cache, as the Triton decode kernels of vLLM and SGLang write it
(`decode_attention.py`'s `_fwd_kernel_stage1` without the KV split): one program per
(batch, query head) for the single query of a decoding step; grouped-query attention, the
query head reading KV head `cur_head // kv_group_num`; the keys and values of each sequence
gathered from a token-major cache `[tokens, kv_heads, head_dim]` through the request's row of
`req_to_tokens`; a loop over BLOCK_N keys at a time with an online softmax in f32, the scores
as `tl.sum(q[None, :] * k, 1)` (no `tl.dot`: one query row); head_dim padded to the power of two
BLOCK_DMODEL and masked."""
import triton
import triton.language as tl


@triton.jit
def _decode_attention_kernel(
    Q, K_Buffer, V_Buffer, Out,
    Req_to_tokens, B_Seqlen,
    sm_scale,
    stride_req_to_tokens_b,
    stride_qbs, stride_qh,
    stride_buf_kbs, stride_buf_kh,
    stride_buf_vbs, stride_buf_vh,
    stride_obs, stride_oh,
    kv_group_num: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    Lk: tl.constexpr,
    Lv: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_kv_head = cur_head // kv_group_num

    offs_d = tl.arange(0, BLOCK_DMODEL)
    mask_d = offs_d < Lk
    mask_dv = offs_d < Lv
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)

    off_q = cur_batch * stride_qbs + cur_head * stride_qh + offs_d
    q = tl.load(Q + off_q, mask=mask_d, other=0.0).to(tl.float32)

    e_max = -float("inf")
    e_sum = 0.0
    acc = tl.zeros([BLOCK_DMODEL], dtype=tl.float32)

    for start_n in range(0, cur_batch_seq_len, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        mask_n = offs_n < cur_batch_seq_len
        kv_loc = tl.load(Req_to_tokens + stride_req_to_tokens_b * cur_batch + offs_n,
                         mask=mask_n, other=0)
        offs_buf_k = (kv_loc[:, None] * stride_buf_kbs + cur_kv_head * stride_buf_kh
                      + offs_d[None, :])
        k = tl.load(K_Buffer + offs_buf_k, mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        qk = tl.sum(q[None, :] * k.to(tl.float32), 1)
        qk *= sm_scale
        qk = tl.where(mask_n, qk, float("-inf"))

        offs_buf_v = (kv_loc[:, None] * stride_buf_vbs + cur_kv_head * stride_buf_vh
                      + offs_d[None, :])
        v = tl.load(V_Buffer + offs_buf_v, mask=mask_n[:, None] & mask_dv[None, :], other=0.0)

        n_e_max = tl.maximum(tl.max(qk, 0), e_max)
        re_scale = tl.exp(e_max - n_e_max)
        p = tl.exp(qk - n_e_max)
        acc *= re_scale
        acc += tl.sum(p[:, None] * v.to(tl.float32), 0)

        e_sum = e_sum * re_scale + tl.sum(p, 0)
        e_max = n_e_max

    off_o = cur_batch * stride_obs + cur_head * stride_oh + offs_d
    tl.store(Out + off_o, (acc / e_sum).to(Out.dtype.element_ty), mask=mask_dv)
