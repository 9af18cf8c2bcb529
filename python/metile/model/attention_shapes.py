"""What the attention regions of both frameworks share: keys and values padded up to a
multiple of BUCKET rows (the padding masked out), so a decode loop compiles and decides once
per BUCKET tokens, not per token; and the shapes of the padded arguments, by which a decided
call finds its winner before padding anything."""

import math
from types import SimpleNamespace

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


def grouped(q, k, v):
    """q [B, H, L, D], k and v [B, KV, S, D] as the graph takes them: [B KV, G, L, D] and
    [B KV, 1, S, D] (G query heads per key/value head, broadcast, not repeated); torch tensors
    or MLX arrays."""
    b, heads, length, dim = q.shape
    kv_heads, keys = k.shape[1], k.shape[2]
    group = heads // kv_heads
    return (q.reshape(b * kv_heads, group, length, dim), k.reshape(b * kv_heads, 1, keys, dim),
            v.reshape(b * kv_heads, 1, keys, dim), group)
