"""Explicit thread layouts end to end on the device (the host target by default), against
numpy: seed 004's transpose8 as written, bit for bit (signed zeros included), in every layout
family and converted dtype, and multi-register tiles with ragged tails."""

import numpy as np
import pytest

import metile
from metile import ThreadLayout


@metile.kernel
def transpose8(source, destination, batches, OUTPUT_LAYOUT: metile.constexpr):
    inputs = metile.tensor(source, shape=(batches, 8, 8), access="read")
    outputs = metile.tensor(destination, shape=(batches, 8, 8), access="write")
    batch = metile.program_id(0)
    positions = metile.arange(0, 64)
    values = inputs.load((batch, positions // 8, positions % 8))
    converted = metile.convert_layout(values, OUTPUT_LAYOUT)
    owned = metile.arange(0, 64, layout=OUTPUT_LAYOUT)
    outputs.store((batch, owned % 8, owned // 8), converted)


FAMILIES = {
    "seed transpose": (ThreadLayout((3, 4, 5, 0, 1, 2)), "threadgroup scratch"),
    # eliminate_redundant_conversions removes an identity before lowering sees it
    "identity": (ThreadLayout.identity(64), None),
    "swap inside a SIMD group": (ThreadLayout((1, 0, 2, 3, 4, 5)), "simd_shuffle"),
    "swap across SIMD groups": (ThreadLayout((0, 1, 2, 3, 5, 4)), "threadgroup scratch"),
    "xor inside a SIMD group": (ThreadLayout((0, 1, 2, 3, 4, 5), xor_mask=0b10101), "simd_shuffle"),
    "xor across SIMD groups": (ThreadLayout((0, 1, 2, 3, 4, 5), xor_mask=0b100010),
                               "threadgroup scratch"),
}


def signed_values(shape, dtype, rng):
    x = rng.integers(-50, 50, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        x = x / dtype(4)
        x.flat[::7] = -0.0
    return x


@pytest.mark.parametrize("family", FAMILIES)
def test_transpose8_in_every_layout_family(family, rng):
    layout, mechanism = FAMILIES[family]
    batches = 3
    x = signed_values((batches, 8, 8), np.float32, rng)
    out = metile.Buffer.zeros((batches, 8, 8))
    dispatch = transpose8[(batches,)].prepare(x, out, batches, OUTPUT_LAYOUT=layout)
    dispatch()
    want = np.ascontiguousarray(x.transpose(0, 2, 1))
    np.testing.assert_array_equal(out.numpy().view(np.uint32), want.view(np.uint32))
    conversions = dispatch.execution_report["layout_conversions"]
    assert [c["mechanism"] for c in conversions] == ([mechanism] if mechanism else [])
    assert "layout_conversions" in dispatch.explain()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.uint32])
def test_transpose8_moves_every_converted_dtype_exactly(dtype, rng):
    x = signed_values((2, 8, 8), dtype, rng) if dtype != np.uint32 else \
        rng.integers(0, 2**32 - 1, size=(2, 8, 8), dtype=np.uint32)
    out = metile.Buffer.from_numpy(np.zeros_like(x))
    transpose8[(2,)](x, out, 2, OUTPUT_LAYOUT=ThreadLayout((3, 4, 5, 0, 1, 2)))
    want = np.ascontiguousarray(x.transpose(0, 2, 1))
    assert out.numpy().tobytes() == want.tobytes()


@metile.kernel
def keep_positive(x, y, n, LAYOUT: metile.constexpr):
    # A bool tile and the values both change owners; the result is written in the new layout.
    inputs = metile.tensor(x, shape=(n,), access="read")
    outputs = metile.tensor(y, shape=(n,), access="write")
    values = inputs.load((metile.arange(0, 64),))
    positive = metile.convert_layout(values > 0, LAYOUT)
    moved = metile.convert_layout(values, LAYOUT)
    outputs.store((metile.arange(0, 64, layout=LAYOUT),), metile.where(positive, moved, -1))


@pytest.mark.parametrize("layout", [ThreadLayout((3, 4, 5, 0, 1, 2)),
                                    ThreadLayout((1, 0, 2, 3, 4, 5))])
def test_bool_tiles_convert(layout, rng):
    x = rng.integers(-9, 9, size=64).astype(np.int32)
    y = metile.Buffer.from_numpy(np.zeros(64, np.int32))
    keep_positive[(1,)](x, y, 64, LAYOUT=layout)
    np.testing.assert_array_equal(y.numpy(), np.where(x > 0, x, -1))


@metile.kernel
def scale_owned(x, y, n, LAYOUT: metile.constexpr, BLOCK: metile.constexpr):
    inputs = metile.tensor(x, shape=(n,), access="read")
    outputs = metile.tensor(y, shape=(n,), access="write")
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK, layout=LAYOUT)
    outputs.store((offsets,), inputs.load((offsets,)) * 2.0 + 1.0)


@pytest.mark.parametrize("registers", [1, 2, 4, 8, 16, 32])
@pytest.mark.parametrize("n", [1, 1000, 2500])
def test_multi_register_tiles_with_ragged_tails(registers, n, rng):
    layout = ThreadLayout.identity(1024, registers)
    x = rng.standard_normal(n).astype(np.float32)
    y = metile.Buffer.zeros(n)
    dispatch = scale_owned[(metile.cdiv(n, 1024),)].prepare(x, y, n, LAYOUT=layout, BLOCK=1024)
    dispatch()
    np.testing.assert_array_equal(y.numpy(), x * np.float32(2) + np.float32(1))
    assert dispatch.execution_report["geometry"]["threads_per_threadgroup"][0] == 1024 // registers


@metile.kernel
def transpose32(source, destination, batches, INPUT_LAYOUT: metile.constexpr,
                OUTPUT_LAYOUT: metile.constexpr):
    inputs = metile.tensor(source, shape=(batches, 32, 32), access="read")
    outputs = metile.tensor(destination, shape=(batches, 32, 32), access="write")
    batch = metile.program_id(0)
    positions = metile.arange(0, 1024, layout=INPUT_LAYOUT)
    values = inputs.load((batch, positions // 32, positions % 32))
    converted = metile.convert_layout(values, OUTPUT_LAYOUT)
    owned = metile.arange(0, 1024, layout=OUTPUT_LAYOUT)
    outputs.store((batch, owned % 32, owned // 32), converted)


def four_per_thread(*order):
    return ThreadLayout(order, elements_per_thread=4)


# Multi-register conversions (256 threads, 4 registers: physical bits 0-7 are the thread's,
# 8-9 the register's), from the striped identity unless a pair is given.
STRIPED4 = ThreadLayout.identity(1024, 4)
ROWS_ADJACENT = four_per_thread(8, 9, 0, 1, 2, 3, 4, 5, 6, 7)  # 4 adjacent input columns
COLUMNS_ADJACENT = four_per_thread(0, 1, 2, 3, 4, 8, 9, 5, 6, 7)  # 4 adjacent output columns
MULTI_REGISTER = {
    "registers swapped": (STRIPED4, four_per_thread(0, 1, 2, 3, 4, 5, 6, 7, 9, 8), "forward"),
    "lanes swapped": (STRIPED4, four_per_thread(1, 0, 2, 3, 4, 5, 6, 7, 8, 9), "simd_shuffle"),
    "a register bit for a lane bit": (STRIPED4, four_per_thread(8, 1, 2, 3, 4, 5, 6, 7, 0, 9),
                                      "simd_shuffle"),
    "xor inside a SIMD group": (STRIPED4, ThreadLayout(tuple(range(10)), xor_mask=0b1000010101,
                                                       elements_per_thread=4), "simd_shuffle"),
    "across SIMD groups": (STRIPED4, four_per_thread(0, 1, 2, 3, 4, 7, 6, 5, 8, 9),
                           "threadgroup scratch"),
    "striped to adjacent": (STRIPED4, ROWS_ADJACENT, "threadgroup scratch"),
    # Lanes and registers trade bits inside each SIMD group: shuffles and selects, no memory.
    "adjacent rows to adjacent columns": (ROWS_ADJACENT, COLUMNS_ADJACENT, "simd_shuffle"),
    "xor across SIMD groups": (ThreadLayout(tuple(range(10)), xor_mask=0b0011000001,
                                            elements_per_thread=4), STRIPED4,
                               "threadgroup scratch"),
    "two registers": (ThreadLayout.identity(1024, 2),
                      ThreadLayout((9, 1, 2, 3, 4, 5, 6, 7, 8, 0), elements_per_thread=2),
                      "simd_shuffle"),
    "eight registers": (ThreadLayout.identity(1024, 8),
                        ThreadLayout((7, 8, 9, 0, 1, 2, 3, 4, 5, 6), elements_per_thread=8),
                        "threadgroup scratch"),
    "32 registers, one SIMD group": (ThreadLayout.identity(1024, 32),
                                     ThreadLayout((5, 6, 7, 8, 9, 0, 1, 2, 3, 4),
                                                  elements_per_thread=32), "simd_shuffle"),
}


@pytest.mark.parametrize("family", MULTI_REGISTER)
def test_multi_register_conversions_in_every_layout_family(family, rng):
    source, destination, mechanism = MULTI_REGISTER[family]
    batches = 2
    x = signed_values((batches, 32, 32), np.float32, rng)
    out = metile.Buffer.zeros((batches, 32, 32))
    dispatch = transpose32[(batches,)].prepare(x, out, batches, INPUT_LAYOUT=source,
                                               OUTPUT_LAYOUT=destination)
    dispatch()
    want = np.ascontiguousarray(x.transpose(0, 2, 1))
    np.testing.assert_array_equal(out.numpy().view(np.uint32), want.view(np.uint32))
    conversions = dispatch.execution_report["layout_conversions"]
    assert [c["mechanism"] for c in conversions] == [mechanism]


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint32])
def test_multi_register_conversions_move_every_dtype_exactly(dtype, rng):
    x = signed_values((2, 32, 32), dtype, rng) if dtype != np.uint32 else \
        rng.integers(0, 2**32 - 1, size=(2, 32, 32), dtype=np.uint32)
    out = metile.Buffer.from_numpy(np.zeros_like(x))
    transpose32[(2,)](x, out, 2, INPUT_LAYOUT=ROWS_ADJACENT, OUTPUT_LAYOUT=COLUMNS_ADJACENT)
    assert out.numpy().tobytes() == np.ascontiguousarray(x.transpose(0, 2, 1)).tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_adjacent_transposes_group_loads_and_stores(dtype, rng):
    # The row // 32 and row % 32 of four adjacent elements differ by constants, so both
    # sides of the shuffle exchange are packed accesses (ragged-free: 32x32 tiles).
    x = signed_values((2, 32, 32), dtype, rng)
    out = metile.Buffer.from_numpy(np.zeros_like(x))
    dispatch = transpose32[(2,)].prepare(x, out, 2, INPUT_LAYOUT=ROWS_ADJACENT,
                                         OUTPUT_LAYOUT=COLUMNS_ADJACENT)
    dispatch()
    assert out.numpy().tobytes() == np.ascontiguousarray(x.transpose(0, 2, 1)).tobytes()
    report = dispatch.execution_report
    assert (report["grouped_loads"], report["grouped_stores"]) == (1, 1)
