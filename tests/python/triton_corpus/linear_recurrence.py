"""A first-order linear recurrence h_t = a_t * h_{t-1} + b_t (h_{-1} = 0) with
`tl.associative_scan` on the tuple (a, b) and a `@triton.jit` combine function, the idiom of
Mamba's selective scan and of linear-RNN kernels (the "first_order_op" of the Triton scan
tests): composing (a1, b1) then (a2, b2) gives (a1 * a2, a2 * b1 + b2). One kernel scans
BLOCK_D channels of BLOCK_L steps at once along axis 1; the other walks a long sequence in
BLOCK_L chunks and feeds the carried state into each chunk's first step."""
import triton
import triton.language as tl


@triton.jit
def first_order_op(l_a, l_b, r_a, r_b):
    return r_a * l_a, r_a * l_b + r_b


@triton.jit
def linear_recurrence_kernel(a_ptr, b_ptr, h_ptr, n_channels, seq_len, stride_c,
                             BLOCK_D: tl.constexpr, BLOCK_L: tl.constexpr):
    pid = tl.program_id(0)
    channels = pid * BLOCK_D + tl.arange(0, BLOCK_D)
    steps = tl.arange(0, BLOCK_L)
    mask = (channels[:, None] < n_channels) & (steps[None, :] < seq_len)
    offsets = channels[:, None] * stride_c + steps[None, :]
    a = tl.load(a_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    _, h = tl.associative_scan((a, b), axis=1, combine_fn=first_order_op)
    tl.store(h_ptr + offsets, h.to(h_ptr.dtype.element_ty), mask=mask)


@triton.jit
def linear_recurrence_chunked_kernel(a_ptr, b_ptr, h_ptr, seq_len, stride_c,
                                     BLOCK_L: tl.constexpr):
    channel = tl.program_id(0)
    a_ptr += channel * stride_c
    b_ptr += channel * stride_c
    h_ptr += channel * stride_c
    steps = tl.arange(0, BLOCK_L)
    h_prev = 0.0
    for start in range(0, seq_len, BLOCK_L):
        offsets = start + steps
        mask = offsets < seq_len
        a = tl.load(a_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        # h_start = a_start * h_prev + b_start: the carried state enters through the first b
        b = tl.where(steps == 0, b + a * h_prev, b)
        _, h = tl.associative_scan((a, b), axis=0, combine_fn=first_order_op)
        tl.store(h_ptr + offsets, h, mask=mask)
        # past the end a = 1 and b = 0, so the last element holds the last valid state
        h_prev = tl.sum(tl.where(steps == BLOCK_L - 1, h, 0.0), axis=0)
