"""Bias add fused with an activation chosen at compile time, as Triton's matmul tutorial
(03-matrix-multiplication) fuses `ACTIVATION: tl.constexpr` == "leaky_relu" into its epilogue
and xformers' / FlagGems' pointwise kernels pick theirs: 2-D [BLOCK_M, BLOCK_N] tiles
addressed through row and column strides (so a transposed view runs as is), the bias
broadcast along the rows, the math in f32 and the result stored in the output's dtype. The
activations are `@triton.jit` helpers called from the kernel."""
import triton
import triton.language as tl


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def gelu(x):
    # exact gelu, as torch.nn.functional.gelu(approximate="none")
    return 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)


@triton.jit
def bias_act_kernel(
    x_ptr, bias_ptr, y_ptr,
    M, N,
    stride_xm, stride_xn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)

    x = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn,
                mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    x = x + bias[None, :]
    # You can fuse arbitrary activation functions here
    if ACTIVATION == "leaky_relu":
        x = leaky_relu(x)
    elif ACTIVATION == "gelu":
        x = gelu(x)
    elif ACTIVATION == "relu":
        x = relu(x)
    y = x.to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, y, mask=mask)
