"""associative_scan and reduce with user-defined combine functions (single and tuple inputs,
commutative or not), join/split/interleave, against numpy on ragged sizes, inside one SIMD
group, across several and with several elements per thread."""

import numpy as np
import pytest

import metile as tl


@tl.jit
def add(a, b):
    return a + b


@tl.jit
def recurrence(a1, b1, a2, b2):
    """h = a * h_previous + b, composed: applying (a1, b1) then (a2, b2). Not commutative."""
    return a1 * a2, b1 * a2 + b2


def _reverse_scan(scan, x, axis=0):
    return np.flip(scan(np.flip(x, axis), axis), axis)


def _recurrence_reference(a, b, reverse):
    h, out = 0.0, np.zeros_like(b)
    order = range(len(a) - 1, -1, -1) if reverse else range(len(a))
    for i in order:
        h = a[i] * h + b[i]
        out[i] = h
    return out


@tl.jit
def scans_1d(x_ptr, a_ptr, b_ptr, sum_ptr, max_ptr, h_ptr, n, REVERSE: tl.constexpr,
             BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside, other=0)
    tl.store(sum_ptr + offs, tl.associative_scan(x, 0, add, reverse=REVERSE), mask=inside)
    low = tl.load(x_ptr + offs, mask=inside, other=-1000)  # the padding never wins a maximum
    tl.store(max_ptr + offs, tl.associative_scan(low, 0, tl.maximum, reverse=REVERSE),
             mask=inside)
    a = tl.load(a_ptr + offs, mask=inside, other=1.0)
    b = tl.load(b_ptr + offs, mask=inside, other=0.0)
    _, h = tl.associative_scan((a, b), 0, recurrence, reverse=REVERSE)
    tl.store(h_ptr + offs, h, mask=inside)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("block,n", [(32, 29), (256, 200), (2048, 1500)])
def test_1d_associative_scans_match_numpy(block, n, reverse, rng):
    x = rng.integers(-50, 50, n).astype(np.int32)
    a = rng.choice(np.array([0.5, 1.0, -1.0], np.float32), n)
    b = rng.integers(-4, 5, n).astype(np.float32)
    sums, maxima = np.zeros(n, np.int32), np.zeros(n, np.int32)
    h = np.zeros(n, np.float32)
    scans_1d[(1,)](x, a, b, sums, maxima, h, n, REVERSE=reverse, BLOCK=block)
    if reverse:
        np.testing.assert_array_equal(sums, _reverse_scan(np.cumsum, x))
        np.testing.assert_array_equal(maxima, _reverse_scan(np.maximum.accumulate, x))
    else:
        np.testing.assert_array_equal(sums, np.cumsum(x))
        np.testing.assert_array_equal(maxima, np.maximum.accumulate(x))
    # The scan combines in a tree, the reference in sequence: the same sums, rounded apart.
    np.testing.assert_allclose(h, _recurrence_reference(a, b, reverse), rtol=1e-5, atol=1e-5)


@tl.jit
def scan_2d(a_ptr, b_ptr, h_ptr, M, N, AXIS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    a = tl.load(a_ptr + offs, mask=inside, other=1.0)
    b = tl.load(b_ptr + offs, mask=inside, other=0.0)
    _, h = tl.associative_scan((a, b), AXIS, recurrence)
    tl.store(h_ptr + offs, h, mask=inside)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(4, 32, 3, 29), (64, 64, 50, 61)],
                         ids=lambda s: "x".join(map(str, s)))
def test_2d_associative_scan_matches_numpy(axis, shape, rng):
    bm, bn, m, n = shape
    a = rng.choice(np.array([0.5, 1.0, -1.0], np.float32), (m, n))
    b = rng.integers(-4, 5, (m, n)).astype(np.float32)
    h = np.zeros((m, n), np.float32)
    scan_2d[(1,)](a, b, h, m, n, AXIS=axis, BM=bm, BN=bn)
    expected = np.zeros_like(h)
    for line in range(n if axis == 0 else m):
        if axis == 0:
            expected[:, line] = _recurrence_reference(a[:, line], b[:, line], False)
        else:
            expected[line] = _recurrence_reference(a[line], b[line], False)
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-5)


@tl.jit
def argmax_combine(value1, index1, value2, index2):
    """Triton's argmax-style combine: the larger value, the lower index on ties."""
    take_first = (value1 > value2) | ((value1 == value2) & (index1 < index2))
    return tl.where(take_first, value1, value2), tl.where(take_first, index1, index2)


@tl.jit
def reduce_1d(x_ptr, out_ptr, index_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.reduce(tl.abs(x), 0, tl.maximum))
    best, where = tl.reduce((x, offs), 0, argmax_combine)
    tl.store(out_ptr + 1, best)
    tl.store(index_ptr, where)
    # Not commutative: the recurrence over the whole tile, in index order.
    # The padding is the recurrence's identity (a, b) = (1, 0).
    a = tl.where(offs < n, 0.5, 1.0)
    _, h = tl.reduce((a, tl.where(offs < n, (offs % 3).to(tl.float32), 0.0)), None, recurrence)
    tl.store(out_ptr + 2, h)


@pytest.mark.parametrize("block,n", [(32, 29), (256, 200), (2048, 1500)])
def test_1d_reduce_with_combine_fn(block, n, rng):
    x = rng.standard_normal(n).astype(np.float32)
    x[n // 3] = x.max()  # a tie: the first index wins (the maximum is positive: 0 pads)
    out, index = np.zeros(3, np.float32), np.zeros(1, np.int32)
    reduce_1d[(1,)](x, out, index, n, BLOCK=block)
    assert out[0] == np.abs(x).max()
    assert out[1] == x.max() and index[0] == np.argmax(x)
    h = 0.0
    for i in range(n):
        h = 0.5 * h + i % 3
    np.testing.assert_allclose(out[2], h, rtol=1e-6)


@tl.jit
def reduce_2d(x_ptr, out_ptr, M, N, AXIS: tl.constexpr, KEEP: tl.constexpr, BM: tl.constexpr,
              BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0)
    total = tl.reduce(x, AXIS, add, keep_dims=KEEP)
    if AXIS == 0:
        tl.store(out_ptr + cols[None, :] if KEEP else out_ptr + cols, total)
    else:
        tl.store(out_ptr + rows[:, None] if KEEP else out_ptr + rows, total)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(4, 32, 3, 29), (64, 64, 50, 61), (128, 16, 100, 9)],
                         ids=lambda s: "x".join(map(str, s)))
def test_2d_reduce_with_combine_fn(axis, keep, shape, rng):
    bm, bn, m, n = shape
    x = rng.integers(-100, 100, (m, n)).astype(np.int32)
    out = np.zeros(bn if axis == 0 else bm, np.int32)
    reduce_2d[(1,)](x, out, m, n, AXIS=axis, KEEP=keep, BM=bm, BN=bn)
    padded = np.zeros((bm, bn), np.int32)
    padded[:m, :n] = x
    np.testing.assert_array_equal(out, padded.sum(axis))


@tl.jit
def pairs(x_ptr, y_ptr, joined_ptr, interleaved_ptr, first_ptr, second_ptr, n,
          BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.load(y_ptr + offs, mask=offs < n)
    joined = tl.join(x, y)
    pair = tl.arange(0, 2)
    tl.store(joined_ptr + offs[:, None] * 2 + pair[None, :], joined,
             mask=(offs < n)[:, None])
    wide = tl.interleave(x, y)
    wide_offs = tl.arange(0, 2 * BLOCK)
    tl.store(interleaved_ptr + wide_offs, wide, mask=wide_offs < 2 * n)
    first, second = tl.split(joined)
    tl.store(first_ptr + offs, second, mask=offs < n)
    tl.store(second_ptr + offs, first, mask=offs < n)


@pytest.mark.parametrize("block,n", [(32, 29), (512, 300)])
def test_join_split_interleave_match_numpy(block, n, rng):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    x[0] = -0.0  # split keeps the sign of zero and NaN
    y[1] = np.nan
    joined, interleaved = np.zeros((n, 2), np.float32), np.zeros(2 * n, np.float32)
    swapped_first, swapped_second = np.zeros(n, np.float32), np.zeros(n, np.float32)
    pairs[(1,)](x, y, joined, interleaved, swapped_first, swapped_second, n, BLOCK=block)
    np.testing.assert_array_equal(joined, np.stack([x, y], axis=1))
    np.testing.assert_array_equal(interleaved, np.stack([x, y], axis=1).reshape(-1))
    np.testing.assert_array_equal(swapped_first, y)
    np.testing.assert_array_equal(swapped_second, x)
    assert np.signbit(swapped_second[0])


@tl.jit
def interleave_2d(x_ptr, y_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    wide = tl.interleave(tl.load(x_ptr + offs), tl.load(y_ptr + offs))
    tl.store(out_ptr + tl.arange(0, BM)[:, None] * (2 * BN) + tl.arange(0, 2 * BN)[None, :],
             wide)


def test_2d_interleave_matches_numpy(rng):
    x = rng.integers(0, 100, (8, 16)).astype(np.int32)
    y = rng.integers(0, 100, (8, 16)).astype(np.int32)
    out = np.zeros((8, 32), np.int32)
    interleave_2d[(1,)](x, y, out, BM=8, BN=16)
    np.testing.assert_array_equal(out, np.stack([x, y], axis=2).reshape(8, 32))


@tl.jit
def rejected(x_ptr, FORM: tl.constexpr):
    offs = tl.arange(0, 32)
    x = tl.load(x_ptr + offs)
    square = x[:, None] + x[None, :]
    forms = {
        "combine returns another dtype": lambda: tl.associative_scan(offs, 0, lambda a, b: a * 0.5),
        "combine returns too few": lambda: tl.reduce((x, offs), 0, lambda a, i, b, j: a + b),
        "inputs of two shapes": lambda: tl.reduce((x, square), 0, add),
        "join of 2-D tiles": lambda: tl.join(square, square),
        "split of a last dimension of 32": lambda: tl.split(square),
    }
    forms[FORM]()


REJECTED = {
    "combine returns another dtype": (tl.CompilationError, "metile.associative_scan: combine_fn "
                                      "must return the dtypes of its inputs: got f32 where the "
                                      "input is i32"),
    "combine returns too few": (tl.CompilationError, "metile.reduce: combine_fn must return 2 "
                                "value(s), one per input, got 1"),
    "inputs of two shapes": (tl.CompilationError, "metile.reduce: the input tiles must have one "
                             "shape, got (32,) and (32, 32)"),
    "join of 2-D tiles": (tl.NotSupportedError, "join: joining (32, 32) tiles makes a 3-D tile"),
    "split of a last dimension of 32": (tl.CompilationError, "split: the last dimension must be "
                                        "2, got shape (32, 32)"),
}


@pytest.mark.parametrize("form", sorted(REJECTED))
def test_rejected_forms_say_what_to_write(form):
    error, message = REJECTED[form]
    with pytest.raises(error) as caught:
        rejected.trace(np.zeros(32, np.float32), FORM=form)
    assert message in caught.value.rule
    assert caught.value.file == __file__


def test_a_scan_of_a_tile_smaller_than_the_threadgroup_crosses_simd_groups():
    # 64 elements on 128 threads (num_warps=4): the exchanges of bit 5 cross SIMD groups through
    # scratch, and threads 64..127 own no element. They used to read past the 64-element
    # scratch (an internal error from verify_scratch); now they read nothing.
    @tl.kernel(num_warps=4)
    def small_scan(x, out):
        offsets = tl.arange(0, 64)
        total = tl.associative_scan(tl.load(x + offsets), 0, lambda a, b: a + b)
        tl.store(out + offsets, total)

    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    small_scan[(1,)](x, out)
    np.testing.assert_array_equal(out, np.cumsum(x))
