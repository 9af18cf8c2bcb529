"""Every language feature end to end on the host target, against numpy."""

import ml_dtypes
import numpy as np
import pytest

import metile


def launch_1d(kernel, n, *args, BLOCK=128, **kw):
    kernel[(metile.cdiv(n, BLOCK),)](*args, n, BLOCK=BLOCK, **kw)


@metile.kernel
def arithmetic(x, y, out_add, out_mix, out_div, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    m = i < n
    a = metile.load(x + i, mask=m, other=1.0)
    b = metile.load(y + i, mask=m, other=1.0)
    metile.store(out_add + i, a + b * 2 - 1, mask=m)
    metile.store(out_mix + i, 3.0 - a * b + -a, mask=m)
    metile.store(out_div + i, (a / b) + (1 / b), mask=m)


def test_arithmetic_with_python_numbers(rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.uniform(1, 2, n).astype(np.float32)
    outs = [np.zeros(n, np.float32) for _ in range(3)]
    launch_1d(arithmetic, n, x, y, *outs)
    np.testing.assert_allclose(outs[0], x + y * 2 - 1, rtol=1e-6)
    np.testing.assert_allclose(outs[1], 3.0 - x * y - x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[2], x / y + 1 / y, rtol=1e-6)


@metile.kernel
def scalar_division(out, a, b):
    # Traced scalars follow C, as in Triton (arith.divsi / remsi): // rounds toward zero and %
    # takes the dividend's sign; cdiv rounds up.
    metile.store(out, a // b)
    metile.store(out + 1, a % b)
    metile.store(out + 2, metile.cdiv(a, b))


@pytest.mark.parametrize("a,b", [(-7, 2), (7, -2), (-7, -2), (7, 2), (-6, 3)])
def test_traced_scalar_division_follows_c_as_in_triton(a, b):
    out = np.zeros(3, np.int32)
    scalar_division[(1,)](out, a, b)
    assert list(out) == [int(a / b), int(np.fmod(a, b)), -(-a // b)]


@metile.kernel
def integer_ops(out_fdiv, out_rem, out_bits, out_tdiv, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    m = i < n
    v = i - 50
    metile.store(out_fdiv + i, v // 7, mask=m)
    metile.store(out_rem + i, v % 7, mask=m)
    metile.store(out_bits + i, ((i & 12) | 1) ^ (i << 2) ^ (i >> 1) ^ ~i, mask=m)
    metile.store(out_tdiv + i, v / 4, mask=m)


def test_integer_operators():
    n = 200
    fdiv, rem, bits = (np.zeros(n, np.int32) for _ in range(3))
    tdiv = np.zeros(n, np.float32)
    launch_1d(integer_ops, n, fdiv, rem, bits, tdiv)
    i = np.arange(n, dtype=np.int32)
    v = i - 50
    # On tiles, Triton's C rules: // rounds toward zero, % takes the dividend's sign.
    np.testing.assert_array_equal(fdiv, np.trunc(v / 7).astype(np.int32))
    np.testing.assert_array_equal(rem, np.fmod(v, 7))
    np.testing.assert_array_equal(bits, ((i & 12) | 1) ^ (i << 2) ^ (i >> 1) ^ ~i)
    np.testing.assert_allclose(tdiv, v / 4)


@metile.kernel
def select_and_compare(x, out, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    m = i < n
    a = metile.load(x + i, mask=m)
    clipped = metile.minimum(metile.maximum(a, -0.5), 0.5)
    leaky = metile.where(a > 0, a, a * 0.1)
    flags = metile.where((a >= 0.25) | (a <= -0.25), 1.0, 0.0)
    same = metile.where(a == a, 1.0, 0.0) + metile.where(a != 0.125, 0.0, 5.0)
    metile.store(out + i, clipped + leaky * 10 + flags * 100 + same * 1000, mask=m)


def test_where_minimum_maximum_comparisons(rng):
    n = 500
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    launch_1d(select_and_compare, n, x, out)
    ref = (np.clip(x, -0.5, 0.5) + np.where(x > 0, x, x * np.float32(0.1)) * 10
           + np.where(np.abs(x) >= 0.25, 100, 0) + 1000)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


@metile.kernel
def unary_math(x, out, n, FN: metile.constexpr, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    m = i < n
    v = metile.load(x + i, mask=m, other=1.0)
    fn = getattr(metile, FN)
    metile.store(out + i, fn(v), mask=m)


UNARY = {
    "exp": np.exp, "fast_exp": np.exp, "exp2": np.exp2, "fast_exp2": np.exp2, "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda v: 1 / np.sqrt(v), "abs": np.abs, "tanh": np.tanh, "sin": np.sin,
    "cos": np.cos,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math(name, rng):
    n = 300
    x = rng.uniform(0.1, 3.0, n).astype(np.float32)
    if name in ("abs", "sin", "cos", "tanh"):
        x -= 1.5
    out = np.zeros(n, np.float32)
    launch_1d(unary_math, n, x, out, FN=name)
    np.testing.assert_allclose(out, UNARY[name](x), rtol=2e-5 if "fast" not in name else 1e-3,
                               atol=1e-6)


@pytest.mark.skipif(metile.device() not in ("cuda", "host"),
                    reason="the bound is CUDA's ex2.approx (the host is within it); Metal's "
                           "fast math has its own")
@pytest.mark.parametrize("name", ["fast_exp", "fast_exp2"])
def test_fast_exponentials_stay_within_their_bound(name, rng):
    # Across the normal results (|x| < 80): CUDA's ex2.approx is about 2^-22 relative, and exp
    # scales x by log2(e) first, which adds up to |x| * 2^-24 (docs/cuda.md); the bound is
    # twice both, far below a wrong scale (1.44 for log2(e) would be |x| * 1e-3 off).
    n = 4096
    x = rng.uniform(-80.0, 80.0, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    launch_1d(unary_math, n, x, out, FN=name)
    want = UNARY[name](x.astype(np.float64))
    bound = 2.0**-21 + np.abs(x.astype(np.float64)) * 2.0**-23
    relative = np.abs(out - want) / want
    assert np.all(relative <= bound), (x[relative > bound][:5], relative.max())


@metile.kernel
def casts(x, out_int, out_half, out_back, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    m = i < n
    v = metile.load(x + i, mask=m)
    metile.store(out_int + i, v.to(metile.int32), mask=m)
    metile.store(out_half + i, metile.cast(v, "f16"), mask=m)
    metile.store(out_back + i, (i.to("f32") * 0.5), mask=m)


def test_casts(rng):
    n = 150
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    out_int, out_half = np.zeros(n, np.int32), np.zeros(n, np.float16)
    out_back = np.zeros(n, np.float32)
    launch_1d(casts, n, x, out_int, out_half, out_back)
    np.testing.assert_array_equal(out_int, x.astype(np.int32))  # truncation toward zero
    np.testing.assert_array_equal(out_half, x.astype(np.float16))
    np.testing.assert_array_equal(out_back, np.arange(n) * 0.5)


@metile.kernel
def reductions(x, out, n, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    i = metile.arange(0, BLOCK)
    m = i < n
    v = metile.load(x + row * n + i, mask=m, other=0.0)
    low = metile.load(x + row * n + i, mask=m, other=1e30)
    high = metile.load(x + row * n + i, mask=m, other=-1e30)
    metile.store(out + row * 3, metile.sum(v))
    metile.store(out + row * 3 + 1, metile.max(high))
    metile.store(out + row * 3 + 2, metile.min(low))


@pytest.mark.parametrize("n", [1, 33, 256])
def test_reductions_sum_max_min(n, rng):
    rows = 5
    x = rng.standard_normal((rows, n)).astype(np.float32)
    out = np.zeros((rows, 3), np.float32)
    reductions[(rows,)](x, out, n, BLOCK=metile.next_power_of_2(n))
    np.testing.assert_allclose(out[:, 0], x.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[:, 1], x.max(1))
    np.testing.assert_array_equal(out[:, 2], x.min(1))


@metile.kernel
def matrix_2d(x, out, rows, cols, BR: metile.constexpr, BC: metile.constexpr):
    r = metile.program_id(0) * BR + metile.arange(0, BR)
    c = metile.program_id(1) * BC + metile.arange(0, BC)
    m = (r[:, None] < rows) & (c[None, :] < cols)
    offsets = r[:, None] * cols + c[None, :]
    v = metile.load(x + offsets, mask=m)
    metile.store(out + offsets, v * 2.0 + r[:, None].to("f32"), mask=m)


def test_two_dimensional_tiles_and_grid(rng):
    rows, cols = 37, 70
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(x)
    matrix_2d[(metile.cdiv(rows, 16), metile.cdiv(cols, 32))](x, out, rows, cols, BR=16, BC=32)
    np.testing.assert_allclose(out, x * 2 + np.arange(rows)[:, None], rtol=1e-6)


@metile.kernel
def descriptor_copy(src, dst, rows, cols, BR: metile.constexpr, BC: metile.constexpr):
    source = metile.tensor(src, shape=(rows, cols), strides=(cols, 1), access="read")
    target = metile.tensor(dst, shape=(rows, cols))
    r = metile.program_id(0) * BR + metile.arange(0, BR)
    c = metile.arange(0, BC)
    target.store((r[:, None], c[None, :]), source.load((r[:, None], c[None, :])) + 1.0)


def test_tensor_descriptor_masks_out_of_bounds(rng):
    rows, cols = 10, 6  # the 8x8 tiles run past both extents
    src = rng.standard_normal((rows, cols)).astype(np.float32)
    guard = np.full(rows * cols + 64, -7.0, np.float32)
    dst = guard[: rows * cols]
    descriptor_copy[(metile.cdiv(rows, 8),)](src, dst, rows, cols, BR=8, BC=8)
    np.testing.assert_array_equal(dst.reshape(rows, cols), src + 1)
    np.testing.assert_array_equal(guard[rows * cols:], -7.0)  # nothing written beyond


@metile.kernel
def descriptor_scalar_coords(src, dst, n, BLOCK: metile.constexpr):
    source = metile.tensor(src, shape=(n,))
    target = metile.tensor(dst, shape=(n,), access="write")
    first = source.load((0,))
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    target.store(i, source.load(i) - first)


def test_tensor_descriptor_scalar_coordinates(rng):
    n = 50
    src = rng.standard_normal(n).astype(np.float32)
    dst = np.zeros(n, np.float32)
    descriptor_scalar_coords[(metile.cdiv(n, 32),)](src, dst, n, BLOCK=32)
    np.testing.assert_allclose(dst, src - src[0])


@metile.kernel
def loops_with_state(x, out, n, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    total = 0.0
    biggest = -1e38
    count = 0
    for start in metile.tile_range(0, n, BLOCK):
        i = start + metile.arange(0, BLOCK)
        v = metile.load(x + row * n + i, mask=i < n, other=-1e38)
        biggest = metile.maximum(biggest, v)
        total = total + metile.sum(metile.where(i < n, v, 0.0))
        count = count + 1
    metile.store(out + row * 3, total)
    metile.store(out + row * 3 + 1, metile.max(biggest))
    metile.store(out + row * 3 + 2, count.to("f32"))


@pytest.mark.parametrize("n", [1, 64, 100, 1000])
def test_tile_range_carries_and_promotes(n, rng):
    rows = 3
    x = rng.standard_normal((rows, n)).astype(np.float32)
    out = np.zeros((rows, 3), np.float32)
    loops_with_state[(rows,)](x, out, n, BLOCK=64)
    np.testing.assert_allclose(out[:, 0], x.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[:, 1], x.max(1))
    np.testing.assert_array_equal(out[:, 2], metile.cdiv(n, 64))


@metile.kernel
def nested_loops(x, out, rows, cols, BLOCK: metile.constexpr):
    acc = metile.zeros((BLOCK,), "f32")
    for r in metile.tile_range(0, rows, 1):
        for c in metile.tile_range(0, cols, BLOCK):
            i = c + metile.arange(0, BLOCK)
            acc = acc + metile.load(x + r * cols + i, mask=i < cols)
    i = metile.arange(0, BLOCK)
    metile.store(out + i, acc)


def test_nested_tile_range_loops(rng):
    rows, cols = 5, 64
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros(32, np.float32)
    nested_loops[(1,)](x, out, rows, cols, BLOCK=32)
    np.testing.assert_allclose(out, x.reshape(rows, 2, 32).sum((0, 1)), rtol=1e-5, atol=1e-5)


@metile.kernel
def constexpr_unrolling(x, out, UNROLL: metile.constexpr, SCALE: metile.constexpr):
    i = metile.arange(0, 32)
    acc = metile.zeros((32,), "f32")
    for k in range(UNROLL):  # a Python loop over a constexpr is unrolled while tracing
        acc = acc + metile.load(x + k * 32 + i)
    if SCALE != 1.0:
        acc = acc * SCALE
    metile.store(out + i, acc)


def test_constexpr_python_control_flow(rng):
    x = rng.standard_normal(4 * 32).astype(np.float32)
    out = np.zeros(32, np.float32)
    constexpr_unrolling[(1,)](x, out, UNROLL=4, SCALE=0.5)
    np.testing.assert_allclose(out, x.reshape(4, 32).sum(0) * 0.5, rtol=1e-5, atol=1e-6)


@metile.kernel(num_threads=lambda constexprs: constexprs["BLOCK"])
def threads_and_shared(x, out, BLOCK: metile.constexpr):
    scratch = metile.shared(BLOCK, "f32")
    t = metile.thread_id()
    metile.store(scratch + t, metile.load(x + t) * 2.0)
    metile.barrier()
    metile.store(out + t, metile.load(scratch + (BLOCK - 1 - t)))


def test_thread_id_shared_memory_and_barrier(rng):
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    threads_and_shared[(1,)](x, out, BLOCK=64)
    np.testing.assert_array_equal(out, (x * 2)[::-1])


@metile.kernel(num_threads=32)
def simd_collectives(x, out):
    t = metile.thread_id()
    v = metile.load(x + t)
    lane = metile.simd_lane_id()
    metile.store(out + t * 6, metile.simd_sum(v))
    metile.store(out + t * 6 + 1, metile.simd_max(v))
    metile.store(out + t * 6 + 2, metile.simd_min(v))
    metile.store(out + t * 6 + 3, metile.simd_shuffle_xor(v, 1))
    metile.store(out + t * 6 + 4, metile.simd_broadcast(v, 3))
    metile.store(out + t * 6 + 5, metile.simd_shuffle(v, 31 - lane))


def test_simd_collectives(rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = np.zeros((32, 6), np.float32)
    simd_collectives[(1,)](x, out)
    np.testing.assert_allclose(out[:, 0], x.sum(), rtol=1e-5)
    np.testing.assert_array_equal(out[:, 1], x.max())
    np.testing.assert_array_equal(out[:, 2], x.min())
    np.testing.assert_array_equal(out[:, 3], x[np.arange(32) ^ 1])
    np.testing.assert_array_equal(out[:, 4], x[3])
    np.testing.assert_array_equal(out[:, 5], x[::-1])


@metile.kernel(num_threads=64)
def shuffle_down_sum(x, out, partial):
    # A warp-shuffle reduction: after deltas 16, 8, 4, 2, 1 lane 0 holds its group's sum.
    t = metile.thread_id()
    v = metile.load(x + t)
    metile.store(partial + t, metile.simd_shuffle_down(v, 5))
    s = v
    for delta in (16, 8, 4, 2, 1):
        s = s + metile.simd_shuffle_down(s, delta)
    metile.store(out + t, s)


def test_simd_shuffle_down_reduction(rng):
    x = rng.integers(-100, 100, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    partial = np.zeros(64, np.int32)
    shuffle_down_sum[(1,)](x, out, partial)
    lane = np.arange(64) % 32
    # Lanes whose source lies past the SIMD group keep their own value (MSL does not wrap).
    np.testing.assert_array_equal(partial, np.where(lane + 5 < 32, x[(np.arange(64) + 5) % 64], x))
    np.testing.assert_array_equal(out[[0, 32]], x.reshape(2, 32).sum(axis=1))


@metile.kernel
def scalar_params(x, out, n, alpha, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK) + metile.num_programs(0) * 0
    v = metile.load(x + i, mask=i < n).to("f32")
    metile.store(out + i, v * alpha + n.to("f32"), mask=i < n)  # stored in out's dtype


@pytest.mark.parametrize("np_dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_runtime_scalars_and_storage_dtypes(np_dtype, rng):
    n = 99
    x = rng.standard_normal(n).astype(np_dtype)
    out = np.zeros(n, np_dtype)
    scalar_params[(4,)](x, out, n, 0.5, BLOCK=32)
    ref = (x.astype(np.float32) * 0.5 + n).astype(np_dtype)
    np.testing.assert_array_equal(out.astype(np.float32), ref.astype(np.float32))


@metile.kernel
def dropout_by_loaded_mask(x, keep, out, n, BLOCK: metile.constexpr):
    offsets = metile.arange(0, BLOCK)
    mask = offsets < n
    kept = metile.load(keep + offsets, mask=mask)
    values = metile.load(x + offsets, mask=mask)
    # Triton's tutorial 04: an i32 mask as where's condition (true where not zero), and the
    # tensor method cast.
    metile.store(out + offsets, metile.where(kept, values * 2, 0.0).cast(metile.float16),
                 mask=mask)


def test_where_reads_a_non_boolean_condition_as_not_zero_and_cast_is_to(rng):
    n = 37
    x = rng.standard_normal(n).astype(np.float32)
    keep = rng.integers(-2, 3, n).astype(np.int32)
    out = np.full(n, np.nan, np.float16)
    dropout_by_loaded_mask[(1,)](x, keep, out, n, BLOCK=64)
    np.testing.assert_array_equal(out, np.where(keep != 0, x * 2, 0).astype(np.float16))


@metile.kernel
def masked_histogram(x, counts, n, BINS: metile.constexpr, BLOCK: metile.constexpr):
    offsets = metile.arange(0, BLOCK)
    values = metile.load(x + offsets, mask=offsets < n, other=-1)
    metile.store(counts + metile.arange(0, BINS),
                 metile.histogram(values, BINS, mask=offsets < n))


def test_histogram_counts_in_range_values_where_the_mask_holds(rng):
    n = 50
    x = rng.integers(-3, 12, n).astype(np.int32)  # some below 0 and at or past 8: not counted
    counts = np.full(8, -1, np.int32)
    masked_histogram[(1,)](x, counts, n, BINS=8, BLOCK=64)
    np.testing.assert_array_equal(counts, np.bincount(x[(x >= 0) & (x < 8)], minlength=8))
    with pytest.raises(metile.CompilationError, match="histogram: the input must hold integers"):
        masked_histogram[(1,)](x.astype(np.float32), counts, n, BINS=8, BLOCK=64)


@metile.kernel
def pointer_from_integer(addresses, out):
    p = metile.load(addresses).to(metile.pointer_type(metile.float16))
    metile.store(out, metile.load(p))


def test_an_integer_cast_to_a_pointer_reads_there_and_a_null_one_faults():
    source = metile.Buffer(data=np.array([1.5, 2.5], np.float16))
    out = np.zeros(1, np.float16)
    pointer_from_integer[(1,)](np.array([source.data_ptr() + 2], np.int64), out)
    assert out[0] == np.float16(2.5)
    if metile.device() != "host":
        return
    with pytest.raises(metile.KernelFaultError, match="the 2-byte read at address 0x0, through "
                                                      "a pointer made from an integer, lies in "
                                                      "no live buffer"):
        pointer_from_integer[(1,)](np.zeros(1, np.int64), out)
