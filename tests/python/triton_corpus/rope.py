"""Rotary position embedding in Liger-Kernel's idiom (liger_kernel/ops/rope.py, after
unsloth's): q of shape (batch, seq, n_qh, hd) and k of (batch, seq, n_kh, hd), contiguous, so
that one program handles one (batch * seq) row holding every head; cos and sin of (seq, hd),
the rotate-half form (cos = cat(freqs, freqs).cos()), whose first half is all a row needs.
The heads and the two halves of head_dim are 2-D tiles `[pad_n_h, pad_hd // 2]` (head counts
and head_dim padded to powers of two and masked), the halves addressed with
`tl.arange(0, pad_hd // 2)` and `+ hd // 2`; q and k are rotated in place, in f32, and stored
back in their dtype. BACKWARD_PASS rotates by -theta (the gradient).

`_rope_embedding` is unsloth's form (unsloth/kernels/rope_embedding.py): one tensor at a time,
programs over (row, group of ROPE_GROUP_SIZE heads), a device loop over the group's heads
bounded by `min(head_start + ROPE_GROUP_SIZE, n_heads)`, 1-D halves of
BLOCK_SIZE = next_power_of_2(head_dim // 2) columns, and `sin1 = -sin1` for the backward. Its
cos and sin parameters are spelled COS and SIN, as flash-attn's rotary kernel spells them."""
import triton
import triton.language as tl


@triton.jit
def _triton_rope(
    q_ptr,
    q_row_stride,
    k_ptr,
    k_row_stride,
    cos,
    cos_row_stride,
    sin,
    sin_row_stride,
    sl,
    n_qh: tl.constexpr,
    n_kh: tl.constexpr,
    hd: tl.constexpr,
    pad_n_qh: tl.constexpr,
    pad_n_kh: tl.constexpr,
    pad_hd: tl.constexpr,
    BACKWARD_PASS: tl.constexpr = False,
):
    # q size: (bsz, seq_len, num_q_heads, head_dim)
    # k size: (bsz, seq_len, num_kv_heads, head_dim)
    # cos size: (seq_len, head_dim), sin size: (seq_len, head_dim)
    # one program per (batch, position): the row of every head at that position
    pid = tl.program_id(0).to(tl.int64)

    # locate start address
    q_ptr = q_ptr + pid * q_row_stride
    k_ptr = k_ptr + pid * k_row_stride

    # ####################################################################
    # get the cos(mθ_{i...d/2}) and sin(mθ_{i...d/2}) for token position
    # m of this program instance
    # ####################################################################
    cos_row_idx = pid % sl
    cos = cos + cos_row_idx * cos_row_stride
    sin = sin + cos_row_idx * sin_row_stride
    cos_offsets = tl.arange(0, pad_hd // 2)
    cos_mask = cos_offsets < hd // 2
    cos_row = tl.load(cos + cos_offsets, mask=cos_mask, other=0).to(tl.float32)
    sin_row = tl.load(sin + cos_offsets, mask=cos_mask, other=0).to(tl.float32)

    # ####################################################################
    # Load the left and right half of q and k for the current
    # program instance (i.e. for the current token) separately
    # ####################################################################
    # left half of the head
    first_half_q_offsets = tl.arange(0, pad_n_qh)[:, None] * hd + tl.arange(0, pad_hd // 2)[None, :]
    first_half_k_offsets = tl.arange(0, pad_n_kh)[:, None] * hd + tl.arange(0, pad_hd // 2)[None, :]
    first_q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & (tl.arange(0, pad_hd // 2)[None, :] < hd // 2)
    first_k_mask = (tl.arange(0, pad_n_kh)[:, None] < n_kh) & (tl.arange(0, pad_hd // 2)[None, :] < hd // 2)
    q_tile_1 = tl.load(q_ptr + first_half_q_offsets, mask=first_q_mask, other=0).to(tl.float32)
    k_tile_1 = tl.load(k_ptr + first_half_k_offsets, mask=first_k_mask, other=0).to(tl.float32)

    # right half of the head
    second_half_q_offsets = first_half_q_offsets + (hd // 2)
    second_half_k_offsets = first_half_k_offsets + (hd // 2)
    second_q_mask = first_q_mask
    second_k_mask = first_k_mask
    q_tile_2 = tl.load(q_ptr + second_half_q_offsets, mask=second_q_mask, other=0).to(tl.float32)
    k_tile_2 = tl.load(k_ptr + second_half_k_offsets, mask=second_k_mask, other=0).to(tl.float32)

    if not BACKWARD_PASS:
        # y = [x1, x2] * [cos, cos] + [-x2, x1] * [sin, sin]
        new_q_tile_1 = q_tile_1 * cos_row[None, :] - q_tile_2 * sin_row[None, :]
        tl.store(q_ptr + first_half_q_offsets, new_q_tile_1.to(q_ptr.dtype.element_ty), mask=first_q_mask)
        new_q_tile_2 = q_tile_2 * cos_row[None, :] + q_tile_1 * sin_row[None, :]
        tl.store(q_ptr + second_half_q_offsets, new_q_tile_2.to(q_ptr.dtype.element_ty), mask=second_q_mask)

        new_k_tile_1 = k_tile_1 * cos_row[None, :] - k_tile_2 * sin_row[None, :]
        tl.store(k_ptr + first_half_k_offsets, new_k_tile_1.to(k_ptr.dtype.element_ty), mask=first_k_mask)
        new_k_tile_2 = k_tile_2 * cos_row[None, :] + k_tile_1 * sin_row[None, :]
        tl.store(k_ptr + second_half_k_offsets, new_k_tile_2.to(k_ptr.dtype.element_ty), mask=second_k_mask)
    else:
        # with some math, we can get:
        # dy = [dx1, dx2] * [cos, cos] + [-dx2, dx1] * [-sin, -sin]
        new_q_tile_1 = q_tile_1 * cos_row[None, :] + q_tile_2 * sin_row[None, :]
        tl.store(q_ptr + first_half_q_offsets, new_q_tile_1.to(q_ptr.dtype.element_ty), mask=first_q_mask)
        new_q_tile_2 = q_tile_2 * cos_row[None, :] - q_tile_1 * sin_row[None, :]
        tl.store(q_ptr + second_half_q_offsets, new_q_tile_2.to(q_ptr.dtype.element_ty), mask=second_q_mask)

        new_k_tile_1 = k_tile_1 * cos_row[None, :] + k_tile_2 * sin_row[None, :]
        tl.store(k_ptr + first_half_k_offsets, new_k_tile_1.to(k_ptr.dtype.element_ty), mask=first_k_mask)
        new_k_tile_2 = k_tile_2 * cos_row[None, :] - k_tile_1 * sin_row[None, :]
        tl.store(k_ptr + second_half_k_offsets, new_k_tile_2.to(k_ptr.dtype.element_ty), mask=second_k_mask)


@triton.jit
def _rope_embedding(
    Q, Q_row_stride,
    COS, cos_row_stride,
    SIN, sin_row_stride,
    seqlen,
    head_dim: tl.constexpr,
    n_heads: tl.constexpr,
    BACKWARD_PASS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    ROPE_GROUP_SIZE: tl.constexpr = 4,
):
    """
        Calculates the RoPE Embedding quickly
        RoPE is Q * cos + rotate_half(Q) * sin
    """
    row_position = tl.program_id(0)
    group_head_position = tl.program_id(1)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    half_head_dim = head_dim // 2
    mask = col_offsets < half_head_dim

    sin1 = tl.load(SIN + (row_position % seqlen) * sin_row_stride + col_offsets,
                   mask=mask, other=0)
    cos1 = tl.load(COS + (row_position % seqlen) * cos_row_stride + col_offsets,
                   mask=mask, other=0)

    if BACKWARD_PASS:
        # See our blog post for more info.
        sin1 = -sin1

    # [TODO] Autotune ROPE_GROUP_SIZE to be 1, 2, 4, 8
    head_start = group_head_position * ROPE_GROUP_SIZE
    head_end = min((head_start + ROPE_GROUP_SIZE), n_heads)

    # 10% Faster kernel from [HuyNguyen-hust](https://github.com/unslothai/unsloth/pull/238)
    for k in range(head_start, head_end):
        offs_q1 = row_position * Q_row_stride + k * head_dim + col_offsets
        offs_q2 = row_position * Q_row_stride + k * head_dim + col_offsets + half_head_dim

        # For Gemma - sometimes RoPE must be done in float32 and not bfloat16
        Q1 = tl.load(Q + offs_q1, mask=mask, other=0).to(sin1.dtype)
        Q2 = tl.load(Q + offs_q2, mask=mask, other=0).to(sin1.dtype)

        tl.store(Q + offs_q1, Q1 * cos1 - Q2 * sin1, mask=mask)
        tl.store(Q + offs_q2, Q2 * cos1 + Q1 * sin1, mask=mask)
