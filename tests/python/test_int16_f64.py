"""16-bit integers (tl.int16, tl.uint16) and 64-bit floats (tl.float64) end to end on the
device, against numpy: wrap-around arithmetic, saturating float conversions, Triton's
promotion and reduction dtypes; f64 arithmetic, math and sums in double precision (the host
emulator and CUDA have double; MSL on Apple GPUs has not: tests/lit/lower/float64.ir)."""

import numpy as np
import pytest

import metile
import metile as tl
from metile import promotion


def test_dtype_objects_have_tritons_queries():
    assert (tl.int16, tl.uint16, tl.float64) == ("i16", "u16", "f64")
    assert tl.int16.int_bitwidth == 16 and tl.int16.is_int_signed() and tl.int16.is_int16()
    assert tl.uint16.is_int_unsigned() and tl.uint16.is_uint16() and not tl.uint16.is_floating()
    assert tl.float64.is_fp64() and tl.float64.is_floating() and tl.float64.primitive_bitwidth == 64
    assert (tl.float64.fp_mantissa_width, tl.float64.exponent_bias) == (52, 1023)
    assert metile.dtypes.dtype_name(np.int16) == "i16"
    assert metile.dtypes.dtype_name("uint16") == "u16"
    assert metile.dtypes.dtype_name("float64") == metile.dtypes.dtype_name(np.float64) == "f64"


@pytest.mark.parametrize("np_dtype,name", [(np.int16, "i16"), (np.uint16, "u16"),
                                           (np.float64, "f64")])
def test_buffers_hold_the_arrays(np_dtype, name, rng):
    x = (rng.standard_normal(37) * 1000).astype(np_dtype)
    buffer = metile.Buffer(data=x)
    assert buffer.dtype == name and buffer.nbytes == x.nbytes
    np.testing.assert_array_equal(buffer.numpy(), x)


@pytest.mark.parametrize("a,b,div_or_mod,expected", [
    ("i16", "i16", False, "i16"),
    ("i16", "u16", False, "u16"),   # same width, different signedness: the unsigned one
    ("i8", "i16", False, "i16"),
    ("u8", "i16", False, "i16"),
    ("i16", "i32", False, "i32"),
    ("u16", "i32", False, "i32"),
    ("i16", "u32", False, "u32"),
    ("i16", "f16", False, "f16"),
    ("f64", "f32", False, "f64"),   # f64 wins over everything
    ("f64", "f16", True, "f64"),
    ("f64", "bf16", False, "f64"),
    ("f64", "i64", False, "f64"),
])
def test_promotion_follows_triton(a, b, div_or_mod, expected):
    assert promotion.computation_type(a, b, div_or_mod) == expected
    assert promotion.computation_type(b, a, div_or_mod) == expected


def test_python_numbers_keep_the_dtype():
    assert promotion.with_number("i16", 3) == "i16"
    assert promotion.with_number("u16", 3) == "u16"
    assert promotion.with_number("i16", 0.5) == "f32"
    assert promotion.with_number("f64", 0.5) == "f64"


# ---- 16-bit integers --------------------------------------------------------------------

@tl.jit
def _int16_ops(a_ptr, b_ptr, sum_ptr, prod_ptr, quot_ptr, shr_ptr, max_ptr, wide_ptr, n,
               BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.static_assert((a + b).dtype == a.dtype)
    tl.store(sum_ptr + offs, a + b, mask=m)
    tl.store(prod_ptr + offs, a * b, mask=m)
    tl.store(quot_ptr + offs, a // b, mask=m)
    tl.store(shr_ptr + offs, a >> 3, mask=m)
    tl.store(max_ptr + offs, tl.maximum(a, b), mask=m)
    tl.store(wide_ptr + offs, a.to(tl.int32) * 3, mask=m)


@pytest.mark.parametrize("np_dtype", [np.int16, np.uint16])
@pytest.mark.parametrize("n", [1, 300, 1000])
def test_arithmetic_wraps_around_as_numpy(np_dtype, n, rng):
    info = np.iinfo(np_dtype)
    a = rng.integers(info.min, info.max + 1, n).astype(np_dtype)
    b = rng.integers(info.min, info.max + 1, n).astype(np_dtype)
    b[b == 0] = 7
    outs = [np.zeros(n, np_dtype) for _ in range(5)] + [np.zeros(n, np.int32)]
    _int16_ops[(metile.cdiv(n, 256),)](a, b, *outs, n, BLOCK=256)
    wa, wb = a.astype(np.int64), b.astype(np.int64)
    # C (and Triton) divide truncating toward zero
    quot = np.trunc(wa / wb).astype(np.int64)
    for got, want in zip(outs, [wa + wb, wa * wb, quot, wa >> 3, np.maximum(wa, wb)]):
        np.testing.assert_array_equal(got, want.astype(np_dtype))
    np.testing.assert_array_equal(outs[5], (wa * 3).astype(np.int32))


@tl.jit
def _from_float(x_ptr, i16_ptr, u16_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(i16_ptr + offs, x.to(tl.int16), mask=m)
    tl.store(u16_ptr + offs, x.to(tl.uint16), mask=m)


def _saturate(x, np_dtype):
    info = np.iinfo(np_dtype)
    return np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), info.min, info.max))


@pytest.mark.parametrize("np_float", [np.float32, np.float64])
def test_floats_truncate_toward_zero_and_saturate(np_float, rng):
    special = [0.0, -0.0, 0.5, -1.99, 32766.9, 32767.0, 32767.5, 32768.0, -32768.0, -32768.9,
               -40000.0, 65534.9, 65535.0, 65535.9, 65536.0, 1e6, -1e6, np.inf, -np.inf,
               np.nan, 2.9999999999999996]  # an f64 just below 3: truncates to 2, not 3
    x = np.concatenate([np.array(special), rng.uniform(-70000, 70000, 79)]).astype(np_float)
    n = len(x)
    i16, u16 = np.zeros(n, np.int16), np.zeros(n, np.uint16)
    _from_float[(1,)](x, i16, u16, n, BLOCK=128)
    wide = x.astype(np.float64)
    np.testing.assert_array_equal(i16, _saturate(wide, np.int16).astype(np.int16))
    np.testing.assert_array_equal(u16, _saturate(wide, np.uint16).astype(np.uint16))


@tl.jit
def _int16_sums(x_ptr, sum_ptr, max_ptr, cumsum_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    total = tl.sum(x, axis=0)
    largest = tl.max(x, axis=0)
    tl.static_assert(total.dtype == (tl.int32 if x.dtype == tl.int16 else tl.uint32))
    tl.static_assert(largest.dtype == tl.int32)
    tl.store(sum_ptr, total)
    tl.store(max_ptr, largest)
    tl.store(cumsum_ptr + offs, tl.cumsum(x, axis=0))


@pytest.mark.parametrize("np_dtype,sum_dtype", [(np.int16, np.int32), (np.uint16, np.uint32)])
def test_sums_of_16_bit_integers_accumulate_in_32_bits(np_dtype, sum_dtype, rng):
    n = 1000
    info = np.iinfo(np_dtype)
    x = rng.integers(info.min, info.max + 1, n).astype(np_dtype)
    sums, maxima, running = np.zeros(1, sum_dtype), np.zeros(1, np.int32), np.zeros(1024, sum_dtype)
    _int16_sums[(1,)](x, sums, maxima, running, n, BLOCK=1024)
    assert sums[0] == x.astype(np.int64).sum().astype(sum_dtype)
    assert maxima[0] == x.max()
    want = np.cumsum(np.concatenate([x, np.zeros(1024 - n, np_dtype)]).astype(np.int64))
    np.testing.assert_array_equal(running, want.astype(sum_dtype))


# ---- 64-bit floats ------------------------------------------------------------------------

@tl.jit
def _f64_ops(x_ptr, y_ptr, out_ptr, math_ptr, mixed_ptr, f32_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)  # f32
    mixed = x * y + 0.1  # f64 * f32 is f64; 0.1 a double constant
    tl.static_assert(mixed.dtype == tl.float64)
    tl.store(out_ptr + offs, x / (y + 3.0) - x * x, mask=m)
    tl.store(math_ptr + offs, tl.sqrt(tl.abs(x)) + tl.exp(x * 0.01) + tl.log(tl.abs(x) + 1.0),
             mask=m)
    tl.store(mixed_ptr + offs, mixed, mask=m)
    tl.store(f32_ptr + offs, x.to(tl.float32), mask=m)


@pytest.mark.parametrize("n", [1, 300, 1000])
def test_f64_computes_in_double_precision(n, rng):
    x = rng.standard_normal(n) * 100
    x[0] = 1.0 + 2.0 ** -40  # a value f32 cannot hold
    y = rng.standard_normal(n).astype(np.float32)
    out, math_out, mixed = np.zeros(n), np.zeros(n), np.zeros(n)
    f32 = np.zeros(n, np.float32)
    _f64_ops[(metile.cdiv(n, 256),)](x, y, out, math_out, mixed, f32, n, BLOCK=256)
    wy = y.astype(np.float64)
    # y + 3.0 stays f32 (a Python number takes the tile's dtype), then meets f64
    np.testing.assert_allclose(out, x / (y + np.float32(3.0)).astype(np.float64) - x * x,
                               rtol=1e-14)
    np.testing.assert_allclose(math_out, np.sqrt(np.abs(x)) + np.exp(x * 0.01) +
                               np.log(np.abs(x) + 1.0), rtol=1e-14)
    np.testing.assert_array_equal(mixed, x * wy + 0.1)
    np.testing.assert_array_equal(f32, x.astype(np.float32))
    assert mixed[0] != np.float32(mixed[0])  # kept beyond f32's precision


@tl.jit
def _f64_sum(x_ptr, out_ptr, rows_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    total = tl.sum(x, axis=0)
    tl.static_assert(total.dtype == tl.float64)
    tl.store(out_ptr, total)
    tl.store(rows_ptr + tl.arange(0, BLOCK // 16), tl.max(tl.reshape(x, (BLOCK // 16, 16)), axis=1))


def test_f64_reductions(rng):
    n = 1000
    x = rng.standard_normal(n) * 1e8 + 1e-3
    out, rows = np.zeros(1), np.zeros(64)
    _f64_sum[(1,)](x, out, rows, n, BLOCK=1024)
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-13)
    padded = np.concatenate([x, np.zeros(1024 - n)])
    np.testing.assert_array_equal(rows, padded.reshape(64, 16).max(axis=1))


@tl.jit
def _double_it(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


@pytest.mark.skipif(metile.device() != "cuda", reason="torch CUDA tensors need the cuda device")
@pytest.mark.parametrize("name", ["int16", "float64"])
def test_torch_tensors_are_arguments(name):
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, name)
    x = (torch.randn(1000, device="cuda") * 1000).to(dtype)
    out = torch.zeros(1000, device="cuda", dtype=dtype)
    _double_it[(metile.cdiv(1000, 256),)](x, out, 1000, BLOCK=256)
    assert torch.equal(out, x * 2)
