"""The kernels: meTile's in the Python eDSL and Triton's in the tutorials' forms."""

from __future__ import annotations

import metile
import triton
import triton.language as tl
from metile_kernels.rmsnorm import add_rms_norm_rows, rms_norm_rows
from metile_kernels.softmax import softmax_rows
from metile_kernels.vector_add import vector_add


# ---------------------------------------------------------------------------------------------
# meTile kernels: the library's (python/metile_kernels), plus a row sum.


def mt_row_sum(x, y, n_cols, row_stride, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x + row * row_stride
    acc = metile.zeros([BLOCK], metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        acc = acc + metile.load(x_row + cols, cols < n_cols).to(metile.float32)
    metile.store(y + row, metile.sum(acc))


# ---------------------------------------------------------------------------------------------
# Triton kernels in the tutorials' forms (01 vector add, 02 fused softmax, 05 layer norm: one
# program per row, the whole row in one block).


def tt_vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def tt_softmax(out_ptr, in_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    numerator = tl.exp(x - tl.max(x, axis=0))
    out = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * n_cols + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


def tt_rms_norm(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def tt_add_rms_norm(x_ptr, r_ptr, w_ptr, y_ptr, h_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    h = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0) + tl.load(
        r_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(h_ptr + row * n_cols + cols, h, mask=mask)
    hf = h.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(hf * hf, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (hf * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def tt_row_sum(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(x, axis=0))


def tutorial_num_warps(block):
    """Tutorial 02's rule: more warps for longer rows."""
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


METILE_KERNELS = {"vector_add": vector_add, "softmax": softmax_rows, "rms_norm": rms_norm_rows,
                  "add_rms_norm": add_rms_norm_rows, "row_sum": metile.kernel(mt_row_sum)}
TRITON_KERNELS = {name: triton.jit(globals()["tt_" + name]) for name in METILE_KERNELS}
