"""Triton's block pointers (tl.make_block_ptr, tl.advance, tl.load/tl.store with boundary_check
and padding_option) and tensor descriptors (tl.make_tensor_descriptor, desc.load/desc.store),
each checked against numpy on the default device; the errors Triton gives, with meTile's
classes; and the two corpus matmuls written with them."""

import re

import ml_dtypes
import numpy as np
import pytest

import metile as tl
import metile as triton
from triton_corpus.load import load as load_corpus

# An allocation larger than the tensor the block pointers declare (its first 16 rows and 24
# columns): an unchecked dimension reads and writes past the declared shape, inside memory.
ROWS, COLUMNS = 24, 40
M, N = 16, 24
CHECKS = [(), (0,), (1,), (0, 1)]


def window(offsets, block):
    """The block's row and column indices (1-D each)."""
    return [o + np.arange(b) for o, b in zip(offsets, block)]


def inside(indices, extents, check):
    """Where the dimensions named by check are in bounds (others: everywhere), as a block."""
    grids = np.meshgrid(*indices, indexing="ij")
    mask = np.ones(grids[0].shape, bool)
    for d in check:
        mask &= (grids[d] >= 0) & (grids[d] < extents[d])
    return mask


# ---- loads and stores ---------------------------------------------------------------------
@triton.jit
def load_block(x, out, rows, cols, stride_r, stride_c, off_r, off_c,
               BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, ORDER: tl.constexpr,
               CHECK: tl.constexpr, PAD: tl.constexpr):
    src = tl.make_block_ptr(x, (rows, cols), (stride_r, stride_c), (off_r, off_c),
                            (BLOCK_R, BLOCK_C), ORDER)
    dst = tl.make_block_ptr(out, (BLOCK_R, BLOCK_C), (BLOCK_C, 1), (0, 0), (BLOCK_R, BLOCK_C),
                            (1, 0))
    tl.store(dst, tl.load(src, boundary_check=CHECK, padding_option=PAD))


@pytest.mark.parametrize("check", CHECKS, ids=str)
@pytest.mark.parametrize("pad", ["zero", "nan", ""])
def test_2d_load_checks_only_the_named_dimensions(check, pad, rng):
    x = rng.standard_normal((ROWS, COLUMNS)).astype(np.float32)
    out = np.full((16, 16), 7.0, np.float32)
    offsets = (8, 16)  # rows 8..23 and columns 16..31: past the declared 16 x 24 in both
    load_block[(1,)](x, out, M, N, COLUMNS, 1, *offsets, BLOCK_R=16, BLOCK_C=16, ORDER=(1, 0),
                     CHECK=check, PAD=pad)
    r, c = window(offsets, (16, 16))
    fill = np.nan if pad == "nan" else 0.0
    want = np.where(inside((r, c), (M, N), check), x[r[:, None], c[None, :]], fill)
    np.testing.assert_array_equal(out, want.astype(np.float32))
    if check != (0, 1):  # an unchecked dimension read the memory past the declared shape
        assert not np.array_equal(want, np.where(inside((r, c), (M, N), (0, 1)), want, fill),
                                  equal_nan=True)


@pytest.mark.parametrize("offsets", [(-5, -3), (12, 20), (-16, 0), (3, 30)], ids=str)
def test_2d_load_of_blocks_outside_the_tensor(offsets, rng):
    # Negative offsets and blocks wholly outside: every element is checked against 0 and the
    # shape, as Triton's boundary_check is.
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.full((16, 16), 7.0, np.float32)
    load_block[(1,)](x, out, M, N, N, 1, *offsets, BLOCK_R=16, BLOCK_C=16, ORDER=(1, 0),
                     CHECK=(0, 1), PAD="nan")
    r, c = window(offsets, (16, 16))
    mask = inside((r, c), (M, N), (0, 1))
    want = np.full((16, 16), np.nan, np.float32)
    want[mask] = x[np.clip(r, 0, M - 1)[:, None], np.clip(c, 0, N - 1)[None, :]][mask]
    np.testing.assert_array_equal(out, want)


def test_transposed_view_with_order_0_1(rng):
    # A [24, 16] row-major matrix read as its transpose [16, 24]: strides (1, 16), column-major
    # order; the block at (8, 16) crosses both edges.
    x = rng.standard_normal((N, M)).astype(np.float16)
    out = np.full((16, 16), 7.0, np.float16)
    load_block[(1,)](x, out, M, N, 1, M, 8, 16, BLOCK_R=16, BLOCK_C=16, ORDER=(0, 1),
                     CHECK=(0, 1), PAD="zero")
    r, c = window((8, 16), (16, 16))
    view = x.T
    want = np.where(inside((r, c), (M, N), (0, 1)),
                    view[np.clip(r, 0, M - 1)[:, None], np.clip(c, 0, N - 1)[None, :]], 0)
    np.testing.assert_array_equal(out, want.astype(np.float16))


@triton.jit
def store_block(x, y, rows, cols, stride_r, off_r, off_c, BLOCK_R: tl.constexpr,
                BLOCK_C: tl.constexpr, CHECK: tl.constexpr):
    src = tl.make_block_ptr(x, (BLOCK_R, BLOCK_C), (BLOCK_C, 1), (0, 0), (BLOCK_R, BLOCK_C),
                            (1, 0))
    dst = tl.make_block_ptr(y, (rows, cols), (stride_r, 1), (off_r, off_c),
                            (BLOCK_R, BLOCK_C), (1, 0))
    tl.store(dst, tl.load(src), boundary_check=CHECK)


@pytest.mark.parametrize("check", CHECKS, ids=str)
def test_2d_store_checks_only_the_named_dimensions(check, rng):
    x = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    y = np.full((ROWS, COLUMNS), 7.0, ml_dtypes.bfloat16)
    offsets = (8, 16)
    store_block[(1,)](x, y, M, N, COLUMNS, *offsets, BLOCK_R=16, BLOCK_C=16, CHECK=check)
    r, c = window(offsets, (16, 16))
    want = np.full((ROWS, COLUMNS), 7.0, ml_dtypes.bfloat16)
    mask = inside((r, c), (M, N), check)
    block = want[r[:, None], c[None, :]]
    block[mask] = x[mask]
    want[r[:, None], c[None, :]] = block
    np.testing.assert_array_equal(y.astype(np.float32), want.astype(np.float32))


@triton.jit
def copy_1d(x, y, n, CHECK: tl.constexpr, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offset = tl.program_id(0) * BLOCK
    src = tl.make_block_ptr(base=x, shape=(n,), strides=(1,), offsets=(offset,),
                            block_shape=(BLOCK,), order=(0,))
    dst = tl.make_block_ptr(base=y, shape=(n,), strides=(1,), offsets=(offset,),
                            block_shape=(BLOCK,), order=(0,))
    tl.store(dst, tl.load(src, boundary_check=CHECK, padding_option=PAD) + 1,
             boundary_check=CHECK)


def test_1d_block_pointers(rng):
    # Triton's block-copy test: the source and destination declare half the data; checked,
    # the second half is neither read nor written. A complete last block needs no check.
    n = 128
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    copy_1d[(n // 32,)](x, y, n // 2, CHECK=(0,), PAD="zero", BLOCK=32)
    np.testing.assert_array_equal(y, np.concatenate([x[:n // 2] + 1, np.zeros(n // 2)]))
    y = np.zeros(n, np.float32)
    copy_1d[(n // 32,)](x, y, n, CHECK=(), PAD="", BLOCK=32)
    np.testing.assert_array_equal(y, x + 1)


@triton.jit
def copy_1d_unequal(x, y, n_in, n_out, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offset = tl.program_id(0) * BLOCK
    src = tl.make_block_ptr(x, (n_in,), (1,), (offset,), (BLOCK,), (0,))
    dst = tl.make_block_ptr(y, (n_out,), (1,), (offset,), (BLOCK,), (0,))
    tl.store(dst, tl.load(src, boundary_check=(0,), padding_option=PAD), boundary_check=(0,))


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_1d_padding(pad, rng):
    x = rng.standard_normal(100).astype(np.float16)
    y = np.full(100, 7.0, np.float16)
    copy_1d_unequal[(4,)](x, y, 50, 90, PAD=pad, BLOCK=32)
    want = np.concatenate([x[:50], np.full(40, np.nan if pad == "nan" else 0.0), np.full(10, 7.0)])
    np.testing.assert_array_equal(y, want.astype(np.float16))


# ---- advance in loops ----------------------------------------------------------------------
@triton.jit
def row_sums(x, out, rows, cols, stride_r, stride_c, step, BLOCK_R: tl.constexpr,
             BLOCK_C: tl.constexpr):
    row = tl.program_id(0) * BLOCK_R
    block = tl.make_block_ptr(x, (rows, cols), (stride_r, stride_c), (row, 0),
                              (BLOCK_R, BLOCK_C), (1, 0))
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for k in range(0, cols, BLOCK_C * step):
        acc += tl.load(block, boundary_check=(0, 1))
        block = tl.advance(block, (0, BLOCK_C * step))
    sums = tl.make_block_ptr(out, (rows,), (1,), (row,), (BLOCK_R,), (0,))
    tl.store(sums, tl.sum(acc, axis=1), boundary_check=(0,))


@pytest.mark.parametrize("step", [1, 2])
def test_advance_in_a_loop_with_a_runtime_trip_count(step, rng):
    rows, cols = 37, 83
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros(rows, np.float32)
    args = (x, out, rows, cols, cols, 1, step)
    row_sums[(triton.cdiv(rows, 16),)](*args, BLOCK_R=16, BLOCK_C=16)
    blocks = [x[:, k:k + 16] for k in range(0, cols, 16 * step)]
    want = np.concatenate(blocks, axis=1).sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    # The loop carries the accumulator and the block pointer's offsets, scalars: no pointer
    # tile moves from one iteration to the next.
    ir = str(row_sums.trace(*args, BLOCK_R=16, BLOCK_C=16))
    (loop,) = re.findall(r"= for [^\n]*", ir)
    assert "ptr" not in loop and loop.count("i32") == 2, loop


@triton.jit
def matrix_sum(x, out, rows, cols, stride_r, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    top = tl.make_block_ptr(x, (rows, cols), (stride_r, 1), (0, 0), (BLOCK_R, BLOCK_C), (1, 0))
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for i in range(0, rows, BLOCK_R):
        block = top
        for j in range(0, cols, BLOCK_C):
            acc += tl.load(block, boundary_check=(0, 1))
            block = tl.advance(block, (0, BLOCK_C))
        top = tl.advance(top, (BLOCK_R, 0))
    tl.store(out + tl.arange(0, BLOCK_R), tl.sum(acc, axis=1))


def test_nested_loops_advance_their_own_block_pointers(rng):
    rows, cols = 45, 50
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros(16, np.float32)
    matrix_sum[(1,)](x, out, rows, cols, cols, BLOCK_R=16, BLOCK_C=16)
    np.testing.assert_allclose(out.sum(), x.sum(), rtol=1e-4)


@triton.jit
def column_block_sums(x, out, rows, cols, stride_r, BLOCK_R: tl.constexpr,
                      BLOCK_C: tl.constexpr):
    block = tl.make_block_ptr(x, (rows, BLOCK_C), (stride_r, 1), (0, 0), (BLOCK_R, BLOCK_C),
                              (1, 0))
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for j in range(0, cols, BLOCK_C):
        acc += tl.load(block, boundary_check=(0,))
        # Rebuilt on a moved base: the loop carries the base pointer too.
        block = tl.make_block_ptr(x + j + BLOCK_C, (rows, BLOCK_C), (stride_r, 1), (0, 0),
                                  (BLOCK_R, BLOCK_C), (1, 0))
    tl.store(out + tl.arange(0, BLOCK_C), tl.sum(acc, axis=0))


def test_a_block_pointer_rebuilt_in_the_loop(rng):
    rows, cols = 40, 64
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros(16, np.float32)
    column_block_sums[(1,)](x, out, rows, cols, cols, BLOCK_R=64, BLOCK_C=16)
    want = x.reshape(rows, cols // 16, 16).sum(axis=(0, 1))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


# ---- tensor descriptors --------------------------------------------------------------------
@triton.jit
def descriptor_copy(x, y, rows, cols, stride_r, off_r, off_c, BLOCK_R: tl.constexpr,
                    BLOCK_C: tl.constexpr, PAD: tl.constexpr):
    src = tl.make_tensor_descriptor(x, shape=[rows, cols], strides=[stride_r, 1],
                                    block_shape=[BLOCK_R, BLOCK_C], padding_option=PAD)
    dst = tl.make_tensor_descriptor(y, shape=[rows, cols], strides=[stride_r, 1],
                                    block_shape=[BLOCK_R, BLOCK_C])
    value = src.load([off_r, off_c])
    dst.store([off_r, off_c], value)
    tl.store_tensor_descriptor(dst, [off_r + BLOCK_R, off_c], tl.load_tensor_descriptor(
        src, [off_r + BLOCK_R, off_c]) * 2)


@pytest.mark.parametrize("offsets", [(0, 0), (8, 16), (-4, -8), (20, 30), (-40, 0)], ids=str)
def test_descriptor_blocks_outside_the_tensor(offsets, rng):
    # Declared 16 x 24 inside a 24 x 40 allocation: writes past the declared shape, in any
    # dimension, are dropped (TMA's bounds), and so the reads there are never seen.
    x = rng.standard_normal((ROWS, COLUMNS)).astype(np.float32)
    y = np.full((ROWS, COLUMNS), 7.0, np.float32)
    descriptor_copy[(1,)](x, y, M, N, COLUMNS, *offsets, BLOCK_R=8, BLOCK_C=16, PAD="zero")
    want = np.full((ROWS, COLUMNS), 7.0, np.float32)
    for first_row, scale in ((offsets[0], 1), (offsets[0] + 8, 2)):
        r, c = window((first_row, offsets[1]), (8, 16))
        for i in r:
            for j in c:
                if 0 <= i < M and 0 <= j < N:
                    want[i, j] = x[i, j] * scale
    np.testing.assert_array_equal(y, want)


@triton.jit
def descriptor_nan_probe(x, out, n, off, BLOCK: tl.constexpr):
    src = tl.make_tensor_descriptor(x, shape=[n], strides=[1], block_shape=[BLOCK],
                                    padding_option="nan")
    tl.store(out + tl.arange(0, BLOCK), src.load([off]))


def test_1d_descriptor_pads_with_nan(rng):
    x = rng.standard_normal(20).astype(np.float16)
    out = np.zeros(32, np.float16)
    descriptor_nan_probe[(1,)](x, out, 20, -4, BLOCK=32)
    want = np.full(32, np.nan, np.float16)
    want[4:24] = x
    np.testing.assert_array_equal(out, want)


# ---- the corpus matmuls ---------------------------------------------------------------------
def strides(x):
    return [s // x.itemsize for s in x.strides]


@pytest.fixture(scope="module")
def block_ptr_matmul():
    module, edits = load_corpus("block_ptr_matmul", "metile")
    assert edits == []
    return module.matmul_kernel_with_block_pointers


@pytest.fixture(scope="module")
def descriptor_matmul():
    module, edits = load_corpus("tensor_descriptor_matmul", "metile")
    assert edits == []
    return module.matmul_kernel_descriptor


def operands(dtype, shape, rng):
    m, n, k = shape
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    return a, b, np.full((m, n), np.nan, np.float16), want


DTYPES = pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])


@DTYPES
@pytest.mark.parametrize("shape", [(70, 45, 37), (64, 96, 48)], ids=["ragged", "complete"])
def test_block_pointer_matmul_runs_verbatim(block_ptr_matmul, dtype, shape, rng):
    a, b, c, want = operands(dtype, shape, rng)
    m, n, k = shape
    grid = (triton.cdiv(m, 32) * triton.cdiv(n, 32),)
    block_ptr_matmul[grid](a, b, c, m, n, k, *strides(a), *strides(b), *strides(c),
                           BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=8)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-3,
                               atol=2e-3)


@DTYPES
@pytest.mark.parametrize("shape", [(70, 56, 40), (64, 96, 48)], ids=["ragged", "complete"])
def test_tensor_descriptor_matmul_runs_verbatim(descriptor_matmul, dtype, shape, rng):
    # Ragged against the 32 x 32 x 16 blocks, with rows that are multiples of 16 bytes (TMA's
    # rule, which Triton needs).
    a, b, c, want = operands(dtype, shape, rng)
    m, n, k = shape
    grid = (triton.cdiv(m, 32) * triton.cdiv(n, 32),)
    descriptor_matmul[grid](a, b, c, m, n, k, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16,
                            GROUP_SIZE_M=8)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-3,
                               atol=2e-3)


# ---- errors ---------------------------------------------------------------------------------
@triton.jit
def rejected(x_ptr, i_ptr, n, FORM: tl.constexpr):
    block = tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (16, 16), (1, 0))

    def make(shape=(n, n), strides=(n, 1), offsets=(0, 0), block_shape=(16, 16), order=(1, 0)):
        return tl.make_block_ptr(x_ptr, shape, strides, offsets, block_shape, order)

    def describe(strides=(n, 1), block_shape=(16, 16), padding="zero"):
        return tl.make_tensor_descriptor(x_ptr, (n, n), strides, block_shape, padding)

    forms = {
        "lengths": lambda: make(strides=(n,)),
        "power of two": lambda: make(block_shape=(16, 12)),
        "3-D": lambda: make((n, n, n), (n, n, 1), (0, 0, 0), (4, 4, 4), (2, 1, 0)),
        "order": lambda: make(order=(1, 1)),
        "base": lambda: tl.make_block_ptr(n, (n,), (1,), (0,), (16,), (0,)),
        "i64 offset": lambda: make(offsets=(0, n.to(tl.int64))),
        "boundary_check range": lambda: tl.load(block, boundary_check=(0, 2)),
        "boundary_check twice": lambda: tl.load(block, boundary_check=(1, 1)),
        "padding": lambda: tl.load(block, boundary_check=(0,), padding_option="inf"),
        "nan for integers": lambda: tl.load(tl.make_block_ptr(i_ptr, (n,), (1,), (0,), (16,),
                                                              (0,)),
                                            boundary_check=(0,), padding_option="nan"),
        "mask": lambda: tl.load(block, mask=tl.arange(0, 16) < n),
        "store shape": lambda: tl.store(block, tl.zeros((16, 32), tl.float32)),
        "store dtype": lambda: tl.store(block, tl.zeros((16, 16), tl.float16)),
        "advance count": lambda: tl.advance(block, (16,)),
        "advance a pointer": lambda: tl.advance(x_ptr, (16, 0)),
        "descriptor strides": lambda: describe(strides=(n,)),
        "descriptor last stride": lambda: describe(strides=(n, 2)),
        "descriptor row stride": lambda: describe(strides=(18, 1)),
        "descriptor block bytes": lambda: describe(block_shape=(16, 2)),
        "descriptor padding": lambda: describe(padding="one"),
        "descriptor offsets": lambda: describe().load([0]),
        "descriptor store shape": lambda: describe().store([0, 0], tl.zeros((16, 8), tl.float32)),
    }
    forms[FORM]()


REJECTED = {
    "lengths": (tl.CompilationError, "make_block_ptr: shape, strides, offsets, block_shape and "
                "order must have the same length \\(one entry per dimension\\), got shape 2, "
                "strides 1, offsets 2, block_shape 2, order 2"),
    "power of two": (tl.CompilationError, r"make_block_ptr: block_shape\[1\] must be a power "
                     "of 2, got 12"),
    "3-D": (tl.NotSupportedError, r"make_block_ptr: a 3-D block_shape \(4, 4, 4\): meTile's "
            "tiles are 1-D or 2-D"),
    "order": (tl.CompilationError, r"make_block_ptr: order must be a permutation of \(0, ..., "
              r"1\), got \(1, 1\)"),
    "base": (tl.CompilationError, "make_block_ptr: base must be a pointer"),
    "i64 offset": (tl.CompilationError, r"make_block_ptr: offsets\[1\] is i64, but block "
                   "pointers take 32-bit offsets"),
    "boundary_check range": (tl.CompilationError, "load: boundary_check names dimension 2, but "
                             r"the block pointer has 2 dimensions \(0, 1\)"),
    "boundary_check twice": (tl.CompilationError, "load: boundary_check names a dimension "
                             "twice"),
    "padding": (tl.CompilationError, "load: padding_option must be 'zero' or 'nan'"),
    "nan for integers": (tl.CompilationError, "load: padding_option='nan' needs float "
                         "elements; these are i32"),
    "mask": (tl.CompilationError, "load: mask and other cannot be given with a block pointer"),
    "store shape": (tl.CompilationError, r"store: the value's shape \[16, 32\] differs from the "
                    r"block shape \[16, 16\]"),
    "store dtype": (tl.CompilationError, "store: the value's element type f16 differs from the "
                    r"block's f32; convert it first \(value.to\(tl.float32\)\)"),
    "advance count": (tl.CompilationError, "advance: offsets must have 2 entries, one per "
                      "dimension of the block pointer, got 1"),
    "advance a pointer": (tl.CompilationError, "advance: base must be a block pointer"),
    "descriptor strides": (tl.CompilationError, "make_tensor_descriptor: strides must have 2 "
                           "entries, one per dimension of shape, got 1"),
    "descriptor last stride": (tl.CompilationError, "make_tensor_descriptor: the last "
                               r"dimension must be contiguous: strides\[-1\] must be 1, got 2"),
    "descriptor row stride": (tl.CompilationError, r"make_tensor_descriptor: strides\[0\] must "
                              "be a multiple of 16 bytes, got 18 elements of 4 bytes"),
    "descriptor block bytes": (tl.CompilationError, "make_tensor_descriptor: the block's last "
                               "dimension must span at least 16 bytes"),
    "descriptor padding": (tl.CompilationError, "make_tensor_descriptor: padding_option must be "
                           "'zero' or 'nan', got 'one'"),
    "descriptor offsets": (tl.CompilationError, "load: offsets must have 2 entries, one per "
                           "dimension of the descriptor, got 1"),
    "descriptor store shape": (tl.CompilationError, r"store: the value's shape \[16, 8\] "
                               r"differs from the block shape \[16, 16\]"),
}


@pytest.mark.parametrize("form", list(REJECTED))
def test_errors(form):
    cls, message = REJECTED[form]
    x = np.zeros(64, np.float32)
    i = np.zeros(64, np.int32)
    with pytest.raises(cls, match=message) as info:
        rejected.trace(x, i, 8, FORM=form)
    assert info.value.file == __file__, info.value  # points at the kernel's line


@triton.jit
def changes_block_shape(x_ptr, n):
    block = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    for k in range(0, n, 16):
        block = tl.make_block_ptr(x_ptr, (n,), (1,), (k,), (32,), (0,))


def test_a_loop_keeps_the_block_shape():
    with pytest.raises(tl.CompilationError, match="tile_range: loop-carried variable 'block' "
                       "holds metile.BlockPointer.*block_shape=\\(16,\\).* before the loop body "
                       "and .*block_shape=\\(32,\\).* after it"):
        changes_block_shape.trace(np.zeros(64, np.float32), 64)
