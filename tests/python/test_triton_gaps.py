"""The last language gaps of issue 28, each against numpy on the default device, with ragged
shapes, and an error test per misuse asserting its message: tl.gather, tl.assume, integers
cast to pointers (and back), tl.inline_asm_elementwise."""

import numpy as np
import pytest

import metile
import metile as tl


# ---- gather ------------------------------------------------------------------------------
@tl.jit
def gather_1d(src_ptr, index_ptr, out_ptr, n, m, N: tl.constexpr, M: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, N), mask=tl.arange(0, N) < n, other=0)
    offs = tl.arange(0, M)
    index = tl.load(index_ptr + offs, mask=offs < m, other=0)
    tl.store(out_ptr + offs, tl.gather(src, index, 0), mask=offs < m)


@tl.jit
def gather_2d(src_ptr, index_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, IR: tl.constexpr,
              IC: tl.constexpr, AXIS: tl.constexpr):
    rows, cols = tl.arange(0, R), tl.arange(0, C)
    src = tl.load(src_ptr + rows[:, None] * C + cols[None, :])
    irows, icols = tl.arange(0, IR), tl.arange(0, IC)
    index = tl.load(index_ptr + irows[:, None] * IC + icols[None, :])
    tl.store(out_ptr + irows[:, None] * IC + icols[None, :], tl.gather(src, index, AXIS))


@tl.jit
def gather_rows_in_loop(src_ptr, index_ptr, out_ptr, rows, N: tl.constexpr):
    """One gather per row of a device loop: the scratch is reused every iteration."""
    offs = tl.arange(0, N)
    for row in range(0, rows):
        src = tl.load(src_ptr + row * N + offs)
        index = tl.load(index_ptr + row * N + offs)
        tl.store(out_ptr + row * N + offs, tl.gather(src, index, 0) * 2)


def reference_1d(src, index, n):
    inside = (index >= 0) & (index < n)
    return np.where(inside, src[np.clip(index, 0, n - 1)], 0).astype(src.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8])
@pytest.mark.parametrize("n,m", [(64, 128), (37, 50), (256, 16)], ids=["64_128", "ragged", "256_16"])
def test_gather_1d(dtype, n, m, rng):
    src = (rng.standard_normal(n) * 50).astype(dtype)
    index = rng.integers(0, n, m).astype(np.int32)
    out = np.zeros(m, dtype)
    gather_1d[(1,)](src, index, out, n, m, N=metile.next_power_of_2(n),
                    M=metile.next_power_of_2(m))
    np.testing.assert_array_equal(out, reference_1d(src, index, n))


@pytest.mark.parametrize("index_dtype", [np.int64, np.int8, np.uint32])
def test_gather_index_dtypes_and_out_of_range_reads_zero(index_dtype, rng):
    """An index outside the source (Triton: undefined) reads 0; any integer dtype indexes."""
    src = rng.standard_normal(64).astype(np.float32)
    low = 0 if np.dtype(index_dtype).kind == "u" else -70
    index = rng.integers(low, 100, 128).astype(index_dtype)
    out = np.full(128, np.nan, np.float32)
    gather_1d[(1,)](src, index, out, 64, 128, N=64, M=128)
    np.testing.assert_array_equal(out, reference_1d(src, index.astype(np.int64), 64))


@pytest.mark.parametrize("axis,shapes", [
    (0, ((16, 8), (32, 8))),   # more rows gathered than the source has
    (0, ((32, 4), (2, 4))),
    (1, ((8, 16), (8, 4))),
    (1, ((4, 32), (4, 64))),
    (-1, ((8, 16), (8, 8))),
])
def test_gather_2d(axis, shapes, rng):
    (r, c), (ir, ic) = shapes
    src = rng.standard_normal((r, c)).astype(np.float16)
    index = rng.integers(0, (r, c)[axis], (ir, ic)).astype(np.int32)
    out = np.zeros((ir, ic), np.float16)
    gather_2d[(1,)](src, index, out, R=r, C=c, IR=ir, IC=ic, AXIS=axis)
    np.testing.assert_array_equal(out, np.take_along_axis(src, index, axis))


def test_gather_in_a_device_loop(rng):
    rows, n = 7, 128
    src = rng.standard_normal((rows, n)).astype(np.float32)
    index = np.stack([rng.permutation(n) for _ in range(rows)]).astype(np.int32)
    out = np.zeros((rows, n), np.float32)
    gather_rows_in_loop[(1,)](src, index, out, rows, N=n)
    np.testing.assert_array_equal(out, np.take_along_axis(src, index, 1) * 2)


@tl.jit
def gather_bools(x_ptr, index_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    flags = tl.load(x_ptr + offs) > 0
    tl.store(out_ptr + offs, tl.gather(flags, tl.load(index_ptr + offs), 0).to(tl.int32))


def test_gather_of_booleans(rng):
    x = rng.standard_normal(64).astype(np.float32)
    index = rng.integers(0, 64, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    gather_bools[(1,)](x, index, out, N=64)
    np.testing.assert_array_equal(out, (x > 0)[index].astype(np.int32))


@tl.jit
def gather_misuse(x_ptr, out_ptr, CASE: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    x2 = tl.reshape(x, (4, 4))
    if CASE == "rank":
        y = tl.gather(x, tl.reshape(offs, (4, 4)), 0)
    elif CASE == "float_index":
        y = tl.gather(x, x, 0)
    elif CASE == "axis":
        y = tl.gather(x, offs, 1)
    elif CASE == "sizes":
        y = tl.gather(x2, tl.zeros((4, 8), tl.int32), 0)
    else:
        y = tl.gather(x_ptr + offs, offs, 0)
    tl.store(out_ptr + offs, tl.ravel(y) if CASE == "sizes" else y)


@pytest.mark.parametrize("case,message", [
    ("rank", r"gather: src and index must have the same rank, got shapes \(16,\) and \(4, 4\)"),
    ("float_index", "gather: index is an integer tile, got f32"),
    ("axis", r"gather: axis must be a Python int in \[-1, 1\), got 1"),
    ("sizes", r"gather: index and src must have equal sizes along dimension 1 \(not the gather "
              r"axis 0\), got shapes \(4, 8\) and \(4, 4\)"),
    ("pointers", "gather: src and index are tiles of numbers, not of pointers"),
])
def test_gather_misuse(case, message):
    x = np.zeros(16, np.float32)
    with pytest.raises(tl.CompilationError, match=message):
        gather_misuse[(1,)](x, np.zeros(16, np.float32), CASE=case)


# ---- assume ------------------------------------------------------------------------------
@tl.jit
def assume_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    tl.assume(n > 0)
    tl.assume(stride == 1)
    tl.assume(BLOCK % 16 == 0)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs * stride, tl.load(x_ptr + offs * stride, mask=mask) + 1, mask=mask)


def test_assume_is_accepted_and_changes_nothing(rng):
    x = rng.standard_normal(100).astype(np.float32)
    out = np.zeros(100, np.float32)
    assume_kernel[(metile.cdiv(100, 32),)](x, out, 100, 1, BLOCK=32)
    np.testing.assert_array_equal(out, x + 1)


def test_assume_of_a_false_constant_is_an_error():
    with pytest.raises(tl.CompilationError, match="assume: the condition is false"):
        assume_kernel[(1,)](np.zeros(8, np.float32), np.zeros(8, np.float32), 8, 1, BLOCK=8)


# ---- integers to pointers ------------------------------------------------------------------
@tl.jit
def rows_from_addresses(addrs_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Row r of out is the first n elements of the buffer whose address is addrs[r]."""
    row = tl.program_id(0)
    src = tl.load(addrs_ptr + row).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + row * n + offs, tl.load(src + offs, mask=offs < n, other=0), mask=offs < n)


@tl.jit
def column_from_addresses(addrs_ptr, out_ptr, ROWS: tl.constexpr):
    """A tile of addresses as a tile of pointers: element r is *addrs[r], then each pointer
    round-trips through its integer address."""
    offs = tl.arange(0, ROWS)
    ptrs = tl.load(addrs_ptr + offs).to(tl.pointer_type(tl.float32))
    again = ptrs.to(tl.int64).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr + offs, tl.load(again))


def host_or_torch_buffers(arrays):
    """Device memory for the arrays and the int64 array of their addresses."""
    if metile.device() == "cuda":
        import torch

        tensors = [torch.from_numpy(x).cuda() for x in arrays]
        return tensors, torch.tensor([t.data_ptr() for t in tensors], dtype=torch.int64).cuda()
    buffers = [metile.Buffer(data=x) for x in arrays]
    return buffers, np.array([b.data_ptr() for b in buffers], np.int64)


@pytest.mark.parametrize("n", [64, 45], ids=["full", "ragged"])
def test_integer_addresses_cast_to_pointers(n, rng):
    arrays = [rng.standard_normal(n + 7 * r).astype(np.float32) for r in range(5)]
    keep, addrs = host_or_torch_buffers(arrays)
    out = np.zeros((5, n), np.float32)
    rows_from_addresses[(5,)](addrs, out, n, BLOCK=64)
    np.testing.assert_array_equal(out, np.stack([x[:n] for x in arrays]))
    first = np.zeros(8, np.float32)
    small = [rng.standard_normal(3).astype(np.float32) for _ in range(8)]
    many, many_addrs = host_or_torch_buffers(small)
    column_from_addresses[(1,)](many_addrs, first, ROWS=8)
    np.testing.assert_array_equal(first, [x[0] for x in small])
    del keep, many


@pytest.mark.skipif(metile.device() != "host", reason="the host emulator's bounds checks")
def test_an_address_past_its_buffer_is_a_fault(rng):
    buffer = metile.Buffer(data=np.ones(40, np.float32))
    addrs = np.array([buffer.data_ptr() + 8], np.int64)  # 64 floats from here pass the end
    with pytest.raises(metile.KernelFaultError,
                       match=r"out-of-bounds access in kernel 'rows_from_addresses'.*the 4-byte "
                             r"read at address 0x[0-9a-f]+, through a pointer made from an "
                             r"integer, lies in no live buffer"):
        rows_from_addresses[(1,)](addrs, np.zeros(64, np.float32), 64, BLOCK=64)
    # within the buffer, the same kernel reads
    out = np.zeros(38, np.float32)
    rows_from_addresses[(1,)](addrs, out, 38, BLOCK=64)
    np.testing.assert_array_equal(out, np.ones(38, np.float32))


@tl.jit
def float_to_pointer(x_ptr, out_ptr):
    y = tl.load(x_ptr).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr, tl.load(y))


def test_a_float_does_not_become_a_pointer():
    with pytest.raises(tl.CompilationError,
                       match=r"to: only an integer becomes a pointer \(an address\), got f32"):
        float_to_pointer[(1,)](np.zeros(1, np.float32), np.zeros(1, np.float32))


def test_buffer_data_ptr_is_its_address():
    if metile.device() != "host":
        pytest.skip("host buffers")
    a, b = metile.Buffer(data=np.zeros(4, np.float32)), metile.Buffer(data=np.zeros(4, np.float32))
    assert a.data_ptr() != b.data_ptr() and a.data_ptr() % 16 == 0


# ---- inline_asm_elementwise -----------------------------------------------------------------
@tl.jit
def shift_left(x_ptr, out_ptr, CASE: tl.constexpr):
    offs = tl.arange(0, 32)
    x = tl.load(x_ptr + offs)
    if CASE == "pack":
        y = tl.inline_asm_elementwise("shl.b32 $0, $1, 1;", "=r,r", [x], dtype=tl.int32,
                                      is_pure=True, pack=4)
    elif CASE == "tuple":
        y = tl.inline_asm_elementwise("shl.b32 $0, $1, 1;", "=r,r", [x],
                                      dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    else:
        y = tl.inline_asm_elementwise("shl.b32 $0, $1, 1;", "=r,r", [x], dtype=tl.int32,
                                      is_pure=True, pack=1)
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("case,message", [
    ("plain", "inline_asm_elementwise: inline PTX runs only on the cuda device; this kernel is "
              "compiled for the host device"),
    ("pack", r"inline_asm_elementwise: pack=4 is not supported"),
    ("tuple", r"inline_asm_elementwise: several result dtypes \(a tuple\) are not supported"),
])
def test_inline_asm_is_cuda_only(case, message):
    if metile.device() == "cuda" and case == "plain":
        pytest.skip("runs on the cuda device")
    with pytest.raises(tl.NotSupportedError, match=message):
        shift_left[(1,)](np.arange(32, dtype=np.int32), np.zeros(32, np.int32), CASE=case)


@tl.jit
def float_bits(x_ptr, out_ptr, N: tl.constexpr):
    """A pointer to f32 read as a pointer to i32 (through its address): the float's bits."""
    offs = tl.arange(0, N)
    same = x_ptr.to(tl.pointer_type(tl.float32))  # its own type: the pointer itself
    bits = x_ptr.to(tl.pointer_type(tl.int32))
    tl.store(out_ptr + offs, tl.load(bits + offs) + (tl.load(same + offs) * 0).to(tl.int32))


def test_a_pointer_reinterpreted_as_another_element_type(rng):
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.int32)
    float_bits[(1,)](x, out, N=64)
    np.testing.assert_array_equal(out, x.view(np.int32))
