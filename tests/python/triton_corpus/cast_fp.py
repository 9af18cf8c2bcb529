"""Float casts and fast math in one pointwise kernel, as mixed-precision library kernels
(Liger-Kernel, unsloth, FlagGems) write them: f32 inputs rounded to bf16 and f16 with
`.to(tl.bfloat16)` / `.to(tl.float16)` and widened back with `.to(tl.float32)`, and the f32
math those libraries reach for: `tl.math.rsqrt`, `tl.exp2` and `tl.log2` (softmax and
attention kernels' base-2 exponentials), and libdevice's `fast_expf`
(`tl.extra.cuda.libdevice.fast_expf`; Triton has no `tl.math.fast_expf`)."""
import triton
import triton.language as tl


@triton.jit
def cast_math_kernel(
    x_ptr, bf16_ptr, f16_ptr, roundtrip_ptr, rsqrt_ptr, exp2_ptr, log2_ptr, fast_exp_ptr,
    n_elements, BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=1.0)

    x_bf16 = x.to(tl.bfloat16)
    x_f16 = x.to(tl.float16)
    tl.store(bf16_ptr + offsets, x_bf16, mask=mask)
    tl.store(f16_ptr + offsets, x_f16, mask=mask)
    # the rounding errors of the two narrow types, back in f32
    roundtrip = (x_bf16.to(tl.float32) - x) + (x_f16.to(tl.float32) - x)
    tl.store(roundtrip_ptr + offsets, roundtrip, mask=mask)

    ax = tl.abs(x) + 1e-3
    tl.store(rsqrt_ptr + offsets, tl.math.rsqrt(ax), mask=mask)
    tl.store(exp2_ptr + offsets, tl.exp2(x * 1.4426950408889634), mask=mask)
    tl.store(log2_ptr + offsets, tl.log2(ax), mask=mask)
    tl.store(fast_exp_ptr + offsets, tl.extra.cuda.libdevice.fast_expf(x), mask=mask)


@triton.jit
def rms_scale_kernel(x_ptr, y_ptr, n_cols, eps, stride, BLOCK_SIZE: tl.constexpr):
    """One row of an f16/bf16 x scaled by rsqrt(mean(x^2) + eps) in f32, stored back narrow:
    the cast pattern of an RMSNorm without its weight."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * stride + cols, (x * rstd).to(y_ptr.dtype.element_ty), mask=mask)
