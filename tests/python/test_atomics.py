"""Triton's tl.atomic_* on the default device: the updates against numpy, under contention
(many programs and threads on one address), masks, the old values they return, and the
errors for what is not supported."""

import numpy as np
import pytest

import metile
import metile as tl


@metile.kernel
def _histogram(x, bins, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    value = tl.load(x + offs, mask=mask, other=0)
    tl.atomic_add(bins + value % NUM_BINS, 1, mask=mask)


def test_a_histogram_under_contention(rng):
    # 8 programs of 128 threads add into 16 bins: every bin is hit by many threads at once.
    n = 1000
    x = rng.integers(0, 1 << 20, n).astype(np.int32)
    bins = np.zeros(16, np.int32)
    _histogram[(metile.cdiv(n, 128),)](x, bins, n, NUM_BINS=16, BLOCK=128)
    np.testing.assert_array_equal(bins, np.bincount(x % 16, minlength=16))


@metile.kernel
def _sum_into_one(x, total, old, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    previous = tl.atomic_add(total + tl.zeros([BLOCK], dtype=tl.int32), tl.load(x + offs,
                             mask=mask, other=0.0), mask=mask, sem="relaxed")
    tl.store(old + offs, previous, mask=mask)


def test_float_adds_into_one_address_return_distinct_old_values():
    # Every element is 1.0: the old values are 0, 1, ..., n - 1 in some order.
    n = 300
    x = np.ones(n, np.float32)
    total, old = np.zeros(1, np.float32), np.full(n, -1, np.float32)
    _sum_into_one[(metile.cdiv(n, 64),)](x, total, old, n, BLOCK=64)
    assert total[0] == n
    np.testing.assert_array_equal(np.sort(old), np.arange(n, dtype=np.float32))


@metile.kernel
def _integer_updates(out, old, values, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(values + offs)
    at = out + offs % 4  # four addresses, each updated by BLOCK / 4 threads
    if KIND == "max":
        previous = tl.atomic_max(at, v)
    elif KIND == "min":
        previous = tl.atomic_min(at, v)
    elif KIND == "and":
        previous = tl.atomic_and(at, v)
    elif KIND == "or":
        previous = tl.atomic_or(at, v)
    elif KIND == "xor":
        previous = tl.atomic_xor(at, v)
    else:
        previous = tl.atomic_xchg(at, v)
    tl.store(old + offs, previous)


@pytest.mark.parametrize("kind,reduce", [
    ("max", np.maximum.reduce), ("min", np.minimum.reduce), ("and", np.bitwise_and.reduce),
    ("or", np.bitwise_or.reduce), ("xor", np.bitwise_xor.reduce), ("xchg", None)])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_integer_read_modify_writes(kind, reduce, dtype, rng):
    values = rng.integers(0, 1 << 30, 64).astype(dtype)
    if dtype == np.int32:
        values[::3] = -values[::3]
    start = np.array([5, -7 if dtype == np.int32 else 7, 0, 12345], dtype=dtype)
    out, old = start.copy(), np.zeros(64, dtype)
    _integer_updates[(1,)](out, old, values, KIND=kind, BLOCK=64)
    for a in range(4):
        mine = values[a::4]
        if reduce is None:  # the last exchange wins; every other value was an old value
            seen = set(old[a::4].tolist()) | {int(out[a])}
            assert seen == set(mine.tolist()) | {int(start[a])}
        else:
            assert out[a] == reduce(np.concatenate([[start[a]], mine]))


@metile.kernel
def _first_claim(owner, claims, BLOCK: tl.constexpr):
    # Every thread tries to claim slot 0 with its id + 1: exactly one succeeds.
    me = tl.arange(0, BLOCK) + 1
    previous = tl.atomic_cas(owner + tl.zeros([BLOCK], dtype=tl.int32), 0, me)
    tl.store(claims + tl.arange(0, BLOCK), (previous == 0).to(tl.int32))


def test_compare_and_swap_lets_one_thread_win():
    owner, claims = np.zeros(1, np.int32), np.zeros(128, np.int32)
    _first_claim[(1,)](owner, claims, BLOCK=128)
    assert claims.sum() == 1
    assert owner[0] == np.flatnonzero(claims)[0] + 1


@metile.kernel
def _float_and(x, BLOCK: tl.constexpr):
    tl.atomic_and(x + tl.arange(0, BLOCK), 1.0)


@metile.kernel
def _bad_sem(x, BLOCK: tl.constexpr):
    tl.atomic_add(x + tl.arange(0, BLOCK), 1, sem="seq_cst")


def test_what_atomics_do_not_take_is_an_error_naming_it():
    with pytest.raises(metile.NotSupportedError, match="atomic_and: atomics take int32 or "
                                                       "uint32 elements, and float32 ones add, "
                                                       "exchange and take maxima and minima"):
        _float_and[(1,)](np.zeros(16, np.float32), BLOCK=16)
    with pytest.raises(metile.CompilationError, match="atomic_add: sem must be one of acq_rel, "
                                                      "acquire, release, relaxed, got 'seq_cst'"):
        _bad_sem[(1,)](np.zeros(16, np.int32), BLOCK=16)


@metile.jit
def ticket_and_double(counter, tickets, cells, BLOCK: tl.constexpr):
    # A scalar atomic and a scalar read-modify-write are the program's, as in Triton: one
    # thread does each for all of the program's threads, and every thread sees the old value.
    pid = tl.program_id(0)
    ticket = tl.atomic_add(counter, 1)
    tl.store(tickets + pid * BLOCK + tl.arange(0, BLOCK), tl.full([BLOCK], 0, tl.int32) + ticket)
    value = tl.load(cells + pid)
    tl.store(cells + pid, value * 2 + 1)


def test_scalar_atomics_and_stores_happen_once_per_program():
    programs, block = 6, 128
    counter = np.zeros(1, np.int32)
    tickets = np.full(programs * block, -1, np.int32)
    cells = np.arange(programs, dtype=np.int32)
    ticket_and_double[(programs,)](counter, tickets, cells, BLOCK=block, num_warps=4)
    assert counter[0] == programs
    per_program = tickets.reshape(programs, block)
    assert (per_program == per_program[:, :1]).all()  # every thread got the program's ticket
    assert sorted(per_program[:, 0]) == list(range(programs))
    np.testing.assert_array_equal(cells, np.arange(programs) * 2 + 1)


@metile.jit
def float_extremes(x, largest, smallest, olds, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(x + offsets, mask=mask, other=0.0)
    olds_max = tl.atomic_max(largest + offsets % 4, values, mask=mask)
    tl.atomic_min(smallest + offsets % 4, values, mask=mask)
    tl.store(olds + offsets, olds_max, mask=mask)


def test_float_atomic_max_and_min_order_negatives_and_signed_zeros(rng):
    # f32 max/min through the integer atomics (sign bit clear: signed bits; set: unsigned bits
    # in reverse), under contention: 1000 values from 8 programs on 4 addresses.
    n = 1000
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    x[::97] = -0.0
    largest = np.array([-np.inf, -5.0, -0.0, 0.0], np.float32)
    smallest = np.array([np.inf, 5.0, 0.0, -0.0], np.float32)
    olds = np.full(n, np.nan, np.float32)
    want_max = np.maximum(largest, [x[i::4].max() for i in range(4)])
    want_min = np.minimum(smallest, [x[i::4].min() for i in range(4)])
    float_extremes[(metile.cdiv(n, 128),)](x, largest, smallest, olds, n, BLOCK=128)
    np.testing.assert_array_equal(largest, want_max)
    np.testing.assert_array_equal(smallest, want_min)
    assert np.all(olds <= largest[np.arange(n) % 4])  # each old value was a running maximum


@metile.jit
def signed_zero_max(out, value):
    tl.atomic_max(out, value)


def test_float_atomic_max_of_zeros_takes_the_positive_one():
    out = np.array([-0.0], np.float32)
    signed_zero_max[(1,)](out, 0.0)
    assert out[0] == 0.0 and not np.signbit(out[0])
    out = np.array([-1.0], np.float32)
    signed_zero_max[(1,)](out, -0.0)
    assert out[0] == 0.0 and np.signbit(out[0])
