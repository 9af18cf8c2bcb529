"""Global maximum and minimum of a vector, the two-level idiom of Triton reduction kernels
(FlagGems' `max`/`min` without a dim, Liger-Kernel's absmax): each program reduces its BLOCK
with `tl.max` / `tl.min` and one lane per program folds that into a single global value with
`tl.atomic_max` / `tl.atomic_min`, the result pre-set to the identity (INT_MIN / INT_MAX,
-inf). Integers on i32; the f32 kernel is Triton's float `atomic_max`."""
import triton
import triton.language as tl


@triton.jit
def max_min_i32_kernel(x_ptr, max_ptr, min_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0)
    block_max = tl.max(tl.where(mask, x, -2147483648), axis=0)
    block_min = tl.min(tl.where(mask, x, 2147483647), axis=0)
    tl.atomic_max(max_ptr, block_max)
    tl.atomic_min(min_ptr, block_min)


@triton.jit
def absmax_f32_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.atomic_max(out_ptr, tl.max(tl.abs(x), axis=0))
