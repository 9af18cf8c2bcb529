"""Log-softmax forward and backward per row, in the idiom of FlagGems' and xformers' row
kernels: one program per row, the whole row in one block (BLOCK_N the next power of two of
n_cols, set by `@triton.heuristics`), padded with -inf (forward) or 0 (backward), computed in
f32. Forward: y = x - max(x) - log(sum(exp(x - max(x)))). Backward: dx = dy - exp(y) * sum(dy).
The forward is autotuned over num_warps, as FlagGems' kernels are."""
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4)],
    key=["n_cols"],
)
@triton.heuristics({"BLOCK_N": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def log_softmax_fwd_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(input_ptr + row * input_row_stride + cols, mask=mask,
                other=-float("inf")).to(tl.float32)
    x_max = tl.max(x, axis=0)
    shifted = x - x_max
    log_sum = tl.log(tl.sum(tl.exp(shifted), axis=0))
    y = shifted - log_sum
    tl.store(output_ptr + row * output_row_stride + cols, y, mask=mask)


@triton.heuristics({"BLOCK_N": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def log_softmax_bwd_kernel(grad_in_ptr, grad_out_ptr, out_ptr, grad_in_row_stride,
                           grad_out_row_stride, out_row_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    dy = tl.load(grad_out_ptr + row * grad_out_row_stride + cols, mask=mask,
                 other=0.0).to(tl.float32)
    y = tl.load(out_ptr + row * out_row_stride + cols, mask=mask,
                other=-float("inf")).to(tl.float32)
    dx = dy - tl.exp(y) * tl.sum(dy, axis=0)
    tl.store(grad_in_ptr + row * grad_in_row_stride + cols, dx, mask=mask)
