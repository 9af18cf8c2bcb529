"""Per-token fp8 quantisation and its dequantisation, as vLLM's `_per_token_group_quant_fp8`
and FlagGems' fp8 kernels write them: each row's absolute maximum (at least `eps`) over the
format's largest value is the row's scale, `tl.clamp(x / scale, fp8_min, fp8_max)` is rounded
to the output's fp8 type with `.to(q_ptr.dtype.element_ty)` (tl.float8e4nv or tl.float8e5),
and the dequantiser multiplies the fp8 values, widened with `.to(tl.float32)`, by the row's
scale and stores them in the output's type."""
import triton
import triton.language as tl


@triton.jit
def per_token_quant_fp8_kernel(x_ptr, q_ptr, scale_ptr, stride_x, stride_q, n_cols, eps,
                               fp8_min, fp8_max, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x)), eps)
    scale = absmax / fp8_max
    q = tl.clamp(x / scale, fp8_min, fp8_max).to(q_ptr.dtype.element_ty)
    tl.store(q_ptr + row * stride_q + cols, q, mask=mask)
    tl.store(scale_ptr + row, scale)


@triton.jit
def dequant_fp8_kernel(q_ptr, scale_ptr, out_ptr, stride_q, stride_out, n_cols,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    q = tl.load(q_ptr + row * stride_q + cols, mask=mask, other=0.0)
    scale = tl.load(scale_ptr + row)
    out = q.to(tl.float32) * scale
    tl.store(out_ptr + row * stride_out + cols, out.to(out_ptr.dtype.element_ty), mask=mask)
