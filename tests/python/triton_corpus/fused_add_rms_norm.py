"""Residual add fused with RMSNorm, as vLLM's `fused_add_rms_norm` does it (and its Triton
ports in vLLM and SGLang): one program per token row, `residual <- input + residual` and
`input <- rms_norm(input + residual) * weight`, both written in place, in the activation
dtype (f16/bf16, or f32). As in vLLM, the sum is rounded to the activation dtype (what the
residual stream keeps), the variance is taken in f32 from that rounded sum, and the normalised
value is rounded to the activation dtype before the weight multiplies it in that dtype."""
import triton
import triton.language as tl


@triton.jit
def fused_add_rms_norm_kernel(
    input_ptr,  # [num_tokens, hidden_size], overwritten with the normalised output
    residual_ptr,  # [num_tokens, hidden_size], overwritten with input + residual
    weight_ptr,  # [hidden_size], in the activation dtype
    input_row_stride,
    residual_row_stride,
    hidden_size,
    epsilon,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < hidden_size
    input_row = input_ptr + row * input_row_stride
    residual_row = residual_ptr + row * residual_row_stride

    x = tl.load(input_row + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(residual_row + offsets, mask=mask, other=0.0).to(tl.float32)
    z = (x + r).to(residual_ptr.dtype.element_ty)
    tl.store(residual_row + offsets, z, mask=mask)
    x = z.to(tl.float32)

    variance = tl.sum(x * x, axis=0) / hidden_size
    rstd = tl.math.rsqrt(variance + epsilon)
    w = tl.load(weight_ptr + offsets, mask=mask, other=0.0)
    out = (x * rstd).to(input_ptr.dtype.element_ty) * w
    tl.store(input_row + offsets, out, mask=mask)
