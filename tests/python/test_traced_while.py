"""`while` loops on traced conditions, as Triton compiles them to `scf.while`
(python/metile/loops.py run_while, source_rewrite.py): each form run on the default device
against numpy, and each error asserted with its message."""

import re

import numpy as np
import pytest

import metile
import metile as tl


# ---- a counting loop: carried scalars that start as Python numbers, a run-time bound --------


@tl.jit
def count_up(n_ptr, step_ptr, out_ptr):
    pid = tl.program_id(0)
    n = tl.load(n_ptr + pid)
    step = tl.load(step_ptr + pid)
    i = 0
    total = 0
    trips = 0
    while i < n:
        total += i
        i += step
        trips += 1
    tl.store(out_ptr + pid * 3, total)
    tl.store(out_ptr + pid * 3 + 1, trips)
    tl.store(out_ptr + pid * 3 + 2, i)


def test_counting_loop_with_carried_scalars(rng):
    programs = 9
    n = rng.integers(-3, 40, programs).astype(np.int32)
    step = rng.integers(1, 6, programs).astype(np.int32)
    out = np.zeros((programs, 3), np.int32)
    count_up[(programs,)](n, step, out)
    for p in range(programs):
        visited = np.arange(0, max(int(n[p]), 0), int(step[p]))
        end = visited[-1] + step[p] if len(visited) else 0
        assert out[p].tolist() == [visited.sum(), len(visited), end], p


# ---- a condition that reads memory ------------------------------------------------------------


@tl.jit
def first_at_least(x_ptr, out_ptr, n, threshold):
    row = tl.program_id(0)
    i = 0
    while i < n and tl.load(x_ptr + row * n + i, mask=i < n, other=threshold) < threshold:
        i += 1
    tl.store(out_ptr + row, i)


def test_condition_reads_memory(rng):
    rows, n = 7, 23
    x = rng.standard_normal((rows, n)).astype(np.float32)
    x[3] = -5.0  # never reaches the threshold: the loop runs to n
    out = np.full(rows, -1, np.int32)
    first_at_least[(rows,)](x, out, n, 1.25)
    expected = [int(np.argmax(r >= 1.25)) if (r >= 1.25).any() else n for r in x]
    assert out.tolist() == expected


# ---- the layer-norm tutorial's spin lock --------------------------------------------------------


@tl.jit
def locked_increment(lock_ptr, value_ptr, x_ptr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    v = tl.load(value_ptr)  # a non-atomic read-modify-write, safe under the lock
    # Work between the read and the write: without the lock, other programs would read the
    # same value meanwhile (on the host emulator, 256 such programs lose about half the
    # updates).
    s = 0.0
    for i in range(200):
        s += tl.sum(tl.load(x_ptr + lanes), axis=0)
    tl.store(value_ptr, v + 1 + (s * 0.0).to(tl.int32))
    tl.atomic_xchg(lock_ptr, 0)


def test_spin_lock_serialises_programs():
    # The host emulator runs threadgroups in parallel on a worker pool (one worker per core),
    # so programs contend for the lock; a lost update would leave fewer than 256.
    lock = np.zeros(1, np.int32)
    value = np.zeros(1, np.int32)
    locked_increment[(256,)](lock, value, np.ones(64, np.float32), BLOCK=64)
    assert value[0] == 256
    assert lock[0] == 0


def while_ops(kernel):
    """The Tile IR's while and atomic_cas ops, in text order."""
    ops = [re.match(r"\s*(?:%[%\w, ]+ = )?(\w*)", line).group(1)
           for line in str(kernel).splitlines()]
    return [op for op in ops if op in ("while", "atomic_cas")]


def test_spin_lock_loop_is_a_tile_ir_while():
    kernel = locked_increment.trace(np.zeros(1, np.int32), np.zeros(1, np.int32),
                                    np.ones(64, np.float32), BLOCK=64)
    assert while_ops(kernel) == ["while", "atomic_cas"]  # the atomic in the condition region


# ---- tutorial 08's loop: `and` of two comparisons, inside a range loop -------------------------


@tl.jit
def grouped_tiles(sizes_ptr, out_ptr, group_size, NUM_SM: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        num_tiles = tl.load(sizes_ptr + g)
        while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
            local = tile_idx - last_problem_end
            tl.store(out_ptr + tile_idx, g * 1000 + local)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def test_tutorial_08_while_inside_a_for(rng):
    sizes = np.array([3, 0, 7, 1, 5], np.int32)
    out = np.full(int(sizes.sum()), -1, np.int32)
    grouped_tiles[(4,)](sizes, out, len(sizes), NUM_SM=4)
    expected = np.concatenate([g * 1000 + np.arange(s) for g, s in enumerate(sizes)])
    np.testing.assert_array_equal(out, expected)


# ---- a for loop and tiles inside a while --------------------------------------------------------


@tl.jit
def rows_until(x_ptr, out_ptr, rows_ptr, n_rows, n_cols, limit, BLOCK: tl.constexpr):
    # Sums whole rows until the total reaches the limit; carries a tile and two scalars.
    cols = tl.arange(0, BLOCK)
    row = 0
    total = 0.0
    seen = tl.zeros([BLOCK], dtype=tl.float32)
    while row < n_rows and total < limit:
        for c in range(0, n_cols, BLOCK):
            x = tl.load(x_ptr + row * n_cols + c + cols, mask=c + cols < n_cols, other=0.0)
            total += tl.sum(x, axis=0)
            seen = tl.maximum(seen, x)
        row += 1
    tl.store(out_ptr, total)
    tl.store(rows_ptr, row)
    tl.store(out_ptr + 1 + cols, seen)


def test_for_loop_and_tiles_inside_a_while(rng):
    n_rows, n_cols, block = 9, 70, 32
    x = rng.uniform(0, 1, (n_rows, n_cols)).astype(np.float32)
    limit = float(x[:4].sum()) - 1.0  # reached after the 4th row
    out = np.zeros(1 + block, np.float32)
    rows = np.zeros(1, np.int32)
    rows_until[(1,)](x, out, rows, n_rows, n_cols, limit, BLOCK=block)
    assert rows[0] == 4
    np.testing.assert_allclose(out[0], x[:4].sum(), rtol=1e-5)
    padded = np.zeros((4, 3 * block), np.float32)
    padded[:, :n_cols] = x[:4]
    np.testing.assert_allclose(out[1:], padded.reshape(4, 3, block).max(axis=(0, 1)))


@tl.jit
def nested_whiles(out_ptr, n):
    # Triangular numbers: a while inside a while, each with its own carried counter.
    i = 0
    total = 0
    while i < n:
        j = 0
        while j <= i:
            total += j
            j += 1
        i += 1
    tl.store(out_ptr, total)


def test_while_inside_a_while():
    out = np.zeros(1, np.int32)
    nested_whiles[(1,)](out, 6)
    assert out[0] == sum(j for i in range(6) for j in range(i + 1))


# ---- per-thread conditions ----------------------------------------------------------------------


@metile.kernel(num_threads=64)
def collatz_steps(x, out):
    t = metile.thread_id()
    v = metile.load(x + t)
    steps = 0
    while v != 1:
        v = metile.where(v % 2 == 0, v // 2, 3 * v + 1)
        steps += 1
    metile.store(out + t, steps)


def test_per_thread_condition_runs_per_thread_scalar_code(rng):
    x = rng.integers(1, 200, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    collatz_steps[(1,)](x, out)

    def steps(v):
        n = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            n += 1
        return n
    assert out.tolist() == [steps(int(v)) for v in x]


@tl.jit
def per_thread_tiles(x_ptr):
    i = tl.thread_id()
    while i < 5:
        tl.store(x_ptr + tl.arange(0, 64), 1.0)
        i += 1


# ---- Python conditions still run while tracing ------------------------------------------------


@tl.jit
def halvings(out_ptr, BLOCK: tl.constexpr):
    n = BLOCK
    count = 0
    while n > 1:  # a constexpr condition: unrolled while tracing
        n //= 2
        count += 1
    tl.store(out_ptr, count)


def test_python_condition_runs_while_tracing():
    out = np.zeros(1, np.int32)
    halvings[(1,)](out, BLOCK=64)
    assert out[0] == 6
    assert while_ops(halvings.trace(out, BLOCK=64)) == []


# ---- errors -------------------------------------------------------------------------------------

X = np.zeros(64, np.float32)


@tl.jit
def break_in_while(x_ptr, n):
    i = tl.program_id(0)
    while i < n:
        i += 1
        if i == 3:
            break


@tl.jit
def continue_in_while(x_ptr, n):
    i = tl.program_id(0)
    while i < n:
        i += 1
        continue


@tl.jit
def tile_condition(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    while x > 0:
        x -= 1.0


@tl.jit
def carried_type_change(x_ptr, n):
    y = tl.load(x_ptr)
    i = 0
    while i < n:
        y = tl.arange(0, 64)
        i += 1


@tl.jit
def carried_dtype_change(x_ptr, n):
    y = tl.load(x_ptr)
    while y < n:
        y = n


def test_break_and_continue_are_rejected_naming_the_line():
    with pytest.raises(metile.NotSupportedError,
                       match=r"a `while` loop on a traced condition \(line \d+\) with `break` in "
                             r"its body is not supported") as e:
        break_in_while.trace(X, 5)
    assert e.value.line == break_in_while.fn.__code__.co_firstlineno + 3
    with pytest.raises(metile.NotSupportedError, match=r"with `continue` in its body"):
        continue_in_while.trace(X, 5)


def test_condition_must_be_a_scalar():
    with pytest.raises(metile.CompilationError,
                       match=r"while: the condition `x > 0` is a tile<64xi1>, not a scalar"):
        tile_condition.trace(X)


def test_carried_value_keeps_its_type():
    with pytest.raises(metile.CompilationError,
                       match=r"while: loop-carried variable 'y' changes type from f32 to "
                             r"tile<64xi32> in the loop body"):
        carried_type_change.trace(X, 5)
    with pytest.raises(metile.CompilationError,
                       match=r"while: loop-carried variable 'y' changes type from f32 to i32"):
        carried_dtype_change.trace(X, 5)


def test_per_thread_condition_rejects_tile_code():
    with pytest.raises(metile.CompilationError,
                       match=r"while: the loop condition %\d+ differs between threads \(it derives "
                             r"from thread_id\), so the loop may hold only per-thread scalar code"):
        per_thread_tiles[(1,)](X)
