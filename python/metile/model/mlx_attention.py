"""The attention core of an mlx-lm model as a region. mlx-lm's attention modules call
`scaled_dot_product_attention` from their model file's globals (mlx_lm.models.llama, ...);
metile.compile replaces that name there with `dispatch`, which runs the region of the attention
module being called (set by the module's region call, a context variable) and mlx-lm's own
function for every other caller. Keys are padded to a bucket of lengths
(attention_shapes.py)."""

import contextvars
import sys

import numpy as np

from .attention_shapes import decision_shapes, grouped, padded_length
from . import file_patches, regions
from .regions import original_call

_CURRENT = contextvars.ContextVar("metile_mlx_attention", default=None)
NAME = "scaled_dot_product_attention"


class AttentionRegion:
    def __init__(self, module, kernels, model_file):
        self.module, self.kernels, self.model_file = module, kernels, model_file
        self.call = None
        self.region = None

    def native(self, q, k, v, mask):
        call = self.call
        return call.original(q, k[:, :, :call.length], v[:, :, :call.length], call.cache,
                             scale=call.scale, mask=call.mask)

    def candidate(self, q, k, v, mask):
        import mlx.core as mx

        from .mlx_front import from_numpy, to_numpy

        qg, kg, vg, mg = grouped(q, k, v, mask, mx.broadcast_to)
        out = self.kernels.attention(*(to_numpy(t) for t in (qg, kg, vg)),
                                     None if mg is None else to_numpy(mg), self.call.scale,
                                     self.call.causal)
        return from_numpy(out).reshape(q.shape)


def _additive(mask, query, length, padded):
    """The mask over the padded keys, 0 or -inf, [B, 1, L, padded]; None where mlx-lm's mask
    has another shape (a per-head mask: the region leaves it to MLX)."""
    import mlx.core as mx

    b, _, rows, _ = query.shape
    if isinstance(mask, str):  # "causal" with keys before the queries: bottom-right aligned
        keep = mx.arange(length)[None, :] <= (length - rows) + mx.arange(rows)[:, None]
    elif mask is None:
        keep = mx.ones((rows, length), dtype=mx.bool_)
    elif mask.dtype == mx.bool_:
        keep = mask
    else:
        keep = mask == 0  # an additive mask: 0 keeps, -inf (or a large negative) drops
    if keep.ndim > 2 and (keep.ndim != 4 or keep.shape[1] != 1):
        return None
    keep = mx.broadcast_to(keep if keep.ndim == 4 else keep[None, None], (b, 1, rows, length))
    additive = mx.where(keep, 0.0, -np.inf).astype(query.dtype)
    if padded > length:
        additive = mx.pad(additive, [(0, 0), (0, 0), (0, 0), (0, padded - length)],
                          constant_values=-np.inf)
    return additive


def dispatch(queries, keys, values, cache, scale, mask, sinks=None):
    """mlx-lm's scaled_dot_product_attention, through the current attention module's region."""
    import mlx.core as mx
    from types import SimpleNamespace

    attention = _CURRENT.get()
    original = None if attention is None else file_patches.original(attention.model_file, NAME)
    if original is None:
        return _fallback(queries, keys, values, cache, scale, mask, sinks)
    if sinks is not None or hasattr(cache, "bits"):
        attention.region.runner.keep("attention sinks" if sinks is not None
                                     else "a quantised KV cache")
        return _fallback(queries, keys, values, cache, scale, mask, sinks)
    rows, length = queries.shape[2], keys.shape[2]
    causal = isinstance(mask, str) and rows == length
    padded = padded_length(length, causal)
    attention.call = SimpleNamespace(original=original, cache=cache, scale=scale, mask=mask,
                                     length=length, causal=causal)
    runner = attention.region.runner
    if runner.winner_for(decision_shapes(queries, keys, values, padded, causal)) is runner.native:
        return original(queries, keys, values, cache, scale=scale, mask=mask)
    additive = None if causal else _additive(mask, queries, length, padded)
    if not causal and additive is None:
        runner.keep("a per-head mask")
        return original(queries, keys, values, cache, scale=scale, mask=mask)
    if padded > length:
        pad = [(0, 0), (0, 0), (0, padded - length), (0, 0)]
        keys, values = mx.pad(keys, pad), mx.pad(values, pad)
    return runner(queries, keys, values, additive)


def _fallback(queries, keys, values, cache, scale, mask, sinks):
    from mlx_lm.models.base import scaled_dot_product_attention

    return scaled_dot_product_attention(queries, keys, values, cache, scale=scale, mask=mask,
                                        sinks=sinks)


def attention_call(module, runner, *args, **kwargs):
    """The attention module's call, its region current while it runs."""
    token = _CURRENT.set(module._metile_region.state)
    try:
        return original_call(module)(*args, **kwargs)
    finally:
        _CURRENT.reset(token)


def model_file(module):
    """The module (file) whose globals the attention module's class reads mlx-lm's
    scaled_dot_product_attention from, or None if it reads another (or none)."""
    from mlx_lm.models.base import scaled_dot_product_attention

    cls = getattr(type(module), "_metile_original_class", type(module))
    file = sys.modules.get(cls.__module__)
    found = getattr(file, NAME, None)
    return cls.__module__ if found is scaled_dot_product_attention or found is dispatch else None


def install(region, call_name):
    regions.install(region, call_name)
    file_patches.patch(region.state.model_file, NAME, dispatch)


def uninstall(region):
    regions.uninstall(region)
    file_patches.unpatch(region.state.model_file, NAME)
