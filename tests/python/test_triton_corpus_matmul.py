"""The Triton corpus, matmul family and attention variants (tests/python/triton_corpus/): the
autotuned tutorial matmul with its fused activation, a mixture-of-experts grouped GEMM, the
persistent matmul of tutorial 09, a batched matmul, split-K with atomic adds, a matmul with a
fused bias and residual, decode attention over a paged KV cache with grouped-query heads,
varlen causal flash attention, and tutorial 08's grouped GEMM, whose problems' int64 addresses
are cast to pointers (`.to(tl.pointer_type(tl.float16))`). Each runs with only the import
renamed (`import metile as triton`, `import metile as tl`) on the default device, checked
against numpy in float64 with ragged shapes; small tiles, so that the host emulator's 32 KB of
threadgroup memory holds them."""

import ml_dtypes
import numpy as np
import pytest

import metile
from triton_corpus.load import load, on_device, to_numpy

F16_BF16 = pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])


def corpus(name):
    module, edits = load(name, "metile")
    assert edits == []  # runs as written
    return module


def strides(x):
    return [s // x.itemsize for s in x.strides]


def f64(x):
    return np.asarray(x).astype(np.float64)


def tolerance(dtype):
    """For an output rounded to `dtype` (values of a few units)."""
    return {np.dtype(np.float16): 1e-2, np.dtype(ml_dtypes.bfloat16): 6e-2,
            np.dtype(np.float32): 1e-4}[np.dtype(dtype)]


@pytest.mark.parametrize("shape,activation", [
    ((70, 45, 37), "leaky_relu"),  # ragged M, N and K
    ((33, 64, 48), ""),            # no epilogue; ragged M only
], ids=["ragged_leaky_relu", "no_activation"])
def test_autotuned_matmul_with_activation(shape, activation, rng):
    kernel = corpus("matmul_autotune").matmul_kernel
    m, n, k = shape
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    args = [*strides(a), *strides(b), *strides(c)]
    a_d, b_d, c_d = on_device(a, b, c)
    grid = lambda META: (metile.cdiv(m, META["BLOCK_SIZE_M"]) * metile.cdiv(n, META["BLOCK_SIZE_N"]),)
    kernel[grid](a_d, b_d, c_d, m, n, k, *args, ACTIVATION=activation)
    want = f64(a) @ f64(b)
    if activation == "leaky_relu":
        want = np.where(want >= 0, want, 0.01 * want)
    np.testing.assert_allclose(f64(to_numpy(c_d)), want, rtol=1e-2, atol=1e-2)


@F16_BF16
@pytest.mark.parametrize("rows", [[37, 0, 16, 5, 50], [64]], ids=["ragged_experts", "one_expert"])
def test_grouped_gemm_packed(dtype, rows, rng):
    kernel = corpus("grouped_gemm_packed").grouped_gemm_packed_kernel
    k, n = 40, 45
    offsets = np.concatenate([[0], np.cumsum(rows)]).astype(np.int32)
    experts = len(rows)
    x = rng.standard_normal((offsets[-1], k)).astype(dtype)
    w = rng.standard_normal((experts, k, n)).astype(dtype)
    y = np.full((offsets[-1], n), np.nan, dtype)
    args = [*strides(x), *strides(w), *strides(y)]
    x_d, w_d, y_d, offsets_d = on_device(x, w, y, offsets)
    num_sms = 3
    kernel[(num_sms,)](x_d, w_d, y_d, offsets_d, n, k, *args, experts, NUM_SMS=num_sms,
                       BLOCK_SIZE_M=16, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16)
    want = np.concatenate([f64(x[offsets[e]:offsets[e + 1]]) @ f64(w[e])
                           for e in range(experts)])
    np.testing.assert_allclose(f64(to_numpy(y_d)), want, rtol=tolerance(dtype),
                               atol=tolerance(dtype))


@F16_BF16
@pytest.mark.parametrize("shape,num_sms", [((70, 45, 37), 4), ((16, 96, 64), 2)],
                         ids=["ragged", "one_row_of_tiles"])
def test_persistent_matmul(dtype, shape, num_sms, rng):
    kernel = corpus("persistent_matmul").matmul_kernel_persistent
    m, n, k = shape
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = np.full((m, n), np.nan, dtype)
    args = [*strides(a), *strides(b), *strides(c)]
    a_d, b_d, c_d = on_device(a, b, c)
    grid = lambda META: (min(num_sms, metile.cdiv(m, META["BLOCK_SIZE_M"])
                             * metile.cdiv(n, META["BLOCK_SIZE_N"])),)
    kernel[grid](a_d, b_d, c_d, m, n, k, *args, BLOCK_SIZE_M=16, BLOCK_SIZE_N=32,
                 BLOCK_SIZE_K=16, GROUP_SIZE_M=2, NUM_SMS=num_sms)
    np.testing.assert_allclose(f64(to_numpy(c_d)), f64(a) @ f64(b), rtol=tolerance(dtype),
                               atol=tolerance(dtype))


@pytest.mark.parametrize("fp8", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2],
                         ids=["e4m3", "e5m2"])
def test_persistent_matmul_in_fp8(fp8, rng):
    # The tutorial's fp8 case: fp8 operands and an fp8 output (its float8e4nv branch; here
    # `accumulator.to(c_ptr.dtype.element_ty)`), the dot accumulating in f32.
    kernel = corpus("persistent_matmul").matmul_kernel_persistent
    m, n, k = 40, 50, 37
    a = rng.standard_normal((m, k)).astype(fp8)
    b = rng.standard_normal((k, n)).astype(fp8)
    c = np.zeros((m, n), fp8)
    a_d, b_d, c_d = on_device(a, b, c)
    grid = lambda META: (min(4, metile.cdiv(m, META["BLOCK_SIZE_M"])
                             * metile.cdiv(n, META["BLOCK_SIZE_N"])),)
    kernel[grid](a_d, b_d, c_d, m, n, k, *strides(a), *strides(b), *strides(c), BLOCK_SIZE_M=16,
                 BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=2, NUM_SMS=4)
    want = (f64(a) @ f64(b)).astype(np.float32)
    got = to_numpy(c_d)
    # within one fp8 step of the exact product, the rounding of its f32 sum
    step = 2.0 ** -3 if fp8 is ml_dtypes.float8_e4m3fn else 2.0 ** -2
    np.testing.assert_allclose(f64(got), f64(want), rtol=step, atol=2.0 ** -6)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32],
                         ids=["f16", "bf16", "f32"])
def test_batched_matmul(dtype, rng):
    kernel = corpus("batched_matmul").bmm_kernel
    batch, m, n, k = 3, 40, 45, 37
    a = rng.standard_normal((batch, m, k)).astype(dtype)
    b = rng.standard_normal((batch, k, n)).astype(dtype)
    c = np.full((batch, m, n), np.nan, dtype)
    args = [*strides(a), *strides(b), *strides(c)]
    a_d, b_d, c_d = on_device(a, b, c)
    grid = lambda META: (metile.cdiv(m, META["BLOCK_M"]) * metile.cdiv(n, META["BLOCK_N"]), batch)
    kernel[grid](a_d, b_d, c_d, m, n, k, *args, BLOCK_M=16, BLOCK_N=32, BLOCK_K=16, GROUP_M=2)
    np.testing.assert_allclose(f64(to_numpy(c_d)), np.matmul(f64(a), f64(b)),
                               rtol=tolerance(dtype), atol=tolerance(dtype))


@pytest.mark.parametrize("dtype,split_k", [(np.float16, 3), (ml_dtypes.bfloat16, 2),
                                           (np.float16, 1)],
                         ids=["f16_split3", "bf16_split2", "f16_no_split"])
def test_split_k_matmul(dtype, split_k, rng):
    kernel = corpus("split_k_matmul").matmul_split_k_kernel
    m, n, k = 40, 45, 100  # K not a multiple of BLOCK_K * SPLIT_K
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = np.zeros((m, n), np.float32)  # the atomic adds' target, zeroed
    args = [*strides(a), *strides(b), *strides(c)]
    a_d, b_d, c_d = on_device(a, b, c)
    grid = lambda META: (metile.cdiv(m, META["BLOCK_M"]) * metile.cdiv(n, META["BLOCK_N"]),
                         META["SPLIT_K"])
    kernel[grid](a_d, b_d, c_d, m, n, k, *args, BLOCK_M=16, BLOCK_N=32, BLOCK_K=16,
                 SPLIT_K=split_k, GROUP_M=4)
    # f32 partial sums of exactly representable products: only the order of additions differs
    np.testing.assert_allclose(f64(to_numpy(c_d)), f64(a) @ f64(b), rtol=1e-4, atol=1e-4)


@F16_BF16
@pytest.mark.parametrize("shape", [(40, 45, 37), (1, 64, 48)], ids=["ragged", "one_row"])
def test_matmul_bias_residual(dtype, shape, rng):
    kernel = corpus("matmul_bias_residual").linear_bias_residual_kernel
    m, n, k = shape
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((k, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    residual = rng.standard_normal((m, n)).astype(dtype)
    y = np.full((m, n), np.nan, dtype)
    args = [*strides(x), *strides(w), *strides(residual), *strides(y)]
    x_d, w_d, bias_d, residual_d, y_d = on_device(x, w, bias, residual, y)
    grid = lambda META: (metile.cdiv(m, META["BLOCK_M"]) * metile.cdiv(n, META["BLOCK_N"]),)
    kernel[grid](x_d, w_d, bias_d, residual_d, y_d, m, n, k, *args, BLOCK_M=16, BLOCK_N=32,
                 BLOCK_K=16, GROUP_M=4)
    want = f64(x) @ f64(w) + f64(bias)[None, :] + f64(residual)
    np.testing.assert_allclose(f64(to_numpy(y_d)), want, rtol=tolerance(dtype),
                               atol=tolerance(dtype))


@F16_BF16
def test_decode_attention_gqa_over_paged_cache(dtype, rng):
    kernel = corpus("attention_decode")._decode_attention_kernel
    batch, heads, kv_heads, head_dim = 3, 4, 2, 40  # head_dim padded to BLOCK_DMODEL 64
    seq_lens = np.array([37, 1, 20], np.int32)      # ragged, one of a single token
    tokens, max_len = 80, 40
    # each request's tokens scattered over the cache
    order = rng.permutation(tokens).astype(np.int32)
    req_to_tokens = np.zeros((batch, max_len), np.int32)
    ends = np.cumsum(seq_lens)
    for b in range(batch):
        req_to_tokens[b, :seq_lens[b]] = order[ends[b] - seq_lens[b]:ends[b]]
    q = rng.standard_normal((batch, heads, head_dim)).astype(dtype)
    k_cache = rng.standard_normal((tokens, kv_heads, head_dim)).astype(dtype)
    v_cache = rng.standard_normal((tokens, kv_heads, head_dim)).astype(dtype)
    out = np.full((batch, heads, head_dim), np.nan, dtype)
    scale = head_dim ** -0.5
    args = [strides(req_to_tokens)[0], *strides(q)[:2], *strides(k_cache)[:2],
            *strides(v_cache)[:2], *strides(out)[:2]]
    q_d, k_d, v_d, out_d, r2t_d, lens_d = on_device(q, k_cache, v_cache, out, req_to_tokens,
                                                     seq_lens)
    group = heads // kv_heads
    kernel[(batch, heads)](q_d, k_d, v_d, out_d, r2t_d, lens_d, scale, *args,
                           kv_group_num=group, BLOCK_DMODEL=64, BLOCK_N=16, Lk=head_dim,
                           Lv=head_dim)
    want = np.zeros(out.shape)
    for b in range(batch):
        rows = req_to_tokens[b, :seq_lens[b]]
        for h in range(heads):
            keys, values = f64(k_cache[rows, h // group]), f64(v_cache[rows, h // group])
            s = keys @ f64(q[b, h]) * scale
            p = np.exp(s - s.max())
            want[b, h] = p @ values / p.sum()
    atol = 2e-3 if dtype == np.float16 else 1e-2
    np.testing.assert_allclose(f64(to_numpy(out_d)), want, rtol=atol, atol=atol)


@F16_BF16
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_varlen_flash_attention(dtype, causal, rng):
    kernel = corpus("attention_fwd_causal_varlen").attn_fwd_varlen
    heads, head_dim = 2, 32
    # ragged lengths; more keys than queries in two sequences (causal aligned bottom right)
    len_q, len_k = [37, 5, 64], [37, 20, 70]
    cu_q = np.concatenate([[0], np.cumsum(len_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(len_k)]).astype(np.int32)
    q = rng.standard_normal((cu_q[-1], heads, head_dim)).astype(dtype)
    k = rng.standard_normal((cu_k[-1], heads, head_dim)).astype(dtype)
    v = rng.standard_normal((cu_k[-1], heads, head_dim)).astype(dtype)
    out = np.full(q.shape, np.nan, dtype)
    args = [*strides(q), *strides(k), *strides(v), *strides(out)]
    q_d, k_d, v_d, out_d, cu_q_d, cu_k_d = on_device(q, k, v, out, cu_q, cu_k)
    block_m = 32
    kernel[(metile.cdiv(max(len_q), block_m), heads, len(len_q))](
        q_d, k_d, v_d, out_d, 0.3, cu_q_d, cu_k_d, *args, HEAD_DIM=head_dim, BLOCK_M=block_m,
        BLOCK_N=16, CAUSAL=causal)
    want = np.zeros(q.shape)
    for z in range(len(len_q)):
        qz, kz, vz = (f64(t[c[z]:c[z + 1]]) for t, c in ((q, cu_q), (k, cu_k), (v, cu_k)))
        s = np.einsum("mhd,nhd->hmn", qz, kz) * 0.3
        if causal:
            seen = np.arange(len_k[z])[None, :] <= np.arange(len_q[z])[:, None] + len_k[z] - len_q[z]
            s = np.where(seen, s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        want[cu_q[z]:cu_q[z + 1]] = np.einsum("hmn,nhd->mhd", p, vz)
    atol = 2e-3 if dtype == np.float16 else 2e-2
    np.testing.assert_allclose(f64(to_numpy(out_d)), want, rtol=atol, atol=atol)


@pytest.mark.parametrize("shape", [(37, 45, 70), (1, 64, 48)], ids=["ragged", "one_row"])
def test_int8_weight_matmul(shape, rng):
    # W8A16: int8 weights dequantised with their columns' scales inside the K loop.
    module = corpus("matmul_int8_weight")
    m, n, k = shape
    x = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    scale = rng.uniform(0.001, 0.02, n).astype(np.float16)
    y = np.full((m, n), np.nan, np.float16)
    x_d, w_d, s_d, y_d = on_device(x, w, scale, y)
    grid = (metile.cdiv(m, 16) * metile.cdiv(n, 32),)
    module.matmul_int8_weight_kernel[grid](x_d, w_d, s_d, y_d, m, n, k, *strides(x), *strides(w),
                                           *strides(y), BLOCK_M=16, BLOCK_N=32, BLOCK_K=16,
                                           GROUP_M=4)
    dequantised = (f64(w) * f64(scale)).astype(np.float16)
    np.testing.assert_allclose(f64(to_numpy(y_d)), f64(x) @ f64(dequantised), rtol=1e-2,
                               atol=2e-2)


def problems_on_device(arrays):
    """Device memory for each array and the int64 array of their addresses, as tutorial 08's
    host code makes them: torch CUDA tensors and their data_ptr() on the cuda device,
    metile.Buffers and theirs on the host."""
    if metile.device() == "cuda":
        tensors = on_device(*arrays)
        return tensors, on_device(np.array([t.data_ptr() for t in tensors], np.int64))
    buffers = [metile.Buffer(data=x) for x in arrays]
    return buffers, np.array([b.data_ptr() for b in buffers], np.int64)


def run_grouped_gemm(name, sizes, rng):
    kernel = corpus(name).grouped_matmul_kernel
    a = [rng.standard_normal((m, k)).astype(np.float16) for m, n, k in sizes]
    b = [rng.standard_normal((k, n)).astype(np.float16) for m, n, k in sizes]
    c = [np.full((m, n), np.nan, np.float16) for m, n, k in sizes]
    a_d, a_ptrs = problems_on_device(a)
    b_d, b_ptrs = problems_on_device(b)
    c_d, c_ptrs = problems_on_device(c)
    gemm_sizes = np.array(sizes, np.int32)
    lds = np.array([[k, n, n] for m, n, k in sizes], np.int32)
    grid = lambda META: (META["NUM_SM"],)
    kernel[grid](a_ptrs, b_ptrs, c_ptrs, *on_device(gemm_sizes, lds), len(sizes))
    for g in range(len(sizes)):
        out = c_d[g].numpy() if isinstance(c_d[g], metile.Buffer) else to_numpy(c_d[g])
        np.testing.assert_allclose(f64(out), f64(a[g]) @ f64(b[g]), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("sizes", [[(70, 45, 37), (16, 64, 20), (33, 1, 50)], [(5, 7, 3)]],
                         ids=["ragged_group", "one_small"])
def test_grouped_gemm_masked(sizes, rng):
    """grouped_gemm.py: tutorial 08 with masked tails, ragged problems."""
    run_grouped_gemm("grouped_gemm", sizes, rng)


def test_grouped_gemm_tutorial_verbatim(rng):
    """The tutorial's kernel as written (full tiles: sizes multiples of every config's blocks)."""
    run_grouped_gemm("grouped_gemm_tutorial", [(64, 32, 32), (32, 64, 16), (96, 32, 48)], rng)


@pytest.mark.skipif(metile.device() != "host", reason="the host emulator's bounds checks")
def test_grouped_gemm_wild_address_is_a_fault(rng):
    """An address that lies in no live buffer is reported, not read: the check of a pointer
    made from an integer is against every buffer."""
    kernel = corpus("grouped_gemm").grouped_matmul_kernel
    a = metile.Buffer(data=np.ones((16, 16), np.float16))
    b = metile.Buffer(data=np.ones((16, 16), np.float16))
    c = metile.Buffer(data=np.zeros((16, 16), np.float16))
    wild = np.array([a.data_ptr() + 16 * 16 * 2 + 4096], np.int64)  # past a's end
    sizes = np.array([[16, 16, 16]], np.int32)
    lds = np.array([[16, 16, 16]], np.int32)
    with pytest.raises(metile.KernelFaultError,
                       match=r"read at address 0x[0-9a-f]+, through a pointer made from an "
                             r"integer, lies in no live buffer"):
        kernel[lambda META: (META["NUM_SM"],)](
            wild, np.array([b.data_ptr()], np.int64), np.array([c.data_ptr()], np.int64),
            sizes, lds, 1)
