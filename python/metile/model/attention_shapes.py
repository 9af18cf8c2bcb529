"""What the attention regions of both frameworks share: keys and values padded up to a
multiple of BUCKET rows (the padding masked out), so a decode loop compiles and decides once
per BUCKET tokens, not per token; and the shapes of the padded arguments, by which a decided
call finds its winner before padding anything."""

import math
from types import SimpleNamespace

from ..errors import NotSupportedError

BUCKET = 64


def padded_length(length, causal):
    """A causal call (a prefill with no mask) is not padded: its mask is the graph's own."""
    return length if causal else BUCKET * math.ceil(length / BUCKET)


def decision_shapes(query, key, value, padded, causal):
    """Stand-ins with the shape and dtype of the region's arguments (query, keys, values, mask)
    after padding (dispatch.shape_key reads only those)."""
    kv = SimpleNamespace(shape=tuple(key.shape[:2]) + (padded,) + tuple(key.shape[3:]),
                         dtype=key.dtype)
    mask = None if causal else SimpleNamespace(shape=(query.shape[0], 1, query.shape[2], padded),
                                               dtype=query.dtype)
    return [query, kv, SimpleNamespace(shape=kv.shape, dtype=value.dtype), mask]


def grouped(q, k, v, mask, broadcast):
    """q [B, H, L, D], k and v [B, KV, S, D] and mask [B, 1, L, S] (or None) as the graph takes
    them: [B KV, G, L, D], [B KV, 1, S, D] and [B KV, 1, L, S] (G query heads per key/value
    head, broadcast, not repeated); torch tensors or MLX arrays, `broadcast(array, shape)`
    their library's broadcast."""
    b, heads, length, dim = q.shape
    kv_heads, keys = k.shape[1], k.shape[2]
    if heads % kv_heads:
        raise NotSupportedError(f"attention with {heads} query heads over {kv_heads} "
                                "key/value heads")
    if mask is not None:
        mask = broadcast(mask, (b, kv_heads, length, keys)).reshape(b * kv_heads, 1, length, keys)
    return (q.reshape(b * kv_heads, heads // kv_heads, length, dim),
            k.reshape(b * kv_heads, 1, keys, dim), v.reshape(b * kv_heads, 1, keys, dim), mask)
