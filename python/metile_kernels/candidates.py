"""The library's kernels as generated candidates for metile.select (docs/tuning.md): each
function returns a metile.tune.Candidate taking the framework operation's arguments (numpy
arrays, or torch CUDA tensors on the cuda device), allocating the outputs like its first
argument and launching the kernel on rows of the last dimension. Rows must be contiguous.

    select = metile.select(native=lambda x, w: torch_rms_norm(x, w), family="rms_norm",
                           candidates=[rms_norm(eps, block) for block in (256, 1024)])
"""

import metile

from .rmsnorm import add_rms_norm_rows, rms_norm_rows
from .softmax import softmax_rows
from .vector_add import vector_add as vector_add_kernel


def _empty_like(x):
    if type(x).__module__.split(".")[0] == "torch":
        import torch

        return torch.empty_like(x)
    import numpy as np

    return np.empty_like(x)


def _rows(x):
    n_cols = x.shape[-1]
    rows = 1
    for extent in x.shape[:-1]:
        rows *= extent
    return rows, n_cols


def rms_norm(eps, block):
    """y = x * rsqrt(mean(x^2, last axis) + eps) * w."""

    def run(x, w):
        y = _empty_like(x)
        rows, n_cols = _rows(x)
        rms_norm_rows[(rows,)](x, w, y, n_cols, n_cols, eps, BLOCK=block)
        return y

    return metile.tune.Candidate(run, f"rms_norm_rows[BLOCK={block}]")


def add_rms_norm(eps, block):
    """(RMSNorm of x + residual, x + residual)."""

    def run(x, residual, w):
        y, h = _empty_like(x), _empty_like(x)
        rows, n_cols = _rows(x)
        add_rms_norm_rows[(rows,)](x, residual, w, y, h, n_cols, n_cols, eps, BLOCK=block)
        return y, h

    return metile.tune.Candidate(run, f"add_rms_norm_rows[BLOCK={block}]")


def softmax(block):
    """Softmax over the last axis."""

    def run(x):
        y = _empty_like(x)
        rows, n_cols = _rows(x)
        softmax_rows[(rows,)](x, y, n_cols, n_cols, BLOCK=block)
        return y

    return metile.tune.Candidate(run, f"softmax_rows[BLOCK={block}]")


def vector_add(block):
    """x + y, elementwise."""

    def run(x, y):
        out = _empty_like(x)
        n = 1
        for extent in x.shape:
            n *= extent
        vector_add_kernel[(metile.cdiv(n, block),)](x, y, out, n, BLOCK=block)
        return out

    return metile.tune.Candidate(run, f"vector_add[BLOCK={block}]")
