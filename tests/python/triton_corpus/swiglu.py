"""SwiGLU forward and backward in Liger-Kernel's idiom (liger_kernel/ops/swiglu.py): one
program per row of `a` and `b` (rows `stride` elements apart, the program id widened to int64
before it scales the stride), BLOCK_SIZE = triton.next_power_of_2(n_cols) columns masked to
`n_cols`; `c = silu(a) * b` with silu written as `a * tl.sigmoid(a)` and computed in f32,
stored in the input dtype; the backward recomputes silu and writes da and db over a and b in
place."""
import triton
import triton.language as tl


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def _swiglu_forward_kernel(a_ptr, b_ptr, c_ptr, stride, n_cols: tl.constexpr,
                           BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)

    # locate start index
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    c_ptr += program_id * stride

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    # sigmoid requires type float32
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    c_row = silu(a_row) * b_row
    tl.store(c_ptr + col_offsets, c_row.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _swiglu_backward_kernel(dc_ptr, a_ptr, b_ptr, stride, n_cols: tl.constexpr,
                            BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)

    # locate start index
    dc_ptr += program_id * stride
    a_ptr += program_id * stride
    b_ptr += program_id * stride

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    dc_row = tl.load(dc_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    # sigmoid requires type float32
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0).to(tl.float32)

    # recomputation to save memory
    sig_a = tl.sigmoid(a_row)
    silu_a = a_row * sig_a
    db_row = dc_row * silu_a
    da_row = dc_row * (silu_a * (1 - sig_a) + sig_a) * b_row

    tl.store(a_ptr + col_offsets, da_row.to(a_ptr.dtype.element_ty), mask=mask)
    tl.store(b_ptr + col_offsets, db_row.to(b_ptr.dtype.element_ty), mask=mask)


def calculate_settings(n):
    """Liger's (and unsloth's) block size and warp count for a row of n elements."""
    BLOCK_SIZE = triton.next_power_of_2(n)
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps
