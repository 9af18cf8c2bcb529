"""8-bit floats (tl.float8e4nv: OCP e4m3fn; tl.float8e5: e5m2) end to end on the device,
against ml_dtypes: loads and stores of the bytes, conversions from f32, f16, bf16 and integers
(round to nearest even, saturating to the largest finite value as PTX's cvt.rn.satfinite does,
NaN to 0x7F), exact conversions back, arithmetic computed in f32 and rounded once, Triton's
promotion, masked loads, reductions, and the errors for what is not built."""

import ml_dtypes
import numpy as np
import pytest

import metile
import metile as tl
from metile import promotion

E4M3, E5M2 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
FORMATS = [(E4M3, "f8e4m3", 448.0), (E5M2, "f8e5m2", 57344.0)]
IDS = ["e4m3", "e5m2"]


def to_fp8_reference(x, np_fp8, largest):
    """The bytes of x rounded to nearest even and saturated (ml_dtypes rounds to nearest even
    but overflows to NaN or infinity; PTX's satfinite and meTile clamp first), NaN as 0x7F."""
    wide = np.asarray(x, np.float64)
    clipped = np.where(np.isnan(wide), 0.0, np.clip(wide, -largest, largest))
    # ml_dtypes converts from f32 in one rounding; every f64 here is an exact f32.
    out = clipped.astype(np.float32).astype(np_fp8).view(np.uint8).copy()
    out[np.isnan(wide)] = 0x7F
    return out


def special_values(np_fp8):
    """Zeros, infinities, NaN, the largest finite value and past it, the subnormals and the
    midpoints between neighbouring fp8 values (ties to even) and just either side of them."""
    finite = np.arange(256, dtype=np.uint8).view(np_fp8).astype(np.float32)
    finite = np.unique(finite[np.isfinite(finite)])
    mids = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(np.float32)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448.0, 449.0, 463.9, 464.0, 480.0,
                      1e6, -1e6, 57344.0, 61439.0, 61440.0, 1e30, 2.0 ** -9, 2.0 ** -10,
                      2.0 ** -11, 2.0 ** -16, 2.0 ** -17, 2.0 ** -18, 1e-30], np.float32)
    return np.concatenate([edges, -edges, finite, mids, np.nextafter(mids, np.float32(np.inf)),
                           np.nextafter(mids, np.float32(-np.inf))])


# ---- dtypes, buffers and promotion --------------------------------------------------------

def test_dtype_objects_have_tritons_names_and_queries():
    assert tl.float8e4nv == "f8e4m3" and tl.float8e5 == "f8e5m2"
    for t in (tl.float8e4nv, tl.float8e5):
        assert t.is_fp8() and t.is_floating() and not t.is_int() and t.primitive_bitwidth == 8
    assert tl.float8e4nv.is_fp8e4nv() and not tl.float8e4nv.is_fp8e5()
    assert tl.float8e5.is_fp8e5() and not tl.float16.is_fp8()
    assert (tl.float8e4nv.fp_mantissa_width, tl.float8e4nv.exponent_bias) == (3, 7)
    assert (tl.float8e5.fp_mantissa_width, tl.float8e5.exponent_bias) == (2, 15)
    for alias in ("float8e4nv", "fp8e4nv", "float8_e4m3fn", E4M3):
        assert metile.dtypes.dtype_name(alias) == "f8e4m3"
    for alias in ("float8e5", "fp8e5", "float8_e5m2", E5M2):
        assert metile.dtypes.dtype_name(alias) == "f8e5m2"
    assert metile.dtypes.to_numpy("f8e4m3") == np.dtype(E4M3)


@pytest.mark.parametrize("np_fp8,name,largest", FORMATS, ids=IDS)
def test_buffers_hold_fp8_arrays(np_fp8, name, largest, rng):
    x = rng.standard_normal(37).astype(np_fp8)
    buffer = metile.Buffer(data=x)
    assert buffer.dtype == name and buffer.nbytes == 37
    np.testing.assert_array_equal(buffer.numpy().view(np.uint8), x.view(np.uint8))
    assert metile.Buffer.zeros((3, 5), dtype=name).numpy().dtype == np.dtype(np_fp8)


@pytest.mark.parametrize("a,b,div_or_mod,expected", [
    ("f8e4m3", "f8e4m3", False, "f8e4m3"),   # one format stays in it
    ("f8e5m2", "f8e5m2", True, "f8e5m2"),
    ("f8e4m3", "f8e5m2", False, "f16"),      # two formats meet in f16
    ("f8e4m3", "f16", False, "f16"),
    ("f8e4m3", "f16", True, "f32"),
    ("f8e5m2", "bf16", False, "f32"),
    ("f8e4m3", "f32", False, "f32"),
    ("f8e5m2", "f64", False, "f64"),
])
def test_promotion_follows_tritons_computation_type(a, b, div_or_mod, expected):
    assert promotion.computation_type(a, b, div_or_mod) == expected
    assert promotion.computation_type(b, a, div_or_mod) == expected


def test_fp8_beside_an_integer_has_no_computation_type():
    with pytest.raises(promotion.PromotionError,
                       match="no computation type for f8e4m3 and i32.*convert the fp8 operand"):
        promotion.computation_type("f8e4m3", "i32")


def test_python_numbers_keep_the_fp8_dtype():
    assert promotion.with_number("f8e4m3", 2.0) == "f8e4m3"
    assert promotion.with_number("f8e5m2", 3) == "f8e5m2"


@tl.jit
def _dtypes_of(a_ptr, b_ptr, h_ptr, out_ptr):
    a = tl.load(a_ptr)  # e4m3
    b = tl.load(b_ptr)  # e5m2
    h = tl.load(h_ptr)  # f16
    tl.static_assert((a + a).dtype == tl.float8e4nv)
    tl.static_assert((a * 2.0).dtype == tl.float8e4nv)
    tl.static_assert((a + b).dtype == tl.float16)
    tl.static_assert((a + h).dtype == tl.float16)
    tl.static_assert((b / h).dtype == tl.float32)
    tl.static_assert((a < b).dtype == tl.int1)
    tl.store(out_ptr, (a + b).to(tl.float32))


def test_traced_values_promote_as_triton():
    out = np.zeros(1, np.float32)
    _dtypes_of[(1,)](np.array([1.5], E4M3), np.array([-0.25], E5M2),
                     np.array([2.0], np.float16), out)
    assert out[0] == 1.25


# ---- conversions --------------------------------------------------------------------------

@tl.jit
def _to_fp8(x_ptr, e4_ptr, e5_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv), mask=m)
    tl.store(e5_ptr + offs, x.to(tl.float8e5, fp_downcast_rounding="rtne"), mask=m)


@pytest.mark.parametrize("np_float", [np.float32, np.float16, ml_dtypes.bfloat16],
                         ids=["f32", "f16", "bf16"])
def test_floats_round_to_nearest_even_and_saturate(np_float, rng):
    x = np.concatenate([special_values(E4M3), special_values(E5M2),
                        rng.standard_normal(3001) * 2.0 ** rng.integers(-20, 20, 3001)])
    with np.errstate(over="ignore"):  # f16 holds up to 65504: larger values become infinities
        x = x.astype(np_float)  # the narrow sources round first; the reference starts from them
    n = len(x)  # ragged: not a multiple of the block
    e4, e5 = np.zeros(n, E4M3), np.zeros(n, E5M2)
    _to_fp8[(metile.cdiv(n, 256),)](x, e4, e5, n, BLOCK=256)
    np.testing.assert_array_equal(e4.view(np.uint8), to_fp8_reference(x, E4M3, 448.0))
    np.testing.assert_array_equal(e5.view(np.uint8), to_fp8_reference(x, E5M2, 57344.0))


@tl.jit
def _from_fp8(x_ptr, f32_ptr, f16_ptr, bf16_ptr, i32_ptr, other_ptr, n, TO: tl.constexpr,
              BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(f32_ptr + offs, x.to(tl.float32), mask=m)
    tl.store(f16_ptr + offs, x.to(tl.float16), mask=m)
    tl.store(bf16_ptr + offs, x.to(tl.bfloat16), mask=m)
    wide = x.to(tl.float32)
    finite = (wide == wide) & (tl.abs(wide) < 1e6)  # NaN and infinities have no integer
    tl.store(i32_ptr + offs, tl.where(finite, x, 0.0).to(tl.int32), mask=m)
    tl.store(other_ptr + offs, x.to(TO), mask=m)


@pytest.mark.parametrize("np_fp8,name,largest", FORMATS, ids=IDS)
def test_every_fp8_value_converts_back_exactly(np_fp8, name, largest):
    x = np.arange(256, dtype=np.uint8).view(np_fp8)
    n = 256
    other, np_other = (("f8e5m2", E5M2) if name == "f8e4m3" else ("f8e4m3", E4M3))
    outs = [np.zeros(n, t) for t in (np.float32, np.float16, ml_dtypes.bfloat16, np.int32,
                                     np_other)]
    _from_fp8[(1,)](x, *outs, n, TO=other, BLOCK=256)
    wide = x.astype(np.float32)
    np.testing.assert_array_equal(outs[0], wide)  # NaN == NaN for assert_array_equal
    np.testing.assert_array_equal(outs[1].astype(np.float32), wide.astype(np.float16))
    np.testing.assert_array_equal(outs[2].astype(np.float32),
                                  wide.astype(ml_dtypes.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(outs[3], np.where(np.isfinite(wide), np.trunc(wide), 0))
    np.testing.assert_array_equal(outs[4].view(np.uint8),
                                  to_fp8_reference(wide, np_other, FORMATS[name == "f8e4m3"][2]))


@tl.jit
def _from_int(x_ptr, e4_ptr, e5_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv), mask=m)
    tl.store(e5_ptr + offs, x.to(tl.float8e5), mask=m)


def test_integers_convert_through_f32():
    x = np.concatenate([np.arange(-600, 600), [70000, -70000, 2 ** 31 - 1, -2 ** 31]])
    x = x.astype(np.int32)
    n = len(x)
    e4, e5 = np.zeros(n, E4M3), np.zeros(n, E5M2)
    _from_int[(1,)](x, e4, e5, n, BLOCK=2048)
    np.testing.assert_array_equal(e4.view(np.uint8), to_fp8_reference(x, E4M3, 448.0))
    np.testing.assert_array_equal(e5.view(np.uint8), to_fp8_reference(x, E5M2, 57344.0))


# ---- arithmetic, comparisons, selects ---------------------------------------------------

@tl.jit
def _arithmetic(a_ptr, b_ptr, sum_ptr, prod_ptr, quot_ptr, neg_ptr, max_ptr, lt_ptr, pick_ptr,
                scaled_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m)
    tl.store(sum_ptr + offs, a + b, mask=m)
    tl.store(prod_ptr + offs, a * b, mask=m)
    tl.store(quot_ptr + offs, a / b, mask=m)
    tl.store(neg_ptr + offs, -tl.abs(a), mask=m)
    tl.store(max_ptr + offs, tl.maximum(a, b), mask=m)
    tl.store(lt_ptr + offs, (a < b).to(tl.int8), mask=m)
    tl.store(pick_ptr + offs, tl.where(a < b, a, b), mask=m)
    tl.store(scaled_ptr + offs, a * 3.0 + 1, mask=m)


@pytest.mark.parametrize("np_fp8,name,largest", FORMATS, ids=IDS)
@pytest.mark.parametrize("n", [1, 100, 1000])
def test_arithmetic_rounds_once_from_f32(np_fp8, name, largest, n, rng):
    def fp8(v):
        return to_fp8_reference(v, np_fp8, largest).view(np_fp8)

    a = fp8(rng.standard_normal(n) * 8)
    b = fp8(rng.standard_normal(n) * 8)
    if n > 10:  # specials among them: NaN, the largest value, zeros, subnormals
        a[:6] = np.array([np.nan, largest, 0.0, -0.0, 2.0 ** -9, -largest], np.float32)
        b[:6] = np.array([1.0, largest, -0.0, 0.0, 2.0 ** -9, 0.5], np.float32)
    outs = [np.zeros(n, np_fp8) for _ in range(5)] + [np.zeros(n, np.int8)] + \
        [np.zeros(n, np_fp8) for _ in range(2)]
    _arithmetic[(metile.cdiv(n, 256),)](a, b, *outs, n, BLOCK=256)
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        wants = [fa + fb, fa * fb, fa / fb, -np.abs(fa), np.fmax(fa, fb)]
    for got, want in zip(outs[:5], wants):
        np.testing.assert_array_equal(got.view(np.uint8), to_fp8_reference(want, np_fp8, largest))
    np.testing.assert_array_equal(outs[5], (fa < fb).astype(np.int8))
    np.testing.assert_array_equal(outs[6].view(np.uint8),
                                  np.where(fa < fb, a.view(np.uint8), b.view(np.uint8)))
    want = to_fp8_reference(fa * np.float32(3.0), np_fp8, largest)  # a * 3.0 is fp8 again
    want = to_fp8_reference(np.frombuffer(want.tobytes(), np_fp8).astype(np.float32) + 1,
                            np_fp8, largest)
    np.testing.assert_array_equal(outs[7].view(np.uint8), want)


@tl.jit
def _masked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1.5)
    tl.store(out_ptr + offs, x)


@pytest.mark.parametrize("np_fp8,name,largest", FORMATS, ids=IDS)
def test_masked_loads_give_other_outside(np_fp8, name, largest, rng):
    n = 45
    x = rng.standard_normal(n).astype(np_fp8)
    out = np.zeros(64, np_fp8)
    _masked[(1,)](x, out, n, BLOCK=64)
    np.testing.assert_array_equal(out[:n].view(np.uint8), x.view(np.uint8))
    np.testing.assert_array_equal(out[n:].astype(np.float32), -1.5)


@tl.jit
def _reductions(x_ptr, sum_ptr, max_ptr, argmax_ptr, rows_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-448.0)
    total = tl.sum(x, axis=0)
    tl.static_assert(total.dtype == tl.float32)
    largest = tl.max(x, axis=0)
    tl.static_assert(largest.dtype == x.dtype)
    tl.store(sum_ptr, total)
    tl.store(max_ptr, largest)
    tl.store(argmax_ptr, tl.argmax(x, axis=0))
    grid = tl.reshape(x, (BLOCK // 8, 8))
    tl.store(rows_ptr + tl.arange(0, BLOCK // 8), tl.min(grid, axis=1))


@pytest.mark.parametrize("np_fp8,name,largest", FORMATS, ids=IDS)
def test_reductions_sum_in_f32_and_keep_extrema(np_fp8, name, largest, rng):
    n = 200
    x = (rng.standard_normal(n) * 4).astype(np_fp8)
    sums, maxima, arg = np.zeros(1, np.float32), np.zeros(1, np_fp8), np.zeros(1, np.int32)
    rows = np.zeros(32, np_fp8)
    _reductions[(1,)](x, sums, maxima, arg, rows, n, BLOCK=256)
    fx = x.astype(np.float32)
    padded = np.concatenate([fx, np.full(256 - n, -448.0, np.float32)])
    np.testing.assert_allclose(sums[0], padded.astype(np.float64).sum(), rtol=1e-6)
    assert maxima.astype(np.float32)[0] == fx.max() and arg[0] == np.argmax(fx)
    np.testing.assert_array_equal(rows.astype(np.float32), padded.reshape(32, 8).min(axis=1))


@tl.jit
def _larger(a, b):
    return tl.maximum(a, b)


@tl.jit
def _combine_sort_split(x_ptr, best_ptr, sorted_ptr, even_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    best = tl.reduce(x, 0, _larger)  # the combine_fn sees fp8 scalars, as in Triton
    tl.static_assert(best.dtype == x.dtype)
    tl.store(best_ptr, best)
    tl.store(sorted_ptr + offs, tl.sort(x))
    even, odd = tl.split(tl.reshape(x, (BLOCK // 2, 2)))
    tl.store(even_ptr + tl.arange(0, BLOCK // 2), even)


@pytest.mark.parametrize("np_fp8,name,largest", FORMATS, ids=IDS)
def test_combine_functions_sort_and_split_move_fp8_values(np_fp8, name, largest, rng):
    x = (rng.standard_normal(64) * 10).astype(np_fp8)
    best, ordered, even = np.zeros(1, np_fp8), np.zeros(64, np_fp8), np.zeros(32, np_fp8)
    _combine_sort_split[(1,)](x, best, ordered, even, BLOCK=64)
    fx = x.astype(np.float32)
    assert best.astype(np.float32)[0] == fx.max()
    np.testing.assert_array_equal(ordered.astype(np.float32), np.sort(fx))
    np.testing.assert_array_equal(even.astype(np.float32), fx[0::2])  # -0.0 may come back +0.0


# ---- what is not built ----------------------------------------------------------------------

@tl.jit
def _fp8_plus_int(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, (x + offs).to(tl.float32))


def test_fp8_beside_an_integer_tile_is_an_error():
    with pytest.raises(metile.CompilationError, match="add: no computation type for f8e4m3 "
                                                      "and i32"):
        _fp8_plus_int[(1,)](np.zeros(16, E4M3), np.zeros(16, np.float32))


@tl.jit
def _dot_fp8(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :])
    tl.store(out_ptr + rows[:, None] * N + cols[None, :],
             tl.dot(a, b, max_num_imprecise_acc=32))


@pytest.mark.parametrize("a_fp8,b_fp8", [(E4M3, E4M3), (E5M2, E5M2), (E4M3, E5M2)],
                         ids=["e4m3", "e5m2", "mixed"])
def test_dot_of_fp8_operands_accumulates_their_exact_products(a_fp8, b_fp8, rng):
    m, n, k = 16, 32, 64
    a = (rng.standard_normal((m, k)) * 4).astype(a_fp8)
    b = (rng.standard_normal((k, n)) * 4).astype(b_fp8)
    a[0, :4] = [448.0, -448.0, 2.0 ** -9, 0.0]  # the largest and the smallest values
    out = np.zeros((m, n), np.float32)
    _dot_fp8[(1,)](a, b, out, M=m, N=n, K=k)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@tl.jit
def _dot_fp8_f16(a_ptr, b_ptr, out_ptr):
    offs = tl.arange(0, 16)
    a = tl.load(a_ptr + offs[:, None] * 16 + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * 16 + offs[None, :])
    tl.store(out_ptr + offs[:, None] * 16 + offs[None, :], tl.dot(a, b))


def test_dot_of_fp8_and_another_dtype_is_an_error():
    with pytest.raises(metile.CompilationError, match="dot: an fp8 operand multiplies an fp8 "
                                                      "operand, as in Triton; got f8e4m3 and f16"):
        _dot_fp8_f16[(1,)](np.zeros((16, 16), E4M3), np.zeros((16, 16), np.float16),
                           np.zeros((16, 16), np.float32))


@tl.jit
def _f64_to_fp8(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr).to(tl.float8e4nv))


def test_f64_to_fp8_is_not_supported():
    with pytest.raises(metile.NotSupportedError,
                       match="cast: f64 to f8e4m3 is not supported.*through f32"):
        _f64_to_fp8[(1,)](np.zeros(1), np.zeros(1, E4M3))


@tl.jit
def _bitwise_fp8(x_ptr, out_ptr):
    x = tl.load(x_ptr)
    tl.store(out_ptr, x & x)


def test_bitwise_operations_on_fp8_are_an_error():
    with pytest.raises(metile.CompilationError,
                       match="and: bitwise operations need integer operands, got f8e5m2"):
        _bitwise_fp8[(1,)](np.zeros(1, E5M2), np.zeros(1, E5M2))


@tl.jit
def _round_toward_zero(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr).to(tl.float8e4nv, fp_downcast_rounding="rtz"))


def test_rounding_toward_zero_is_not_supported():
    with pytest.raises(metile.NotSupportedError,
                       match="cast: fp_downcast_rounding='rtz' is not supported"):
        _round_toward_zero[(1,)](np.zeros(1, np.float32), np.zeros(1, E4M3))


# ---- torch tensors on the cuda device ------------------------------------------------------

@tl.jit
def _copy_scaled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=m).to(tl.float32) * 2).to(
        out_ptr.dtype.element_ty), mask=m)


@pytest.mark.skipif(metile.device() != "cuda", reason="torch CUDA tensors need the cuda device")
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_torch_fp8_tensors_are_arguments(name):
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, name)
    x = torch.randn(1000, device="cuda").to(dtype)
    out = torch.zeros(1000, device="cuda", dtype=dtype)
    _copy_scaled[(metile.cdiv(1000, 256),)](x, out, 1000, BLOCK=256)
    want = (x.float() * 2).to(dtype)  # torch's conversion saturates nowhere here (|x| < 10)
    assert torch.equal(out.view(torch.uint8), want.view(torch.uint8))
