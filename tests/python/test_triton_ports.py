"""Triton kernels ported by renaming the import (``import metile as tl``, ``tl.jit``), run
against numpy: tutorial 02 (fused softmax with tl.max(x, axis=0)), tl.rand's Philox bits
(the corpus's tutorial-04 dropout among them), the 2-D pointer idiom, and the type promotion
table. Tutorials 01, 04 and 05 as written are in the Triton corpus (tests/python/triton_corpus/,
tests/python/test_triton_corpus_*.py)."""

import ml_dtypes
import numpy as np
import pytest

import metile as tl
from triton_corpus.load import load


@tl.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=col_offsets < n_cols)


@tl.jit
def softmax_positional_axis(output_ptr, input_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, 0)  # the trap of issue 9: this reduces, it is not maximum(x, 0)
    e = tl.exp(x)
    tl.store(output_ptr + row * n_cols + cols, e / tl.sum(e, 0), mask=cols < n_cols)


@pytest.mark.parametrize("kernel", ["keyword", "positional"])
def test_tutorial_02_fused_softmax(kernel, rng):
    rows, cols = 37, 781
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 3 - 2
    out = np.zeros_like(x)
    block = tl.next_power_of_2(cols)
    if kernel == "keyword":
        softmax_kernel[(rows,)](out, x, cols, cols, cols, BLOCK_SIZE=block)
    else:
        softmax_positional_axis[(rows,)](out, x, cols, BLOCK_SIZE=block)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


# ---- Philox: a numpy reference of Philox 4x32 and the meTile kernels using it ---------------
def philox_reference(seed, offsets, n_rounds=10):
    """Philox 4x32-n_rounds for counters (offset, 0, 0, 0) and key (seed lo, seed hi)."""
    m = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.uint32).astype(np.uint64)
    c1 = c2 = c3 = np.zeros_like(c0)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    for _ in range(n_rounds):
        prod_b = np.uint64(0xCD9E8D57) * c2
        prod_a = np.uint64(0xD2511F53) * c0
        c0, c2 = (prod_b >> np.uint64(32)) ^ c1 ^ k0, (prod_a >> np.uint64(32)) ^ c3 ^ k1
        c1, c3 = prod_b & m, prod_a & m
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m, (k1 + np.uint64(0xBB67AE85)) & m
    return [c.astype(np.uint32) for c in (c0, c1, c2, c3)]


def test_the_numpy_philox_matches_the_random123_known_answer():
    # Random123's kat_vectors: philox4x32_10 of counter 0 and key 0.
    assert [int(c[0]) for c in philox_reference(0, np.array([0]))] == [
        0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


@tl.jit
def random_bits(out0, out1, out2, out3, uniform, seed, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    r0, r1, r2, r3 = tl.randint4x(seed, offsets)
    tl.store(out0 + offsets, r0, mask=mask)
    tl.store(out1 + offsets, r1, mask=mask)
    tl.store(out2 + offsets, r2, mask=mask)
    tl.store(out3 + offsets, r3, mask=mask)
    tl.store(uniform + offsets, tl.rand(seed, offsets), mask=mask)


@pytest.mark.parametrize("seed", [0, 1234, 0x1_2345_6789, -7])
def test_philox_bit_exact_against_numpy(seed):
    n = 1000
    outs = [np.zeros(n, np.uint32) for _ in range(4)]
    uniform = np.zeros(n, np.float32)
    # A Python int argument is an i32 scalar: a seed past 32 bits goes in as a constexpr.
    if -2**31 <= seed < 2**31:
        random_bits[(tl.cdiv(n, 256),)](*outs, uniform, seed, n, BLOCK=256)
    else:
        seeded_bits[(tl.cdiv(n, 256),)](*outs, uniform, n, SEED=seed, BLOCK=256)
    expected = philox_reference(seed, np.arange(n))
    for got, want in zip(outs, expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(uniform, (expected[0] >> 8).astype(np.float32) / 2**24)
    assert uniform.min() >= 0 and uniform.max() < 1


@tl.jit
def seeded_bits(out0, out1, out2, out3, uniform, n, SEED: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    r0, r1, r2, r3 = tl.randint4x(SEED, offsets)
    tl.store(out0 + offsets, r0, mask=mask)
    tl.store(out1 + offsets, r1, mask=mask)
    tl.store(out2 + offsets, r2, mask=mask)
    tl.store(out3 + offsets, r3, mask=mask)
    tl.store(uniform + offsets, tl.rand(SEED, offsets), mask=mask)


def test_tutorial_04_seeded_dropout_draws_philox_bits(rng):
    # The corpus's tutorial-04 kernel (tests/python/test_triton_corpus_elementwise.py checks its
    # properties), here bit for bit against the numpy Philox.
    _seeded_dropout = load("dropout", "metile")[0]._seeded_dropout
    n, p, seed = 3000, 0.3, 42
    x = rng.standard_normal(n).astype(np.float32) + 5
    out = np.zeros_like(x)
    _seeded_dropout[(tl.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)
    uniform = (philox_reference(seed, np.arange(n))[0] >> 8).astype(np.float32) / 2**24
    keep = uniform > np.float32(p)
    np.testing.assert_allclose(out, np.where(keep, x / np.float32(1 - p), 0), rtol=1e-6)
    assert 0.6 < keep.mean() < 0.8


@tl.jit
def normal(out, seed, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, tl.randn(seed, offsets), mask=offsets < n)


def test_randn_is_box_muller_of_the_philox_outputs():
    n = 4096
    out = np.zeros(n, np.float32)
    normal[(tl.cdiv(n, 1024),)](out, 7, n, BLOCK=1024)
    c0, c1, _, _ = philox_reference(7, np.arange(n))
    u1 = 1 - (c0 >> 8).astype(np.float64) / 2**24
    u2 = (c1 >> 8).astype(np.float64) / 2**24
    np.testing.assert_allclose(out, np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2),
                               atol=2e-5)
    assert abs(out.mean()) < 0.05 and abs(out.std() - 1) < 0.05


@tl.jit
def copy_2d(src, dst, M, N, stride_src, stride_dst, BLOCK_M: tl.constexpr,
            BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(src + offs_m[:, None] * stride_src + offs_n[None, :], mask=mask)
    tl.store(dst + offs_m[:, None] * stride_dst + offs_n[None, :], tile * 2, mask=mask)


def test_2d_pointer_broadcast_idiom(rng):
    x = rng.standard_normal((45, 70)).astype(np.float32)
    out = np.zeros((45, 80), np.float32)
    copy_2d[(3, 3)](x, out, 45, 70, 70, 80, BLOCK_M=16, BLOCK_N=32)
    np.testing.assert_array_equal(out[:, :70], x * 2)
    np.testing.assert_array_equal(out[:, 70:], 0)


# ---- type promotion: one kernel per row of the table in docs/python.md ----------------------
@tl.jit
def promote(a_ptr, b_ptr, out_ptr, OP: tl.constexpr, SCALAR: tl.constexpr):
    offs = tl.arange(0, 32)
    a = tl.load(a_ptr + offs)
    b = SCALAR if SCALAR is not None else tl.load(b_ptr + offs)
    if OP == "add":
        c = a + b
    elif OP == "div":
        c = a / b
    else:
        c = a % b
    tl.static_assert(c.dtype == tl.dtypes.dtype_name(out_ptr.dtype), "promoted dtype")
    tl.store(out_ptr + offs, c)


BF16 = ml_dtypes.bfloat16
PROMOTION_TABLE = [  # (a, b or a Python number, op, result)
    (np.float32, np.float16, "add", np.float32),
    (np.float16, BF16, "add", np.float16),
    (BF16, BF16, "add", BF16),
    (BF16, np.int32, "add", np.float32),
    (np.float16, np.int32, "add", np.float16),
    (np.float16, np.float16, "div", np.float32),
    (np.int32, np.int32, "div", np.float32),
    (np.int32, np.uint32, "add", np.uint32),
    (np.int64, np.uint32, "add", np.int64),
    (np.int32, np.int64, "add", np.int64),
    (np.float16, 2.5, "add", np.float16),
    (np.int32, 3, "add", np.int32),
    (np.int32, 0.5, "add", np.float32),
    (np.uint32, 3, "rem", np.uint32),
    (BF16, 2, "div", np.float32),
]


@pytest.mark.parametrize("a_type, b_type, op, result", PROMOTION_TABLE)
def test_type_promotion(a_type, b_type, op, result, rng):
    a = (rng.random(32) * 10 + 1).astype(a_type)
    scalar = b_type if isinstance(b_type, (int, float)) else None
    b = np.zeros(1, np.float32) if scalar is not None else (rng.random(32) * 5 + 1).astype(b_type)
    out = np.zeros(32, result)
    promote[(1,)](a, b, out, OP=op, SCALAR=scalar)
    compute = np.dtype(result) if np.dtype(result) != np.dtype(BF16) else np.float32
    left = a.astype(compute)
    right = np.asarray(scalar if scalar is not None else b).astype(compute)
    expected = {"add": lambda: left + right, "div": lambda: left / right,
                "rem": lambda: np.fmod(left, right)}[op]()
    tolerance = 1e-6 if np.dtype(result) in (np.float32, np.int32) else 1e-2
    np.testing.assert_allclose(out.astype(np.float64), expected.astype(result).astype(np.float64),
                               rtol=tolerance)


@tl.jit
def accumulate_mixed(x_ptr, w_ptr, out_ptr, n):
    offs = tl.arange(0, 64)
    acc = tl.zeros([64], dtype=tl.float32)
    for k in range(0, n):
        acc += tl.load(x_ptr + k * 64 + offs) * tl.load(w_ptr + k * 64 + offs)
    tl.store(out_ptr + offs, acc / n)  # f32 rounded to the f16 buffer


def test_f32_accumulator_of_f16_products(rng):
    x = rng.standard_normal((5, 64)).astype(np.float32)
    w = rng.standard_normal((5, 64)).astype(np.float16)
    out = np.zeros(64, np.float16)
    accumulate_mixed[(1,)](x, w, out, 5)
    ref = (x * w.astype(np.float32)).sum(0) / 5
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=2e-3, atol=2e-3)



@tl.jit
def persistent_row_sums(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    for r in range(tl.program_id(0), M, tl.num_programs(0)):  # a grid-stride device loop
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for k in range(tl.cdiv(N, BLOCK)):  # nested, over a traced cdiv
            offs = k * BLOCK + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + r * N + offs, mask=offs < N, other=0)
        tl.store(out_ptr + r, tl.sum(acc, axis=0))


def test_nested_range_loops_over_traced_bounds(rng):
    x = rng.standard_normal((13, 300)).astype(np.float32)
    out = np.zeros(13, np.float32)
    persistent_row_sums[(4,)](x, out, 13, 300, BLOCK=128)
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5, atol=1e-5)


@tl.jit
def f16_sum(x_ptr, out_ptr):
    total = tl.sum(tl.load(x_ptr + tl.arange(0, 256)), axis=0)
    tl.static_assert(total.dtype == tl.float32, "tl.sum of f16 is f32, as in Triton")
    tl.store(out_ptr, total)


def test_sum_of_f16_adds_in_f32(rng):
    x = (rng.random(256) * 100 + 250).astype(np.float16)  # the sum is past f16's 65504
    out = np.zeros(1, np.float32)
    f16_sum[(1,)](x, out)
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-6)
