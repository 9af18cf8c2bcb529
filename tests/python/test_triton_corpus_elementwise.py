"""The Triton corpus's elementwise kernels (tests/python/triton_corpus/): vector add, dropout,
SwiGLU, GeGLU, rotary embeddings, embedding lookup and its atomic backward, fused bias and
activation, transposes, the paged KV-cache write, selects and integer arithmetic, and float
casts with fast math, in the idioms of the Triton tutorials, Liger-Kernel, unsloth, vLLM and
FlagGems. Each runs with only the import renamed (`import metile as triton`,
`import metile as tl`) on the default device and is checked against numpy, ragged shapes
included."""

import math

import ml_dtypes
import numpy as np
import pytest

import metile
from triton_corpus.load import load, on_device, to_numpy

F16, BF16 = np.float16, ml_dtypes.bfloat16
DTYPE_IDS = {np.float32: "f32", F16: "f16", BF16: "bf16"}
erf = np.vectorize(math.erf)


def verbatim(name):
    module, edits = load(name, "metile")
    assert edits == []  # the Triton text, only the import renamed
    return module


def strides(x):
    return [s // x.itemsize for s in x.strides]


def f64(x):
    return np.asarray(x).astype(np.float64)


def tolerance(dtype):
    return {np.float32: 1e-5, F16: 2e-3, BF16: 1.6e-2}[dtype]


def close(got, want, dtype, scale=1.0):
    tol = tolerance(dtype) * scale
    np.testing.assert_allclose(f64(to_numpy(got)), f64(want), rtol=tol, atol=tol)


# --- tutorial 01: vector add -------------------------------------------------------------

@pytest.mark.parametrize("dtype,n,block", [(np.float32, 1000, 256), (F16, 4099, 1024),
                                           (BF16, 97, 64)], ids=["f32", "f16", "bf16"])
def test_vector_add(dtype, n, block, rng):
    add_kernel = verbatim("vector_add").add_kernel
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    x_d, y_d, out_d = on_device(x, y, np.full(n, np.nan, dtype))
    grid = lambda meta: (metile.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x_d, y_d, out_d, n, BLOCK_SIZE=block)
    want = (x.astype(np.float32) + y.astype(np.float32)).astype(dtype)  # one rounding
    np.testing.assert_array_equal(to_numpy(out_d).astype(np.float32), want.astype(np.float32))


# --- tutorial 04: seeded dropout ---------------------------------------------------------

def test_dropout_with_a_loaded_mask(rng):
    # Tutorial 04's first kernel: tl.where with the loaded i32 keep-mask as its condition.
    dropout = verbatim("dropout")._dropout
    n, p = 1000, 0.5
    x = rng.standard_normal(n).astype(np.float32)
    keep = (rng.uniform(size=n) > p).astype(np.int32)
    x_d, keep_d, out_d = on_device(x, keep, np.full(n, np.nan, np.float32))
    dropout[(metile.cdiv(n, 256),)](x_d, keep_d, out_d, n, p, BLOCK_SIZE=256)
    np.testing.assert_allclose(to_numpy(out_d), np.where(keep != 0, x / (1 - p), 0), rtol=1e-6)


@pytest.mark.parametrize("p", [0.25, 0.5])
def test_seeded_dropout(p, rng):
    seeded_dropout = verbatim("dropout")._seeded_dropout
    n, block = 10_000, 1024  # ragged: 9 full blocks and a partial one
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)  # never 0: a 0 out means dropped

    def dropout(seed):
        x_d, out_d = on_device(x, np.full(n, np.nan, np.float32))
        seeded_dropout[(metile.cdiv(n, block),)](x_d, out_d, n, p, seed, BLOCK_SIZE=block)
        return to_numpy(out_d)

    out = dropout(123)
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / (1 - p), rtol=1e-6)
    assert not np.isnan(out).any()
    assert abs(kept.mean() - (1 - p)) < 0.03  # about 6 standard deviations
    # each block draws its own bits: the mask does not repeat from block to block
    assert (kept[:block] != kept[block:2 * block]).mean() > 0.25
    np.testing.assert_array_equal(dropout(123), out)  # the seed reproduces the mask
    other = dropout(512) != 0
    assert abs(other.mean() - (1 - p)) < 0.03
    assert (other != kept).mean() > 0.25  # another seed, another mask (2p(1-p) differ)


# --- Liger-Kernel: SwiGLU ----------------------------------------------------------------

def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("dtype,rows,cols", [(np.float32, 5, 100), (BF16, 3, 300),
                                             (F16, 4, 64)], ids=["f32", "bf16", "f16"])
def test_swiglu_forward_and_backward(dtype, rows, cols, rng):
    module = verbatim("swiglu")
    block, num_warps = module.calculate_settings(cols)
    a = rng.standard_normal((rows, cols)).astype(dtype)
    b = rng.standard_normal((rows, cols)).astype(dtype)
    dc = rng.standard_normal((rows, cols)).astype(dtype)
    a_d, b_d, c_d = on_device(a, b, np.full((rows, cols), np.nan, dtype))
    module._swiglu_forward_kernel[(rows,)](a_d, b_d, c_d, strides(a)[0], n_cols=cols,
                                           BLOCK_SIZE=block, num_warps=num_warps)
    sig = sigmoid(f64(a))
    silu = f64(a) * sig
    close(c_d, silu * f64(b), dtype)

    dc_d, a_d, b_d = on_device(dc, a.copy(), b.copy())  # written in place
    module._swiglu_backward_kernel[(rows,)](dc_d, a_d, b_d, strides(a)[0], n_cols=cols,
                                            BLOCK_SIZE=block, num_warps=num_warps)
    close(a_d, f64(dc) * (silu * (1 - sig) + sig) * f64(b), dtype)  # da, over a
    close(b_d, f64(dc) * silu, dtype)  # db, over b


# --- unsloth / Liger: GeGLU --------------------------------------------------------------

def gelu_exact(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


@pytest.mark.parametrize("dtype", [np.float32, F16, BF16], ids=["f32", "f16", "bf16"])
def test_geglu_flat_forward(dtype, rng):
    # unsloth's kernels: erf and tanh forms, the gelu rounded to g's dtype before the product
    module = verbatim("geglu")
    n, block = 1000, 256
    e = (2 * rng.standard_normal(n)).astype(dtype)
    g = rng.standard_normal(n).astype(dtype)
    for kernel, gelu in ((module._exact_forward_kernel, gelu_exact),
                         (module._approx_forward_kernel, gelu_tanh)):
        e_d, g_d, h_d = on_device(e, g, np.full(n, np.nan, dtype))
        kernel[(metile.cdiv(n, block),)](e_d, g_d, h_d, n, BLOCK_SIZE=block)
        f = gelu(f64(e)).astype(dtype)
        close(h_d, f64(f) * f64(g), dtype, scale=2)


@pytest.mark.parametrize("dtype,rows,cols", [(np.float32, 4, 100), (BF16, 3, 200)],
                         ids=["f32", "bf16"])
def test_geglu_row_forward(dtype, rows, cols, rng):
    # Liger's row kernel (libdevice tanh) and the sigmoid form of the same approximation
    module = verbatim("geglu")
    block = metile.next_power_of_2(cols)
    a = (2 * rng.standard_normal((rows, cols))).astype(dtype)
    b = rng.standard_normal((rows, cols)).astype(dtype)
    want = gelu_tanh(f64(a)) * f64(b)
    for kernel in (module._geglu_tanh_forward_kernel, module._geglu_sigmoid_forward_kernel):
        a_d, b_d, c_d = on_device(a, b, np.full((rows, cols), np.nan, dtype))
        kernel[(rows,)](a_d, b_d, c_d, strides(a)[0], n_cols=cols, BLOCK_SIZE=block)
        close(c_d, want, dtype, scale=2)


# --- Liger / unsloth: rotary position embedding ------------------------------------------

def rope_reference(x, cos, sin, backward=False):
    half = x.shape[-1] // 2
    x1, x2 = f64(x)[..., :half], f64(x)[..., half:]
    c = f64(cos)[None, :, None, :half]
    s = f64(sin)[None, :, None, :half] * (-1 if backward else 1)
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


@pytest.mark.parametrize("dtype,shape,group", [
    (np.float32, (2, 7, 5, 3, 48), 4),  # ragged: 5 and 3 heads in groups of 4, halves of 24
    (BF16, (1, 9, 4, 2, 64), 2),         # complete groups and halves
], ids=["f32_ragged", "bf16"])
def test_rope_unsloth_in_place(dtype, shape, group, rng):
    # unsloth's kernel, once for q and once for k, each viewed as (bsz * seq, heads * hd)
    rope = verbatim("rope")._rope_embedding
    bsz, seq, n_qh, n_kh, hd = shape
    q = rng.standard_normal((bsz, seq, n_qh, hd)).astype(dtype)
    k = rng.standard_normal((bsz, seq, n_kh, hd)).astype(dtype)
    inv_freq = 1.0 / 10000 ** (np.arange(0, hd, 2) / hd)
    freqs = np.outer(np.arange(seq), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)
    for backward in (False, True):
        for x in (q, k):
            heads = x.shape[2]
            x_d, cos_d, sin_d = on_device(x.copy(), cos, sin)  # rotated in place
            rope[(bsz * seq, metile.cdiv(heads, group))](
                x_d, strides(x)[1], cos_d, strides(cos)[0], sin_d, strides(sin)[0], seq,
                head_dim=hd, n_heads=heads, BACKWARD_PASS=backward,
                BLOCK_SIZE=metile.next_power_of_2(hd // 2), ROPE_GROUP_SIZE=group)
            close(x_d, rope_reference(x, cos, sin, backward), dtype)


@pytest.mark.parametrize("dtype,shape", [(np.float32, (2, 7, 5, 3, 48)), (BF16, (1, 9, 4, 2, 64))],
                         ids=["f32_ragged", "bf16"])
def test_rope_liger_in_place(dtype, shape, rng):
    # Liger's kernel, whose parameters are named `cos` and `sin` (renamed in the emitted source
    # only): q and k of one position in one program, heads padded to powers of two.
    rope = verbatim("rope")._triton_rope
    bsz, seq, n_qh, n_kh, hd = shape
    q = rng.standard_normal((bsz, seq, n_qh, hd)).astype(dtype)
    k = rng.standard_normal((bsz, seq, n_kh, hd)).astype(dtype)
    inv_freq = 1.0 / 10000 ** (np.arange(0, hd, 2) / hd)
    emb = np.concatenate([np.outer(np.arange(seq), inv_freq)] * 2, axis=-1)
    cos, sin = np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)
    for backward in (False, True):
        q_d, k_d, cos_d, sin_d = on_device(q.copy(), k.copy(), cos, sin)
        rope[(bsz * seq,)](q_d, n_qh * hd, k_d, n_kh * hd, cos_d, strides(cos)[0], sin_d,
                           strides(sin)[0], seq, n_qh=n_qh, n_kh=n_kh, hd=hd,
                           pad_n_qh=metile.next_power_of_2(n_qh),
                           pad_n_kh=metile.next_power_of_2(n_kh),
                           pad_hd=metile.next_power_of_2(hd), BACKWARD_PASS=backward)
        close(q_d, rope_reference(q, cos, sin, backward), dtype)
        close(k_d, rope_reference(k, cos, sin, backward), dtype)


# --- Liger: embedding forward and atomic backward ----------------------------------------

@pytest.mark.parametrize("id_dtype,dtype", [(np.int32, np.float32), (np.int64, BF16)],
                         ids=["i32_f32", "i64_bf16"])
def test_embedding_forward_and_backward(id_dtype, dtype, rng):
    module = verbatim("embedding")
    vocab, dim, n = 37, 50, 45  # ragged tokens (BLOCK_SIZE_M 16) and dim (BLOCK_SIZE_N 32)
    bm, bn = 16, 32
    weight = rng.standard_normal((vocab, dim)).astype(dtype)
    ids = rng.integers(0, vocab, n).astype(id_dtype)
    ids[:6] = [3, 3, 3, 36, 0, 3]  # repeated ids, and the first and last rows
    grid = (metile.cdiv(n, bm), metile.cdiv(dim, bn))

    weight_d, ids_d, out_d = on_device(weight, ids, np.full((n, dim), np.nan, dtype))
    module.embedding_forward_kernel[grid](weight_d, ids_d, out_d, n, dim, strides(weight)[0],
                                          dim, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn)
    np.testing.assert_array_equal(f64(to_numpy(out_d)), f64(weight[ids]))

    grad_out = rng.standard_normal((n, dim)).astype(dtype)
    grad_d, dw_d, ids_d = on_device(grad_out, np.zeros((vocab, dim), np.float32), ids)
    module.embedding_backward_kernel[grid](grad_d, dw_d, ids_d, n, dim, dim, dim,
                                           BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn)
    want = np.zeros((vocab, dim))
    np.add.at(want, ids, f64(grad_out))
    np.testing.assert_allclose(to_numpy(dw_d), want, rtol=1e-5, atol=1e-5)


# --- tutorial 03's fused activation: bias + activation -----------------------------------

@pytest.mark.parametrize("activation,dtype,layout", [
    ("leaky_relu", np.float32, "contiguous"),
    ("gelu", BF16, "transposed"),  # x given as a column-major view of its storage
    ("relu", F16, "padded_rows"),  # rows further apart than N
], ids=["leaky_relu_f32", "gelu_bf16_transposed", "relu_f16_padded"])
def test_bias_activation(activation, dtype, layout, rng):
    kernel = verbatim("leaky_relu_bias").bias_act_kernel
    m, n, bm, bn = 37, 45, 16, 32
    x = rng.standard_normal((m, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    if layout == "transposed":
        storage = np.ascontiguousarray(x.T)  # (n, m): x[i, j] at j * m + i
        x_strides = (1, m)
    elif layout == "padded_rows":
        storage = np.zeros((m, n + 7), dtype)
        storage[:, :n] = x
        x_strides = (n + 7, 1)
    else:
        storage, x_strides = x, (n, 1)
    x_d, bias_d, y_d = on_device(storage, bias, np.full((m, n), np.nan, dtype))
    kernel[(metile.cdiv(m, bm), metile.cdiv(n, bn))](x_d, bias_d, y_d, m, n, *x_strides, n, 1,
                                                     BLOCK_M=bm, BLOCK_N=bn,
                                                     ACTIVATION=activation)
    z = f64(x) + f64(bias)[None, :]
    want = {"leaky_relu": np.where(z >= 0, z, 0.01 * z), "gelu": gelu_exact(z),
            "relu": np.maximum(z, 0)}[activation]
    close(y_d, want, dtype)


# --- tiled transpose ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["transpose_kernel", "transpose_strided_kernel"])
@pytest.mark.parametrize("dtype", [np.float32, F16], ids=["f32", "f16"])
def test_transpose(name, dtype, rng):
    kernel = getattr(verbatim("transpose"), name)
    m, n, bm, bn = 37, 70, 16, 32  # ragged both ways, non-square tiles
    x = rng.standard_normal((m, n)).astype(dtype)
    y = np.full((n, m), np.nan, dtype)
    x_d, y_d = on_device(x, y)
    kernel[(metile.cdiv(m, bm), metile.cdiv(n, bn))](x_d, y_d, m, n, *strides(x), *strides(y),
                                                     BLOCK_M=bm, BLOCK_N=bn)
    np.testing.assert_array_equal(to_numpy(y_d), x.T)


# --- vLLM: reshape_and_cache into a paged KV cache ---------------------------------------

@pytest.mark.parametrize("dtype", [F16, BF16], ids=["f16", "bf16"])
@pytest.mark.parametrize("form", ["masked", "flash"])
def test_reshape_and_cache(dtype, form, rng):
    # "flash": vLLM's form, whose padding tokens return early (`if slot_idx < 0: return`).
    module = verbatim("kv_cache_copy")
    kernel = (module.reshape_and_cache_kernel if form == "masked"
              else module.reshape_and_cache_kernel_flash)
    num_tokens, heads, head_size, block_size, num_blocks, tile = 11, 3, 24, 4, 5, 32
    key = rng.standard_normal((num_tokens, heads, head_size)).astype(dtype)
    value = rng.standard_normal((num_tokens, heads, head_size)).astype(dtype)
    slots = rng.permutation(num_blocks * block_size)[:num_tokens].astype(np.int64)
    slots[[2, 7]] = -1  # padding tokens
    shape = (num_blocks, block_size, heads, head_size)
    key_cache = np.full(shape, -7, dtype)
    value_cache = np.full(shape, -7, dtype)
    key_d, value_d, kc_d, vc_d, slots_d = on_device(key, value, key_cache, value_cache, slots)
    grid = (num_tokens, metile.cdiv(heads * head_size, tile))  # 72 columns, tiles of 32
    kernel[grid](key_d, value_d, kc_d, vc_d, slots_d, strides(key)[0], strides(value)[0],
                 strides(key_cache)[0], strides(key_cache)[1], num_heads=heads,
                 head_size=head_size, block_size=block_size, TILE_SIZE=tile)
    for src, cache in ((key, key_cache), (value, value_cache)):
        want = cache.reshape(-1, heads, head_size).copy()
        for t, s in enumerate(slots):
            if s >= 0:
                want[s] = src[t]
        got = to_numpy(kc_d if src is key else vc_d)
        np.testing.assert_array_equal(f64(got), f64(want.reshape(shape)))


# --- selects, bounds, fma and C integer division -----------------------------------------

@pytest.mark.parametrize("n", [1000, 512], ids=["ragged", "even"])
def test_where_ops(n, rng):
    kernel = verbatim("where_ops").where_ops_kernel
    x, y, z = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    fill = (rng.random(n) < 0.3).astype(np.int32)
    i = rng.integers(-50, 50, n).astype(np.int32)
    j = rng.integers(1, 8, n).astype(np.int32) * rng.choice([-1, 1], n).astype(np.int32)
    i[:4], j[:4] = [-7, 7, -7, 7], [2, 2, -2, -2]
    outs = [np.full(n, np.nan, np.float32) for _ in range(4)]
    outs += [np.zeros(n, np.int32) for _ in range(2)]
    args = on_device(x, y, z, fill, i, j, *outs)
    kernel[lambda META: (metile.cdiv(n, META["BLOCK_SIZE"]),)](*args, n, -0.5, 0.75, -1.0e4)
    filled, select, clamped, fused, quot, rem = (to_numpy(a) for a in args[6:])
    np.testing.assert_array_equal(filled, np.where(fill != 0, -1.0e4, x))
    np.testing.assert_array_equal(select, np.where(x > y, np.maximum(x, z), np.minimum(y, z)))
    np.testing.assert_array_equal(clamped, np.clip(x, -0.5, 0.75))
    np.testing.assert_allclose(fused, f64(np.abs(x)) * f64(y) + f64(z), rtol=1e-5, atol=1e-6)
    want_quot = np.trunc(f64(i) / f64(j)).astype(np.int32)  # C: toward zero
    np.testing.assert_array_equal(quot, want_quot)
    np.testing.assert_array_equal(rem, i - want_quot * j)  # the dividend's sign
    assert list(quot[:4]) == [-3, 3, 3, -3] and list(rem[:4]) == [-1, 1, -1, 1]


# --- casts and fast math -----------------------------------------------------------------

def test_cast_math(rng):
    kernel = verbatim("cast_fp").cast_math_kernel
    n, block = 1000, 256
    x = (3 * rng.standard_normal(n)).astype(np.float32)
    x[:4] = [1.0 + 2.0 ** -9, 65504.0, -0.0, 3.0e-6]  # a bf16 tie, f16's largest, -0, tiny
    outs = [np.full(n, np.nan, BF16), np.full(n, np.nan, F16)]
    outs += [np.full(n, np.nan, np.float32) for _ in range(5)]
    args = on_device(x, *outs)
    kernel[(metile.cdiv(n, block),)](*args, n, BLOCK_SIZE=block)
    x_bf16, x_f16, roundtrip, rsqrt, exp2, log2, fast_exp = (to_numpy(a) for a in args[1:])
    np.testing.assert_array_equal(x_bf16.view(np.uint16), x.astype(BF16).view(np.uint16))
    np.testing.assert_array_equal(x_f16.view(np.uint16), x.astype(F16).view(np.uint16))
    np.testing.assert_array_equal(
        roundtrip, (x.astype(BF16).astype(np.float32) - x) + (x.astype(F16).astype(np.float32) - x))
    ax = f64(np.abs(x) + np.float32(1e-3))
    np.testing.assert_allclose(rsqrt, 1 / np.sqrt(ax), rtol=1e-5)
    np.testing.assert_allclose(log2, np.log2(ax), rtol=1e-5, atol=1e-6)
    small = np.abs(x) < 80  # exp overflows f32 past about 88
    np.testing.assert_allclose(exp2[small], np.exp(f64(x[small])), rtol=1e-5)
    np.testing.assert_allclose(fast_exp[small], np.exp(f64(x[small])), rtol=1e-5)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["f16", "bf16"])
def test_rms_scale(dtype, rng):
    kernel = verbatim("cast_fp").rms_scale_kernel
    rows, cols = 6, 100
    x = rng.standard_normal((rows, cols)).astype(dtype)
    x_d, y_d = on_device(x, np.full((rows, cols), np.nan, dtype))
    kernel[(rows,)](x_d, y_d, cols, 1e-6, strides(x)[0],
                    BLOCK_SIZE=metile.next_power_of_2(cols))
    want = f64(x) / np.sqrt((f64(x) ** 2).mean(axis=1, keepdims=True) + 1e-6)
    close(y_d, want, dtype)


# --- vLLM / FlagGems: per-token fp8 quantisation and dequantisation --------------------------

E4M3, E5M2 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2


def fp8_bytes(x, fp8, largest):
    """x (f32) rounded to the fp8 format, nearest even, as bytes (x is within the format)."""
    assert np.all(np.abs(x) <= largest)
    return x.astype(fp8).view(np.uint8)


@pytest.mark.parametrize("fp8,largest", [(E4M3, 448.0), (E5M2, 57344.0)], ids=["e4m3", "e5m2"])
@pytest.mark.parametrize("dtype,rows,cols", [(np.float32, 1, 1), (BF16, 5, 100),
                                             (F16, 7, 257)], ids=["f32", "bf16", "f16"])
def test_per_token_fp8_quant_and_dequant(fp8, largest, dtype, rows, cols, rng):
    module = verbatim("fp8_quant")
    x = (rng.standard_normal((rows, cols)) * 10.0 ** rng.integers(-3, 3, (rows, 1))).astype(dtype)
    if rows > 1:
        x[1] = 0  # an all-zero row takes eps as its absolute maximum
    block = metile.next_power_of_2(cols)
    eps = 1e-10
    x_d, q_d, s_d = on_device(x, np.zeros((rows, cols), fp8), np.zeros(rows, np.float32))
    module.per_token_quant_fp8_kernel[(rows,)](x_d, q_d, s_d, strides(x)[0], cols, cols, eps,
                                               -largest, largest, BLOCK=block)
    q, scales = to_numpy(q_d), to_numpy(s_d)
    wide = x.astype(np.float32)
    want_scales = np.maximum(np.abs(wide).max(axis=1), np.float32(eps)) / np.float32(largest)
    np.testing.assert_array_equal(scales, want_scales.astype(np.float32))
    scaled = np.clip(wide / want_scales[:, None], -largest, largest)
    want_q = fp8_bytes(scaled, fp8, largest)
    if metile.device() == "host":  # the same IEEE f32 operations, so the same bytes
        np.testing.assert_array_equal(q.view(np.uint8), want_q)
    else:  # a division may differ in its last f32 bit, moving a tie by one fp8 step
        np.testing.assert_allclose(q.astype(np.float32), want_q.view(fp8).astype(np.float32),
                                   rtol=2.0 ** -2, atol=2.0 ** -9)

    out_d = on_device(np.full((rows, cols), np.nan, dtype))
    module.dequant_fp8_kernel[(rows,)](on_device(q), s_d, out_d, cols, strides(x)[0], cols,
                                       BLOCK=block)
    want = (q.astype(np.float32) * scales[:, None]).astype(dtype)
    np.testing.assert_array_equal(f64(to_numpy(out_d)), f64(want))
    # and the round trip is within half an fp8 step (relative) of x, or of the smallest one
    step = 2.0 ** -(3 if fp8 is E4M3 else 2)
    np.testing.assert_allclose(f64(to_numpy(out_d)), f64(x),
                               rtol=step / 2 + tolerance(dtype),
                               atol=f64(want_scales).max() * 2.0 ** -9)
