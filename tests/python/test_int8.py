"""8-bit integers (tl.int8, tl.uint8) end to end on the device, against numpy's int8/uint8
arithmetic: loads and stores, wrap-around, casts (float to 8 bits saturates, NaN gives 0),
masked loads with `other`, Triton's promotion and reduction dtypes, a per-row symmetric int8
quantiser and its dequantiser, a uint8 histogram, and the errors for what is not built."""

import os
import subprocess
import sys

import numpy as np
import pytest

import metile
import metile as tl
from metile import promotion


def _wrapping(op, a, b, dtype):
    """numpy's 8-bit result of op, computed wide and wrapped (numpy warns on overflow)."""
    return op(a.astype(np.int64), b.astype(np.int64)).astype(dtype)


# ---- dtypes, buffers and promotion --------------------------------------------------------

def test_dtype_objects_have_tritons_queries():
    assert tl.int8 == "i8" and tl.uint8 == "u8"
    assert tl.int8.primitive_bitwidth == 8 and tl.uint8.int_bitwidth == 8
    assert tl.int8.is_int() and tl.int8.is_int_signed() and not tl.int8.is_int_unsigned()
    assert tl.uint8.is_int_unsigned() and not tl.uint8.is_int_signed()
    assert tl.int8.is_int8() and tl.uint8.is_uint8() and not tl.int8.is_floating()
    assert metile.dtypes.dtype_name("int8") == "i8"
    assert metile.dtypes.dtype_name(np.uint8) == "u8"
    assert metile.dtypes.to_numpy("i8") == np.dtype(np.int8)


def test_buffers_hold_8_bit_arrays(rng):
    x = rng.integers(-128, 128, 37).astype(np.int8)
    assert metile.Buffer(data=x).dtype == "i8"
    np.testing.assert_array_equal(metile.Buffer(data=x).numpy(), x)
    zeros = metile.Buffer.zeros((3, 5), dtype="u8")
    assert zeros.dtype == "u8" and zeros.nbytes == 15
    np.testing.assert_array_equal(zeros.numpy(), np.zeros((3, 5), np.uint8))


@pytest.mark.parametrize("a,b,div_or_mod,expected", [
    ("i8", "i8", False, "i8"),
    ("u8", "u8", False, "u8"),
    ("i8", "u8", False, "u8"),    # same width, different signedness: the unsigned one
    ("i8", "i32", False, "i32"),
    ("u8", "i32", False, "i32"),
    ("i8", "u32", False, "u32"),
    ("i8", "i64", False, "i64"),
    ("i1", "i8", False, "i8"),
    ("i8", "f16", False, "f16"),
    ("u8", "bf16", False, "f32"),
    ("i8", "f16", True, "f32"),
    ("i8", "f32", False, "f32"),
])
def test_promotion_follows_tritons_integer_promote(a, b, div_or_mod, expected):
    assert promotion.computation_type(a, b, div_or_mod) == expected
    assert promotion.computation_type(b, a, div_or_mod) == expected


def test_division_of_mixed_signedness_is_an_error():
    with pytest.raises(promotion.PromotionError, match="differ in signedness"):
        promotion.computation_type("i8", "u8", div_or_mod=True)


def test_python_numbers_keep_the_8_bit_dtype():
    assert promotion.with_number("i8", 3) == "i8"
    assert promotion.with_number("u8", True) == "u8"
    assert promotion.with_number("i8", 0.5) == "f32"


@tl.jit
def _dtypes_of(x_ptr, y_ptr, out_ptr):
    x = tl.load(x_ptr)  # i8
    y = tl.load(y_ptr)  # u8
    tl.static_assert((x + x).dtype == tl.int8)
    tl.static_assert((x + y).dtype == tl.uint8)
    tl.static_assert((x + 1).dtype == tl.int8)
    tl.static_assert((x * 2.0).dtype == tl.float32)
    tl.static_assert((x + x.to(tl.int32)).dtype == tl.int32)
    tl.static_assert((x + x.to(tl.float16)).dtype == tl.float16)
    tl.static_assert((x / x).dtype == tl.float32)
    tl.static_assert((x < y).dtype == tl.int1)
    tl.store(out_ptr, x + y)


def test_traced_values_promote_as_triton():
    out = np.zeros(1, np.uint8)
    _dtypes_of[(1,)](np.array([-1], np.int8), np.array([3], np.uint8), out)
    assert out[0] == 2  # 255 + 3 wraps in u8


# ---- arithmetic ---------------------------------------------------------------------------

@tl.jit
def _arith(a_ptr, b_ptr, add_ptr, sub_ptr, mul_ptr, div_ptr, rem_ptr, neg_ptr, abs_ptr, n,
           BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.store(add_ptr + offs, a + b, mask=m)
    tl.store(sub_ptr + offs, a - b, mask=m)
    tl.store(mul_ptr + offs, a * b, mask=m)
    tl.store(div_ptr + offs, a // b, mask=m)
    tl.store(rem_ptr + offs, a % b, mask=m)
    tl.store(neg_ptr + offs, -a, mask=m)
    tl.store(abs_ptr + offs, tl.abs(a), mask=m)


@pytest.mark.parametrize("np_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("n", [1, 100, 1000])
def test_arithmetic_wraps_around_as_numpy(np_dtype, n, rng):
    info = np.iinfo(np_dtype)
    a = rng.integers(info.min, info.max + 1, n).astype(np_dtype)
    a[:2] = [info.min, info.max][: min(n, 2)]
    b = rng.integers(info.min, info.max + 1, n).astype(np_dtype)
    b[b == 0] = 3
    outs = [np.zeros(n, np_dtype) for _ in range(7)]
    _arith[(metile.cdiv(n, 128),)](a, b, *outs, n, BLOCK=128)
    wide_a, wide_b = a.astype(np.int64), b.astype(np.int64)
    quotient = np.trunc(wide_a / wide_b).astype(np.int64)  # tiles divide as C: toward zero
    expected = [wide_a + wide_b, wide_a - wide_b, wide_a * wide_b, quotient,
                wide_a - quotient * wide_b, -wide_a, np.abs(wide_a)]
    for name, got, want in zip(["add", "sub", "mul", "div", "rem", "neg", "abs"], outs, expected):
        np.testing.assert_array_equal(got, want.astype(np_dtype), err_msg=name)


@tl.jit
def _bits(a_ptr, b_ptr, and_ptr, or_ptr, xor_ptr, not_ptr, shl_ptr, shr_ptr, max_ptr, min_ptr,
          lt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m)
    amount = (b & 7).to(a.dtype)
    tl.store(and_ptr + offs, a & b, mask=m)
    tl.store(or_ptr + offs, a | b, mask=m)
    tl.store(xor_ptr + offs, a ^ b, mask=m)
    tl.store(not_ptr + offs, ~a, mask=m)
    tl.store(shl_ptr + offs, a << amount, mask=m)
    tl.store(shr_ptr + offs, a >> amount, mask=m)
    tl.store(max_ptr + offs, tl.maximum(a, b), mask=m)
    tl.store(min_ptr + offs, tl.minimum(a, b), mask=m)
    tl.store(lt_ptr + offs, (a < b).to(tl.int8), mask=m)


@pytest.mark.parametrize("np_dtype", [np.int8, np.uint8])
def test_bitwise_shifts_comparisons_min_max(np_dtype, rng):
    n = 200
    info = np.iinfo(np_dtype)
    a = rng.integers(info.min, info.max + 1, n).astype(np_dtype)
    b = rng.integers(info.min, info.max + 1, n).astype(np_dtype)
    outs = [np.zeros(n, np_dtype) for _ in range(8)] + [np.zeros(n, np.int8)]
    _bits[(1,)](a, b, *outs, n, BLOCK=256)
    amount = (b & 7).astype(np_dtype)
    # Shifts by less than the width: left wraps in 8 bits, right is arithmetic for int8.
    expected = [a & b, a | b, a ^ b, ~a, _wrapping(np.left_shift, a, amount, np_dtype),
                a >> amount, np.maximum(a, b), np.minimum(a, b), (a < b).astype(np.int8)]
    names = ["and", "or", "xor", "not", "shl", "shr", "max", "min", "lt"]
    for name, got, want in zip(names, outs, expected):
        np.testing.assert_array_equal(got, want, err_msg=name)


# ---- casts --------------------------------------------------------------------------------

@tl.jit
def _from_float(x_ptr, i8_ptr, u8_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(i8_ptr + offs, x.to(tl.int8), mask=m)
    tl.store(u8_ptr + offs, x.to(tl.uint8), mask=m)


def _saturate(x, np_dtype):
    info = np.iinfo(np_dtype)
    return np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), info.min, info.max))


@pytest.mark.parametrize("np_float", [np.float32, np.float16])
def test_floats_truncate_toward_zero_and_saturate(np_float, rng):
    special = [0.0, -0.0, 0.5, -0.5, 1.99, -1.99, 126.9, 127.0, 127.5, 128.0, -128.0, -128.9,
               -129.0, 254.7, 255.0, 255.9, 256.0, 300.0, -300.0, 1e4, -1e4, np.inf, -np.inf,
               np.nan]
    x = np.concatenate([np.array(special), rng.uniform(-400, 400, 76)]).astype(np_float)
    n = len(x)
    i8, u8 = np.zeros(n, np.int8), np.zeros(n, np.uint8)
    _from_float[(1,)](x, i8, u8, n, BLOCK=128)
    wide = x.astype(np.float64)
    np.testing.assert_array_equal(i8, _saturate(wide, np.int8).astype(np.int8))
    np.testing.assert_array_equal(u8, _saturate(wide, np.uint8).astype(np.uint8))


def test_the_saturating_conversion_is_in_the_emitted_source():
    n = 8
    x = np.zeros(n, np.float32)
    source = _from_float[(1,)].prepare(x, np.zeros(n, np.int8), np.zeros(n, np.uint8), n,
                                       BLOCK=8).source
    assert "metile_saturate_i8" in source and "metile_saturate_u8" in source
    # The buffers' element types: MSL's char/uchar on the host target, CUDA's signed/unsigned
    # char on cuda.
    if metile.device() == "cuda":
        assert "signed char*" in source and "unsigned char*" in source
    else:
        assert "device char*" in source and "device uchar*" in source


@tl.jit
def _widen_and_narrow(x_ptr, i32_ptr, u32_ptr, f32_ptr, u8_ptr, back_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)  # i8
    tl.store(i32_ptr + offs, x.to(tl.int32), mask=m)
    tl.store(u32_ptr + offs, x.to(tl.uint32), mask=m)
    tl.store(f32_ptr + offs, x.to(tl.float32), mask=m)
    tl.store(u8_ptr + offs, x.to(tl.uint8), mask=m)
    # i32 to i8 keeps the low 8 bits, as C and Triton's trunc do.
    tl.store(back_ptr + offs, (x.to(tl.int32) * 3 + 1000).to(tl.int8), mask=m)


def test_integer_casts_extend_by_sign_and_truncate(rng):
    n = 256
    x = np.arange(-128, 128).astype(np.int8)
    outs = [np.zeros(n, t) for t in (np.int32, np.uint32, np.float32, np.uint8, np.int8)]
    _widen_and_narrow[(1,)](x, *outs, n, BLOCK=256)
    np.testing.assert_array_equal(outs[0], x.astype(np.int32))
    np.testing.assert_array_equal(outs[1], x.astype(np.int32).astype(np.uint32))
    np.testing.assert_array_equal(outs[2], x.astype(np.float32))
    np.testing.assert_array_equal(outs[3], x.view(np.uint8))
    np.testing.assert_array_equal(outs[4], (x.astype(np.int64) * 3 + 1000).astype(np.int8))


# ---- masked loads ---------------------------------------------------------------------------

@tl.jit
def _masked(x_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=OTHER))


@pytest.mark.parametrize("np_dtype,other", [(np.int8, -7), (np.int8, -128), (np.uint8, 255),
                                            (np.uint8, 0)])
def test_masked_loads_give_other_outside(np_dtype, other, rng):
    n, block = 45, 64
    info = np.iinfo(np_dtype)
    x = rng.integers(info.min, info.max + 1, block).astype(np_dtype)
    out = np.zeros(block, np_dtype)
    _masked[(1,)](x, out, n, OTHER=other, BLOCK=block)
    np.testing.assert_array_equal(out[:n], x[:n])
    np.testing.assert_array_equal(out[n:], np.full(block - n, other, np_dtype))


# ---- quantisation ---------------------------------------------------------------------------

@tl.jit
def quantize_rows(x_ptr, q_ptr, scale_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0)
    scale = tl.maximum(tl.max(tl.abs(x), 0), 1e-12) / 127.0
    y = x / scale
    rounded = tl.where(y >= 0, tl.floor(y + 0.5), tl.ceil(y - 0.5))  # half away from zero
    q = tl.minimum(tl.maximum(rounded, -127.0), 127.0).to(tl.int8)
    tl.store(q_ptr + row * N + cols, q, mask=m)
    tl.store(scale_ptr + row, scale)


@tl.jit
def dequantize_rows(q_ptr, scale_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    q = tl.load(q_ptr + row * N + cols, mask=m, other=0)
    tl.store(out_ptr + row * N + cols, q.to(tl.float32) * tl.load(scale_ptr + row), mask=m)


def _quantize_reference(x):
    f32 = np.float32
    scale = np.maximum(np.abs(x).max(axis=1), f32(1e-12)).astype(f32) / f32(127.0)
    y = x / scale[:, None]
    rounded = np.where(y >= 0, np.floor(y + f32(0.5)), np.ceil(y - f32(0.5)))
    return np.clip(rounded, -127, 127).astype(np.int8), scale


@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 50), (7, 129), (16, 1000)])
def test_per_row_symmetric_int8_quantisation(rows, cols, rng):
    x = (rng.standard_normal((rows, cols)) * rng.uniform(0.01, 100, (rows, 1))).astype(np.float32)
    x[0, 0] = -np.abs(x[0]).max() * 1.0  # a row whose extreme is negative
    if rows > 2:
        x[2] = 0.0  # an all-zero row: scale 1e-12 / 127, codes 0
    block = metile.next_power_of_2(cols)
    q, scale = np.zeros((rows, cols), np.int8), np.zeros(rows, np.float32)
    quantize_rows[(rows,)](x, q, scale, cols, BLOCK=block)
    want_q, want_scale = _quantize_reference(x)
    np.testing.assert_array_equal(scale, want_scale)
    np.testing.assert_array_equal(q, want_q)
    assert np.abs(q).max() == 127
    out = np.zeros((rows, cols), np.float32)
    dequantize_rows[(rows,)](q, scale, out, cols, BLOCK=block)
    np.testing.assert_array_equal(out, want_q.astype(np.float32) * want_scale[:, None])
    # The round trip loses at most half a step per element (and a few f32 roundings).
    assert np.all(np.abs(out - x) <= scale[:, None] * (0.5 + 1e-4))


# ---- reductions -----------------------------------------------------------------------------

@tl.jit
def _histogram(data_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    bins = tl.arange(0, 256)
    counts = tl.zeros((256,), tl.uint32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(data_ptr + offs, mask=offs < n, other=0)
        hit = (x[None, :] == bins[:, None]) & (offs < n)[None, :]
        ones = hit.to(tl.uint8)
        per_bin = tl.sum(ones, axis=1)  # u8 sums in u32, as Triton's
        tl.static_assert(per_bin.dtype == tl.uint32)
        counts += per_bin
    tl.store(counts_ptr + bins, counts)


@pytest.mark.parametrize("n", [1, 300, 5000])
def test_uint8_histogram(n, rng):
    data = rng.integers(0, 256, n).astype(np.uint8)
    data[: min(n, 100)] = 7  # one heavy bin
    counts = np.zeros(256, np.uint32)
    _histogram[(1,)](data, counts, n, BLOCK=32)
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=256))


@tl.jit
def _sums(x_ptr, u_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    u = tl.load(u_ptr + offs, mask=m, other=0)
    # Outside n: each reduction's identity.
    x_low, x_high = tl.load(x_ptr + offs, mask=m, other=-128), tl.load(x_ptr + offs, m, 127)
    u_high = tl.load(u_ptr + offs, mask=m, other=255)
    default = tl.sum(x)
    tl.static_assert(default.dtype == tl.int32)
    explicit = tl.sum(x.to(tl.int32))
    unsigned = tl.sum(u)
    tl.static_assert(unsigned.dtype == tl.uint32)
    wrapped = tl.sum(x, dtype=tl.int8)  # asked for: the sum in 8 bits, wrapping
    tl.static_assert(wrapped.dtype == tl.int8)
    biggest, smallest = tl.max(x_low), tl.min(u_high)
    tl.static_assert(biggest.dtype == tl.int32 and smallest.dtype == tl.int32)
    best, where = tl.max(x_low, 0, return_indices=True)
    tl.static_assert(best.dtype == tl.int8)
    tl.store(out_ptr + 0, default)
    tl.store(out_ptr + 1, explicit)
    tl.store(out_ptr + 2, unsigned.to(tl.int32))
    tl.store(out_ptr + 3, wrapped.to(tl.int32))
    tl.store(out_ptr + 4, biggest)
    tl.store(out_ptr + 5, smallest)
    tl.store(out_ptr + 6, best.to(tl.int32))
    tl.store(out_ptr + 7, where)
    tl.store(out_ptr + 8, tl.xor_sum(u, 0).to(tl.int32))
    tl.store(out_ptr + 9, tl.argmin(x_high, 0))


@pytest.mark.parametrize("n,block", [(5, 8), (200, 256), (1000, 1024)])
def test_sums_of_8_bit_integers_accumulate_in_32_bits(n, block, rng):
    x = rng.integers(-128, 128, n).astype(np.int8)
    u = rng.integers(0, 256, n).astype(np.uint8)
    out = np.zeros(10, np.int32)
    _sums[(1,)](x, u, out, n, BLOCK=block)
    wide = x.astype(np.int64)
    assert out[0] == wide.sum() and out[1] == wide.sum()
    assert out[2] == u.astype(np.int64).sum()
    assert out[3] == np.int64(wide.sum()).astype(np.int8)
    assert out[4] == x.max() and out[5] == u.min()
    assert out[6] == x.max() and out[7] == np.argmax(x)
    assert out[8] == np.bitwise_xor.reduce(u)
    assert out[9] == np.argmin(x)


@tl.jit
def _cumsum(x_ptr, u_ptr, out_ptr, uout_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    s = tl.cumsum(tl.load(x_ptr + offs, mask=m, other=0), 0)
    tl.static_assert(s.dtype == tl.int32)
    su = tl.cumsum(tl.load(u_ptr + offs, mask=m, other=0), 0)
    tl.static_assert(su.dtype == tl.uint32)
    tl.store(out_ptr + offs, s, mask=m)
    tl.store(uout_ptr + offs, su, mask=m)


def test_cumsum_of_8_bit_integers_runs_in_32_bits(rng):
    n = 300
    x = rng.integers(-128, 128, n).astype(np.int8)
    u = rng.integers(0, 256, n).astype(np.uint8)
    out, uout = np.zeros(n, np.int32), np.zeros(n, np.uint32)
    _cumsum[(1,)](x, u, out, uout, n, BLOCK=512)
    np.testing.assert_array_equal(out, np.cumsum(x.astype(np.int64)))
    np.testing.assert_array_equal(uout, np.cumsum(u.astype(np.int64)))


@tl.jit
def _row_max(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=-128)
    tl.store(out_ptr + rows, tl.max(x, axis=1).to(tl.int8), mask=rows < M)


def test_2d_reductions_of_int8(rng):
    m, n = 13, 50
    x = rng.integers(-128, 128, (m, n)).astype(np.int8)
    out = np.zeros(m, np.int8)
    _row_max[(1,)](x, out, m, n, BM=16, BN=64)
    np.testing.assert_array_equal(out, x.max(axis=1))


@pytest.mark.skipif(metile.device() != "host", reason="the host emulator's execution strategies")
def test_reductions_as_work_group_functions():
    """The tests race-check, which runs kernels on fibers; the default strategy, work-group
    functions, moves 8-bit values through SIMD loops of its own: the reductions again there,
    in a child process without race checking. Not the histogram: its [BLOCK, 256] comparison
    needs more thread loops than a work-group function is built with (it runs on fibers,
    tests/python/test_host_workgroup.py)."""
    env = dict(os.environ, METILE_HOST_RACECHECK="0", METILE_HOST_EXECUTION="workgroup")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
         "sums or cumsum or 2d_reductions or quantisation"],
        env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout


# ---- what is not built ----------------------------------------------------------------------

@tl.jit
def _atomic_i8(ptr):
    tl.atomic_add(ptr + tl.arange(0, 16), 1)


def test_atomics_on_8_bit_integers_are_not_supported():
    with pytest.raises(metile.NotSupportedError,
                       match="atomic_add: atomics take int32 or uint32 elements.*i8 is not "
                             "supported"):
        _atomic_i8[(1,)](np.zeros(16, np.int8))


@tl.jit
def _dot_i8(a_ptr, b_ptr, out_ptr):
    offs = tl.arange(0, 16)
    a = tl.load(a_ptr + offs[:, None] * 16 + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * 16 + offs[None, :])
    tl.store(out_ptr + offs[:, None] * 16 + offs[None, :], tl.dot(a, b))


def test_dot_of_8_bit_integers_is_not_supported():
    a = np.zeros((16, 16), np.int8)
    with pytest.raises(metile.NotSupportedError, match="dot: i8 operands are not supported"):
        _dot_i8[(1,)](a, a, np.zeros((16, 16), np.float32))
