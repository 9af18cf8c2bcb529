"""Elementwise selects, bounds and integer arithmetic in one kernel, as pointwise library
kernels (FlagGems' where/clamp/masked_fill, torch-inductor's generated pointwise code) write
them: `tl.where` for masked_fill (a mask read as int32 and compared with 0) and for a select
between `tl.maximum` and `tl.minimum`, `tl.clamp` by runtime bounds, `tl.abs` and `tl.fma`,
and integer `//` and `%` on tiles, which in Triton follow C (the quotient rounds toward zero,
the remainder takes the dividend's sign). Autotuned over BLOCK_SIZE on n_elements, with
`@triton.heuristics` dropping the mask when the blocks divide n_elements."""
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=8, num_stages=1),
    ],
    key=["n_elements"],
)
@triton.heuristics({"EVEN_N": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def where_ops_kernel(
    x_ptr, y_ptr, z_ptr, fill_mask_ptr, i_ptr, j_ptr,
    filled_ptr, select_ptr, clamped_ptr, fma_ptr, quot_ptr, rem_ptr,
    n_elements, lo, hi, fill_value,
    BLOCK_SIZE: tl.constexpr, EVEN_N: tl.constexpr,
):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    if EVEN_N:
        x = tl.load(x_ptr + offsets).to(tl.float32)
        y = tl.load(y_ptr + offsets).to(tl.float32)
        z = tl.load(z_ptr + offsets).to(tl.float32)
        fill = tl.load(fill_mask_ptr + offsets)
        i = tl.load(i_ptr + offsets)
        j = tl.load(j_ptr + offsets)
    else:
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        z = tl.load(z_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        fill = tl.load(fill_mask_ptr + offsets, mask=mask, other=0)
        i = tl.load(i_ptr + offsets, mask=mask, other=0)
        j = tl.load(j_ptr + offsets, mask=mask, other=1)

    filled = tl.where(fill != 0, fill_value, x)
    select = tl.where(x > y, tl.maximum(x, z), tl.minimum(y, z))
    clamped = tl.clamp(x, lo, hi)
    fused = tl.fma(tl.abs(x), y, z)
    quot = i // j
    rem = i % j

    tl.store(filled_ptr + offsets, filled.to(filled_ptr.dtype.element_ty), mask=mask)
    tl.store(select_ptr + offsets, select.to(select_ptr.dtype.element_ty), mask=mask)
    tl.store(clamped_ptr + offsets, clamped.to(clamped_ptr.dtype.element_ty), mask=mask)
    tl.store(fma_ptr + offsets, fused.to(fma_ptr.dtype.element_ty), mask=mask)
    tl.store(quot_ptr + offsets, quot, mask=mask)
    tl.store(rem_ptr + offsets, rem, mask=mask)
