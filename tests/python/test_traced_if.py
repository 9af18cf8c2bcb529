"""Python `if`/`elif`/`else`, conditional expressions, `and`/`or`/`not` and early `return` on
traced values, as Triton compiles them (python/metile/branches.py, source_rewrite.py): each
form run on the default device against numpy, and each error asserted with its message."""

import numpy as np
import pytest

import metile
import metile as tl
import metile as triton


# ---- the brief's kernel: an early return, `and` in a condition ---------------------------


@triton.jit
def ignore_or_double(x_ptr, out_ptr, n, ignore_index):
    i = tl.program_id(0)
    label = tl.load(x_ptr + i)
    if label == ignore_index:
        tl.store(out_ptr + i, 0)
        return
    if i < n and label > 0:
        y = label * 2
    else:
        y = label
    tl.store(out_ptr + i, y)


def test_early_return_and_and(rng):
    x = rng.integers(-5, 6, 37).astype(np.int32)
    x[::4] = -100
    out = np.full(37, 7, np.int32)
    expected = np.where(x == -100, 0, np.where((np.arange(37) < 29) & (x > 0), x * 2, x))
    ignore_or_double[(37,)](x, out, 29, -100)
    np.testing.assert_array_equal(out, expected)


# ---- branches with tile loads, stores and a reduction, ragged rows ------------------------


@triton.jit
def row_sums(x_ptr, flags_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:  # the grid has more programs than rows
        return
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    flag = tl.load(flags_ptr + row)
    if flag > 0:
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        total = tl.sum(x, axis=0)
        tl.store(x_ptr + row * n_cols + cols, x * 2, mask=mask)
    elif flag == 0:
        total = -1.0
    else:
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
        total = tl.max(x, axis=0)
    tl.store(out_ptr + row, total)


def test_branches_with_tiles_and_reductions(rng):
    rows, cols = 13, 45
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    flags = rng.integers(-1, 2, rows).astype(np.int32)
    out = np.zeros(rows, np.float32)
    before = x.copy()
    row_sums[(16,)](x, flags, out, rows, cols, BLOCK=64)
    expected = np.where(flags > 0, before.sum(1), np.where(flags == 0, -1.0, before.max(1)))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x, np.where(flags[:, None] > 0, before * 2, before), rtol=0)


@triton.jit
def tile_result(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if pid % 3 == 0:
        y = x * 2.0
    elif pid % 3 == 1:
        y = x + 1.0
    else:
        y = -x
    tl.store(out_ptr + offs, y, mask=mask)


def test_tile_results_per_program(rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    tile_result[(metile.cdiv(n, 128),)](x, out, n, BLOCK=128)
    pid = np.arange(n) // 128
    expected = np.where(pid % 3 == 0, x * 2, np.where(pid % 3 == 1, x + 1, -x))
    np.testing.assert_array_equal(out, expected)


# ---- elif chains, conditional expressions, Python numbers taking the other side's type ----


@triton.jit
def buckets(x_ptr, out_ptr, scaled_ptr, scaled_out_ptr):
    i = tl.program_id(0)
    v = tl.load(x_ptr + i)
    if v < 0:
        b = 0
    elif v < 10:
        b = 1
    elif v < 100:
        b = 2
    else:
        b = 3
    tl.store(out_ptr + i, b)
    # A Python float against an f16 value: the if's result is f16.
    if v % 2 == 0:
        half = 0.5
    else:
        half = tl.load(scaled_ptr + i)
    tl.store(scaled_out_ptr + i, half * 2)


TRACED_BRANCHES = []


def traced_once():
    TRACED_BRANCHES.append(1)  # runs while the branch is traced
    return 12


@triton.jit
def long_elif_chain(x_ptr, out_ptr):
    i = tl.program_id(0)
    v = tl.load(x_ptr + i)
    if v < 1:
        b = 1
    elif v < 2:
        b = 2
    elif v < 3:
        b = 3
    elif v < 4:
        b = 4
    elif v < 5:
        b = 5
    elif v < 6:
        b = 6
    elif v < 7:
        b = 7
    elif v < 8:
        b = 8
    elif v < 9:
        b = 9
    elif v < 10:
        b = 10
    elif v < 11:
        b = 11
    else:
        b = traced_once()
    tl.store(out_ptr + i, b)


def test_long_elif_chain_traces_each_branch_once():
    x = np.arange(-1, 13, dtype=np.int32)
    out = np.zeros_like(x)
    long_elif_chain.trace(x, out)
    assert len(TRACED_BRANCHES) == 1  # numbers of one type: no branch traced again
    long_elif_chain[(14,)](x, out)
    np.testing.assert_array_equal(out, np.clip(x + 1, 1, 12))


def test_elif_chain_and_number_promotion(rng):
    x = rng.integers(-50, 300, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    scaled = rng.standard_normal(64).astype(np.float16)
    scaled_out = np.zeros(64, np.float16)
    buckets[(64,)](x, out, scaled, scaled_out)
    np.testing.assert_array_equal(out, np.digitize(x, [0, 10, 100]))
    np.testing.assert_array_equal(scaled_out,
                                  np.where(x % 2 == 0, np.float16(1.0), scaled * np.float16(2)))
    ir = str(buckets.trace(x, out, scaled, scaled_out))
    assert ": f16 {" in ir  # the promoted if yields f16


@triton.jit
def conditional_expression(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = x * 2 if pid % 2 == 0 else x - 1
    scale = tl.load(x_ptr + pid * BLOCK) if pid > 0 else 0.0  # the load runs only for pid > 0
    tl.store(out_ptr + offs, y + scale)


def test_conditional_expression(rng):
    x = rng.standard_normal(4 * 32).astype(np.float32)
    out = np.zeros_like(x)
    conditional_expression[(4,)](x, out, BLOCK=32)
    pid = np.arange(x.size) // 32
    scale = np.where(pid > 0, x[pid * 32], 0)
    np.testing.assert_allclose(out, np.where(pid % 2 == 0, x * 2, x - 1) + scale, rtol=1e-6)


# ---- and / or / not -----------------------------------------------------------------------


@triton.jit
def logic(a_ptr, b_ptr, out_ptr, tiles_ptr, BLOCK: tl.constexpr, USE_B: tl.constexpr):
    i = tl.program_id(0)
    a = tl.load(a_ptr + i)
    b = tl.load(b_ptr + i)
    flag = (a > 0 and b > 0) or not a < -2
    # A Python left side short-circuits: the right side is not traced when USE_B is False.
    if USE_B and b > 5:
        flag = flag and b % 2 == 0
    both = a and b  # integers: their truth values
    tl.store(out_ptr + 2 * i, flag.to(tl.int32))
    tl.store(out_ptr + 2 * i + 1, both.to(tl.int32))
    offs = tl.arange(0, BLOCK)
    t = tl.load(tiles_ptr + i * BLOCK + offs)
    inside = (t > 0) and (t < 10) or not (t != -5)  # elementwise on tiles
    tl.store(tiles_ptr + i * BLOCK + offs, tl.where(inside, 1, 0))


@pytest.mark.parametrize("use_b", [False, True])
def test_and_or_not(rng, use_b):
    n = 48
    a = rng.integers(-4, 4, n).astype(np.int32)
    b = rng.integers(-2, 9, n).astype(np.int32)
    tiles = rng.integers(-6, 12, (n, 16)).astype(np.int32)
    out = np.zeros(2 * n, np.int32)
    expected_tiles = ((tiles > 0) & (tiles < 10)) | (tiles == -5)
    logic[(n,)](a, b, out, tiles, BLOCK=16, USE_B=use_b)
    flag = ((a > 0) & (b > 0)) | ~(a < -2)
    if use_b:
        flag = np.where(b > 5, flag & (b % 2 == 0), flag)
    np.testing.assert_array_equal(out[0::2], flag)
    np.testing.assert_array_equal(out[1::2], (a != 0) & (b != 0))
    np.testing.assert_array_equal(tiles, expected_tiles)


# ---- loops: a branch updating carried values, loops inside branches -----------------------


@triton.jit
def running_max(x_ptr, out_ptr, n):
    row = tl.program_id(0)
    m = -1e38
    where_max = -1
    count = 0
    for j in range(0, n):
        x = tl.load(x_ptr + row * n + j)
        if x > m:
            m = x
            where_max = j
        if x > 0 and j % 2 == 0:
            count += 1
    tl.store(out_ptr + 3 * row, m)
    tl.store(out_ptr + 3 * row + 1, where_max.to(tl.float32))
    tl.store(out_ptr + 3 * row + 2, count.to(tl.float32))


def test_carried_values_updated_in_a_branch(rng):
    rows, n = 5, 23
    x = rng.standard_normal((rows, n)).astype(np.float32)
    out = np.zeros(3 * rows, np.float32)
    running_max[(rows,)](x, out, n)
    np.testing.assert_array_equal(out[0::3], x.max(1))
    np.testing.assert_array_equal(out[1::3], x.argmax(1))
    np.testing.assert_array_equal(out[2::3], ((x > 0) & (np.arange(n) % 2 == 0)).sum(1))


@triton.jit
def loop_in_branch(x_ptr, lengths_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    length = tl.load(lengths_ptr + row)
    offs = tl.arange(0, BLOCK)
    if length > 0:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, length, BLOCK):
            mask = start + offs < length
            v = tl.load(x_ptr + row * 256 + start + offs, mask=mask, other=0.0)
            if start == 0:  # a branch inside the loop inside the branch
                v = v * 10.0
            acc += v
        total = tl.sum(acc, axis=0)
    else:
        total = 0.0
    tl.store(out_ptr + row, total)


def test_loop_inside_a_branch(rng):
    x = rng.standard_normal((6, 256)).astype(np.float32)
    lengths = np.array([0, 1, 31, 32, 100, 256], np.int32)
    out = np.ones(6, np.float32)
    loop_in_branch[(6,)](x, lengths, out, BLOCK=32)
    expected = [x[r, :n].sum() + 9 * x[r, :min(n, 32)].sum() for r, n in enumerate(lengths)]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


# ---- early returns: nested, in an else-branch, in a @jit helper -------------------------


@triton.jit
def clamp_low(v, low):
    if v < low:
        return low
    return v


@triton.jit
def nested_returns(x_ptr, out_ptr, n):
    i = tl.program_id(0)
    v = tl.load(x_ptr + i)
    if i < n:
        if v < 0:
            tl.store(out_ptr + i, -1)
            return
        tl.store(out_ptr + i, 1)  # runs when i < n and v >= 0
    else:
        tl.store(out_ptr + i, clamp_low(v, 3))
        return
    tl.store(out_ptr + i + 64, v * 10)  # runs only when i < n and v >= 0


def test_nested_early_returns_and_helper_return_value(rng):
    x = rng.integers(-5, 6, 64).astype(np.int32)
    out = np.zeros(128, np.int32)
    nested_returns[(64,)](x, out, 40)
    i = np.arange(64)
    first = np.where(i < 40, np.where(x < 0, -1, 1), np.maximum(x, 3))
    np.testing.assert_array_equal(out[:64], first)
    np.testing.assert_array_equal(out[64:], np.where((i < 40) & (x >= 0), x * 10, 0))


# ---- tuples and block pointers as results; Liger's cross entropy ---------------------------


@triton.jit
def structured_results(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    pair = (i, 1)
    if i < n:
        pair = (i * 2, 3)
    block = tl.make_block_ptr(x_ptr, (4 * BLOCK,), (1,), (0,), (BLOCK,), (0,))
    if i % 2 == 1:
        block = tl.advance(block, (BLOCK,))
    values = tl.load(block, boundary_check=(0,))
    tl.store(out_ptr + i * BLOCK + tl.arange(0, BLOCK), values + pair[0] + pair[1])


def test_tuple_and_block_pointer_results():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(4 * 16, np.float32)
    structured_results[(4,)](x, out, 3, BLOCK=16)
    i = np.arange(4)
    pair = np.where(i < 3, i * 2 + 3, i + 1)
    expected = x[(i % 2)[:, None] * 16 + np.arange(16)] + pair[:, None]
    np.testing.assert_array_equal(out.reshape(4, 16), expected)


def test_liger_cross_entropy_with_ignored_rows(rng):
    # The corpus kernel as Liger writes it: a row whose target is ignore_index zeroes its
    # gradient in a device loop and returns early; the other rows run the online softmax.
    from triton_corpus.load import load

    module, edits = load("cross_entropy", "metile")
    assert edits == []
    rows, cols, ignore = 7, 100, -100
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = rng.integers(0, cols, rows).astype(np.int32)
    y[[2, 5]] = ignore
    kept = y != ignore
    grad, loss = x.copy(), np.zeros(rows, np.float32)
    module.liger_cross_entropy_kernel[(rows,)](grad, cols, y, 1, loss, 1, cols, int(kept.sum()),
                                               ignore, label_smoothing=0.0, reduction="sum",
                                               BLOCK_SIZE=32)
    x64 = x.astype(np.float64)
    lse = np.log(np.exp(x64 - x64.max(1, keepdims=True)).sum(1)) + x64.max(1)
    target = np.take_along_axis(x64, np.where(kept, y, 0)[:, None], 1)[:, 0]
    np.testing.assert_allclose(loss, np.where(kept, lse - target, 0), rtol=1e-5, atol=1e-5)
    softmax = np.exp(x64 - lse[:, None])
    # The target entries are a scalar load, add and store: one thread of the program does the
    # store (scalar stores are the program's), so the gradient is softmax - onehot everywhere.
    onehot = np.zeros_like(x64)
    onehot[np.arange(rows)[kept], y[kept]] = 1.0
    np.testing.assert_allclose(grad, np.where(kept[:, None], softmax - onehot, 0), rtol=1e-5,
                               atol=1e-6)


# ---- Python conditions still run while tracing -----------------------------------------------


@triton.jit
def constexpr_branch(x_ptr, BLOCK: tl.constexpr, BIG: tl.constexpr):
    if BIG:
        offs = tl.arange(0, 3)  # not a power of two: an error, were it traced
    else:
        offs = tl.arange(0, BLOCK)
        only_here = 2.0
    if x_ptr is not None and BLOCK > 8:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * only_here)  # visible: Python's rule
    if not BIG:
        return
    tl.store(x_ptr, 0.0)


def test_python_conditions_run_while_tracing():
    x = np.arange(16, dtype=np.float32)
    constexpr_branch[(1,)](x, BLOCK=16, BIG=False)
    np.testing.assert_array_equal(x, np.arange(16) * 2)
    assert " if %" not in str(constexpr_branch.trace(x, BLOCK=16, BIG=False))


# ---- errors --------------------------------------------------------------------------------


X = np.zeros(64, np.float32)


@tl.jit
def mismatched_dtypes(x_ptr, n):
    offs = tl.arange(0, 64)
    if n > 0:
        y = tl.load(x_ptr + offs)
    else:
        y = offs
    tl.store(x_ptr + offs, y)


@tl.jit
def mismatched_shapes(x_ptr, n):
    if n > 0:
        y = tl.load(x_ptr + tl.arange(0, 64))
    else:
        y = tl.load(x_ptr + tl.arange(0, 32))
    tl.store(x_ptr, tl.sum(y, axis=0))


@tl.jit
def changes_initial_type(x_ptr, n):
    y = tl.zeros([64], dtype=tl.float32)
    if n > 0:
        y = tl.arange(0, 64)
    tl.store(x_ptr + tl.arange(0, 64), y)


@tl.jit
def one_branch_only(x_ptr, n):
    if n > 0:
        z = 1.0
    tl.store(x_ptr, z)


@tl.jit
def tile_condition(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    if x > 0:
        tl.store(x_ptr, 1.0)


@tl.jit
def per_thread_tiles(x_ptr):
    if tl.thread_id() < 5:
        tl.store(x_ptr + tl.arange(0, 64), 1.0)


@tl.jit
def break_in_branch(x_ptr, n):
    for i in tl.static_range(4):
        if n > i:
            break


@tl.jit
def and_of_a_function(x_ptr, n):
    tl.store(x_ptr, tl.where(n > 1 and tl.load, 1.0, 0.0))


@tl.jit
def traced_while(x_ptr, n):
    i = tl.program_id(0)
    while i < n:
        i += 1
        if i > 3:
            continue


@tl.jit
def return_in_loop(x_ptr, n):
    for i in tl.range(0, n):
        if tl.load(x_ptr + i) > 0:
            return


@tl.jit
def return_without_value(x_ptr, n):
    tl.store(x_ptr, positive_or_nothing(n))


@tl.jit
def positive_or_nothing(n):
    if n > 0:
        return n


def test_branch_type_errors():
    with pytest.raises(metile.CompilationError,
                       match=r"mismatched type for variable 'y' between the then-branch "
                             r"\(tile<64xf32>\) and the else-branch \(tile<64xi32>\)") as e:
        mismatched_dtypes.trace(X, 1)
    assert e.value.line == mismatched_dtypes.fn.__code__.co_firstlineno + 3  # the `if`
    with pytest.raises(metile.CompilationError,
                       match=r"mismatched type for variable 'y' between the then-branch "
                             r"\(tile<64xf32>\) and the else-branch \(tile<32xf32>\)"):
        mismatched_shapes.trace(X, 1)
    with pytest.raises(metile.CompilationError,
                       match=r"the initial value of variable 'y' is tile<64xf32>, but the "
                             r"then-branch redefines it as tile<64xi32>"):
        changes_initial_type.trace(X, 1)
    with pytest.raises(metile.CompilationError,
                       match=r"mismatched type for the return value between the then-branch "
                             r"\(i32\) and the else-branch \(NoneType None\)"):
        return_without_value.trace(X, 1)


def test_name_assigned_in_one_branch_is_not_visible_after():
    with pytest.raises(NameError, match="'z'"):
        one_branch_only.trace(X, 1)


def test_control_flow_errors():
    with pytest.raises(metile.CompilationError,
                       match=r"if: the condition `x > 0` is a tile<64xi1>, not a scalar"):
        tile_condition.trace(X)
    with pytest.raises(metile.NotSupportedError,
                       match=r"a `while` loop on a traced condition \(line \d+\) with "
                             r"`continue` in its body is not supported") as e:
        traced_while.trace(X, 5)
    assert e.value.line == traced_while.fn.__code__.co_firstlineno + 3
    with pytest.raises(metile.CompilationError,
                       match=r"'return' cannot be used in a tile_range loop body"):
        return_in_loop.trace(X, 5)
    with pytest.raises(metile.CompilationError,
                       match=r"a Python `if` on a traced value with `break` in a branch"):
        break_in_branch.trace(X, 2)
    with pytest.raises(metile.CompilationError,
                       match=r"and: `and` of a traced value needs traced values or numbers on "
                             r"both sides, got function on the right"):
        and_of_a_function.trace(X, 2)
    with pytest.raises(metile.CompilationError,
                       match=r"if: the condition %\d+ differs between threads \(it derives from "
                             r"thread_id\), so the branches may hold only per-thread scalar code"):
        per_thread_tiles[(1,)](X)
