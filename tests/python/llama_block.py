"""A Llama-style decoder block (RMSNorm, QKV projections, rotary, grouped-query causal
attention, output projection, residual, RMSNorm, SwiGLU MLP, residual) as a GraphBuilder
graph, its random inputs and its float64 numpy reference: shared by the graph tests
(test_graph_decoder.py, test_graph_dispatch.py) and benchmarks/h200_graph.py."""

import numpy as np

import metile


def decoder_graph(tokens, hidden, heads, kv_heads, head_dim, inter, dtype="f32", eps=1e-5):
    """The block as a GraphBuilder graph; inputs in the order decoder_inputs makes them."""
    b = metile.GraphBuilder()

    def inp(name, shape):
        return b.input(name, metile.TensorSpec(shape, dtype))

    x = inp("x", (tokens, hidden))
    attn_norm = inp("attn_norm", (hidden,))
    wq = inp("wq", (hidden, heads * head_dim))
    wk = inp("wk", (hidden, kv_heads * head_dim))
    wv = inp("wv", (hidden, kv_heads * head_dim))
    wo = inp("wo", (heads * head_dim, hidden))
    mlp_norm = inp("mlp_norm", (hidden,))
    w_gate = inp("w_gate", (hidden, inter))
    w_up = inp("w_up", (hidden, inter))
    w_down = inp("w_down", (inter, hidden))
    cos = inp("cos", (tokens, head_dim // 2))
    sin = inp("sin", (tokens, head_dim // 2))

    h = b.rms_norm(x, attn_norm, eps)
    attn = causal_attention(b, h, wq, wk, wv, cos, sin, tokens, heads, kv_heads, head_dim)
    h2 = b.add(x, b.matmul(attn, wo))
    n2 = b.rms_norm(h2, mlp_norm, eps)
    mlp = b.matmul(b.multiply(b.silu(b.matmul(n2, w_gate)), b.matmul(n2, w_up)), w_down)
    return b.build([b.add(h2, mlp)])


def causal_attention(b, h, wq, wk, wv, cos, sin, tokens, heads, kv_heads, head_dim):
    """The block's attention on the normalised rows h: Q/K/V projections, rotary, grouped-query
    causal attention, heads back to rows, (T, heads * head_dim), before the output projection
    (also one rank's share of it in benchmarks/tp_decoder.py, with that rank's heads)."""
    group = heads // kv_heads

    def heads_first(y, n, g):  # (T, n * g * D) -> (n, g, T, D), a view
        y = b.reshape(y, (tokens, n, g, head_dim))
        return b.transpose(b.transpose(y, 0, 1), 1, 2)

    q = b.rotary(heads_first(b.matmul(h, wq), kv_heads, group), cos, sin)
    k = b.rotary(heads_first(b.matmul(h, wk), kv_heads, 1), cos, sin)
    v = heads_first(b.matmul(h, wv), kv_heads, 1)
    scores = b.causal_mask(b.scale(b.matmul(q, b.transpose(k)), head_dim ** -0.5))
    attn = b.matmul(b.softmax(scores), v)                        # (kv, group, T, D)
    attn = b.transpose(b.transpose(attn, 1, 2), 0, 1)            # (T, kv, group, D)
    return b.reshape(attn, (tokens, heads * head_dim))


def rope_tables(tokens, head_dim, base=10000.0):
    half = head_dim // 2
    angles = np.arange(tokens)[:, None] * base ** (-np.arange(half) / half)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def decoder_inputs(tokens, hidden, heads, kv_heads, head_dim, inter, rng):
    def weight(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)

    cos, sin = rope_tables(tokens, head_dim)
    return {
        "x": rng.standard_normal((tokens, hidden)).astype(np.float32),
        "attn_norm": (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32),
        "wq": weight(hidden, heads * head_dim),
        "wk": weight(hidden, kv_heads * head_dim),
        "wv": weight(hidden, kv_heads * head_dim),
        "wo": weight(heads * head_dim, hidden),
        "mlp_norm": (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32),
        "w_gate": weight(hidden, inter),
        "w_up": weight(hidden, inter),
        "w_down": weight(inter, hidden),
        "cos": cos,
        "sin": sin,
    }


def decoder_reference(a, heads, kv_heads, head_dim, eps=1e-5):
    """The block in float64 numpy, written as Llama's reference code is (repeat_kv)."""
    a = {k: np.asarray(v, np.float64) for k, v in a.items()}
    tokens = a["x"].shape[0]

    def rms(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def rope(x):
        half = head_dim // 2
        x1, x2 = x[..., :half], x[..., half:]
        return np.concatenate([x1 * a["cos"] - x2 * a["sin"], x2 * a["cos"] + x1 * a["sin"]], -1)

    h = rms(a["x"], a["attn_norm"])
    q = rope((h @ a["wq"]).reshape(tokens, heads, head_dim).transpose(1, 0, 2))
    k = rope((h @ a["wk"]).reshape(tokens, kv_heads, head_dim).transpose(1, 0, 2))
    v = (h @ a["wv"]).reshape(tokens, kv_heads, head_dim).transpose(1, 0, 2)
    k, v = (np.repeat(t, heads // kv_heads, axis=0) for t in (k, v))
    s = q @ k.transpose(0, 2, 1) / np.sqrt(head_dim)
    s = np.where(np.tril(np.ones((tokens, tokens), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    attn = (p / p.sum(-1, keepdims=True)) @ v
    h2 = a["x"] + attn.transpose(1, 0, 2).reshape(tokens, -1) @ a["wo"]
    n2 = rms(h2, a["mlp_norm"])
    g = n2 @ a["w_gate"]
    return h2 + (g / (1 + np.exp(-g)) * (n2 @ a["w_up"])) @ a["w_down"]
