"""GeGLU forward in unsloth's idiom (unsloth/kernels/geglu.py): flat elementwise programs of
BLOCK_SIZE elements over `e` (the gate) and `g` (the up projection), `h = gelu(e) * g`, the
gate's gelu computed in f32 and rounded to g's dtype before the product ("exact copy from
HF"). `_exact_forward_kernel` is the erf form, 0.5 e (1 + erf(e / sqrt 2)) with `tl.math.erf`
and `tl.math.rsqrt`; `_approx_forward_kernel` the tanh approximation with libdevice's tanh;
Liger-Kernel's row kernel (liger_kernel/ops/geglu.py) writes the same tanh form per row with a
`stride`, and `_geglu_sigmoid_forward_kernel` the tanh form rewritten through `tl.sigmoid`
(0.5 (1 + tanh z) = sigmoid(2 z)), as kernels that avoid libdevice do."""
import triton
import triton.language as tl


@triton.jit
def _exact_forward_kernel(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr):
    block_idx = tl.program_id(0)
    offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    # f = 1/2 * e * (1 + erf(1/sqrt(2) * e))
    # h = f * up
    e_row = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    g_row = tl.load(g + offsets, mask=mask, other=0)

    f_row = 0.5 * e_row * (tl.math.erf(tl.math.rsqrt(2.0) * e_row) + 1.0)
    f_row = f_row.to(g_row.dtype)  # Exact copy from HF
    h_row = f_row * g_row

    # Store h
    tl.store(h + offsets, h_row, mask=mask)


@triton.jit
def _approx_forward_kernel(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr):
    block_idx = tl.program_id(0)
    offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    # f = 1/2 * e * (1 + tanh( sqrt(2/pi) * (x + 0.044715 * x^3 ) ))
    # f = 1/2 * e * (1 + tanh( sqrt(2/pi) * x * (1 + 0.044715 * x^2 ) ))
    # h = f * up
    s = 0.7978845608028654  # math.sqrt(2 / math.pi)

    e_row = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    g_row = tl.load(g + offsets, mask=mask, other=0)

    f_row = 0.5 * e_row * (
        tl.extra.cuda.libdevice.tanh(s * e_row * (1.0 + 0.044715 * e_row * e_row)) + 1.0
    )
    f_row = f_row.to(g_row.dtype)  # Exact copy from HF
    h_row = f_row * g_row

    # Store h
    tl.store(h + offsets, h_row, mask=mask)


@triton.jit
def _geglu_tanh_forward_kernel(a, b, c, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)

    # locate start index
    a += program_id * stride
    b += program_id * stride
    c += program_id * stride

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    a_row = tl.load(a + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b + col_offsets, mask=mask, other=0)

    # tanh approximation form of GELU is computed with:
    # 0.5 * a * (1 + tanh(sqrt(2 / pi) * (a + 0.044715 * a^3)))
    sqrt_2_over_pi = 0.7978845608028654  # sqrt(2 / pi)
    a_cubed = a_row * a_row * a_row
    tanh_arg = sqrt_2_over_pi * (a_row + 0.044715 * a_cubed)
    tanh_result = tl.extra.cuda.libdevice.tanh(tanh_arg)
    geglu_a = 0.5 * a_row * (1 + tanh_result)
    c_row = geglu_a.to(b_row.dtype) * b_row
    tl.store(c + col_offsets, c_row, mask=mask)


@triton.jit
def _geglu_sigmoid_forward_kernel(a, b, c, stride, n_cols: tl.constexpr,
                                  BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    a_row = tl.load(a + row * stride + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b + row * stride + col_offsets, mask=mask, other=0).to(tl.float32)
    # 0.5 * (1 + tanh(z)) == sigmoid(2 * z)
    z = 0.7978845608028654 * (a_row + 0.044715 * a_row * a_row * a_row)
    c_row = a_row * tl.sigmoid(2.0 * z) * b_row
    tl.store(c + row * stride + col_offsets, c_row.to(c.dtype.element_ty), mask=mask)
