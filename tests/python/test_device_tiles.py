"""Device tiles with masked tails (seed 002, "Direct device tiles and masked tails"): seed
002's masked_tiles exactly as written, for 0, 1, 8, 9 and 23 rows, against numpy, an f16
variant, a column-major view with runtime extents in both dimensions, the same under a
permuted matrix lane map, and each contract violation with its message."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import metile

INLINE = metile.Schedule(backend="simdgroup_inline")
ROW_COUNTS = [0, 1, 8, 9, 23]
SENTINEL = 7.0


# Seed 002's kernel, verbatim.
@metile.kernel
def masked_tiles(Source, Control, Output, *, BLOCK: metile.constexpr = 32):
    scratch = metile.tensor(
        metile.shared(BLOCK * 2, dtype="f32"),
        shape=(BLOCK // 4, 8),
    )
    control = metile.tensor(Control, shape=(1,), access="read")
    rows = control.load((0,))
    source = metile.tensor(
        Source, shape=(rows, 8), strides=(8, 1),
        block_shape=(8, 8), access="read",
    )
    output = metile.tensor(
        Output, shape=(rows, 8), strides=(8, 1),
        block_shape=(8, 8), access="write",
    )
    for row in metile.tile_range(0, rows, 8):
        fragment = source.load((row, 0), scratch=scratch)
        output.store((row, 0), fragment + 1.0, scratch=scratch)


# The seed's kernel with the storage dtype as a parameter.
@metile.kernel
def masked_tiles_of(Source, Control, Output, *, BLOCK: metile.constexpr = 32,
                    STORAGE: metile.constexpr = "f16"):
    scratch = metile.tensor(metile.shared(BLOCK * 2, dtype=STORAGE), shape=(BLOCK // 4, 8))
    control = metile.tensor(Control, shape=(1,), access="read")
    rows = control.load((0,))
    source = metile.tensor(Source, shape=(rows, 8), strides=(8, 1), block_shape=(8, 8),
                           access="read")
    output = metile.tensor(Output, shape=(rows, 8), strides=(8, 1), block_shape=(8, 8),
                           access="write")
    for row in metile.tile_range(0, rows, 8):
        fragment = source.load((row, 0), scratch=scratch)
        output.store((row, 0), fragment + 1.0, scratch=scratch)


def run_masked_tiles(kernel, rows, dtype, **options):
    # The source holds exactly the valid rows (one unread row when there are none), so a read
    # past them would leave the buffer; the output has sentinel rows after them.
    source = np.arange(max(rows, 1) * 8, dtype=np.float32).reshape(-1, 8).astype(dtype) / 4
    output = np.full((rows + 8, 8), SENTINEL, dtype)
    kernel[(1,)](source, np.array([rows], np.int32), output, STRICT_MATH=True, SCHEDULE=INLINE,
                 **options)
    np.testing.assert_array_equal(output[:rows], source[:rows] + dtype(1))
    np.testing.assert_array_equal(output[rows:], np.full((8, 8), SENTINEL, dtype))


@pytest.mark.parametrize("rows", ROW_COUNTS)
def test_masked_tiles_as_written(rows):
    run_masked_tiles(masked_tiles, rows, np.float32)


@pytest.mark.parametrize("rows", ROW_COUNTS)
def test_masked_tiles_in_f16(rows):
    run_masked_tiles(masked_tiles_of, rows, np.float16, STORAGE="f16")


# A column-major source (element (r, c) at r + c * LD) with ragged extents in both dimensions
# (scalar arguments, which the Schedule specialises), written row-major: the transposed matrix
# access, tails in rows and columns, and a nested loop, which peeling leaves guarded.
@metile.kernel
def column_major_tiles(Source, Output, rows, columns, *, LD: metile.constexpr = 16):
    scratch = metile.tensor(metile.shared(64, dtype="f32"), shape=(8, 8))
    source = metile.tensor(Source, shape=(rows, columns), strides=(1, LD), block_shape=(8, 8),
                           access="read")
    output = metile.tensor(Output, shape=(rows, columns), strides=(LD, 1), block_shape=(8, 8),
                           access="write")
    for row in metile.tile_range(0, rows, 8):
        for column in metile.tile_range(0, columns, 8):
            doubled = source.load((row, column), scratch=scratch) * 2.0
            output.store((row, column), doubled, scratch=scratch)


@pytest.mark.parametrize("rows, columns", [(16, 16), (13, 11), (3, 16)])
def test_column_major_views_with_ragged_extents(rows, columns):
    matrix = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    source = np.ascontiguousarray(matrix.T)  # source[c, r] = matrix[r, c]
    output = np.full((16, 16), SENTINEL, np.float32)
    column_major_tiles[(1,)](source, output, rows, columns, STRICT_MATH=True, SCHEDULE=INLINE)
    expected = np.full((16, 16), SENTINEL, np.float32)
    expected[:rows, :columns] = 2 * matrix[:rows, :columns]
    np.testing.assert_array_equal(output, expected)


def test_the_complete_iterations_are_peeled():
    dispatch = masked_tiles[(1,)].prepare(np.zeros((9, 8), np.float32), np.array([9], np.int32),
                                          np.zeros((9, 8), np.float32), STRICT_MATH=True,
                                          SCHEDULE=INLINE)
    report = dispatch.execution_report
    passes = {p["name"]: p["changed"] for p in report["passes"]}
    assert passes["peel_complete_iterations"] is True
    [peeled] = report["peeled_loops"]
    assert peeled["device_tiles"] == 2 and peeled["loop"].endswith("test_device_tiles.py:38")
    assert re.fullmatch(r"%\w+ \+ 8 <= %\w+", peeled["complete_when"]), peeled
    # Two loops over rows: the first one's tiles are one matrix access each, with no scratch
    # path; only the remainder's have the scratch copies and their SIMD-group barriers.
    body = dispatch.source.split("masked_tiles_body(", 1)[1]
    first, remainder = body.split("for (int i")[1:]
    barrier = "__syncwarp" if metile.device() == "cuda" else "simdgroup_barrier"
    assert barrier not in first and remainder.count(barrier) == 4


# A fragment and a scalar carried across the peeled loop's two portions.
@metile.kernel
def tile_sums(Source, Control, Total, Count, *, BLOCK: metile.constexpr = 32):
    scratch = metile.tensor(metile.shared(BLOCK * 2, dtype="f32"), shape=(BLOCK // 4, 8))
    rows = metile.tensor(Control, shape=(1,), access="read").load((0,))
    source = metile.tensor(Source, shape=(rows, 8), strides=(8, 1), block_shape=(8, 8),
                           access="read")
    total = metile.tensor(Total, shape=(8, 8), strides=(8, 1), block_shape=(8, 8),
                          access="write")
    acc = metile.loop_state(metile.zeros((8, 8)))
    count = 0
    for row in metile.tile_range(0, rows, 8):
        acc = acc + source.load((row, 0), scratch=scratch)
        count = count + 1
    total.store((0, 0), acc, scratch=scratch)
    metile.store(Count, count)


@pytest.mark.parametrize("rows", ROW_COUNTS)
def test_loop_state_continues_across_the_peeled_portions(rows):
    source = np.arange(max(rows, 1) * 8, dtype=np.float32).reshape(-1, 8)
    total, count = np.zeros((8, 8), np.float32), np.zeros(1, np.int32)
    tile_sums[(1,)](source, np.array([rows], np.int32), total, count, STRICT_MATH=True,
                    SCHEDULE=INLINE)
    padded = np.zeros((-(-rows // 8) * 8, 8), np.float32)
    padded[:rows] = source[:rows]
    np.testing.assert_array_equal(total, padded.reshape(-1, 8, 8).sum(axis=0))
    assert count[0] == -(-rows // 8)


def test_device_tiles_under_a_permuted_lane_map():
    env = dict(os.environ, METILE_HOST_MATRIX_LANE_MAP="permuted")
    code = ("import sys; sys.path.insert(0, %r); import test_device_tiles as t\n"
            "for rows in t.ROW_COUNTS:\n"
            "    t.test_masked_tiles_as_written(rows); t.test_masked_tiles_in_f16(rows)\n"
            "    t.test_loop_state_continues_across_the_peeled_portions(rows)\n"
            "t.test_column_major_views_with_ragged_extents(13, 11)"
            % os.path.dirname(__file__))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


# ---- contract violations -------------------------------------------------------------------
@metile.kernel
def misuse(Source, Output, *, CASE: metile.constexpr = ""):
    memory = metile.shared(64, dtype="f32")
    scratch = metile.tensor(memory, shape=(8, 8))
    source = metile.tensor(Source, shape=(8, 8), strides=(8, 1), block_shape=(8, 8),
                           access="read")
    output = metile.tensor(Output, shape=(8, 8), strides=(8, 1), block_shape=(8, 8),
                           access="write")
    if CASE == "no scratch":
        output.store((0, 0), source.load((0, 0)), scratch=scratch)
    if CASE == "device scratch":
        output.store((0, 0), source.load((0, 0), scratch=source), scratch=scratch)
    if CASE == "scratch shape":
        small = metile.tensor(memory, shape=(4, 8))
        output.store((0, 0), source.load((0, 0), scratch=small), scratch=small)
    if CASE == "scratch strides":
        padded = metile.tensor(memory, shape=(8, 8), strides=(16, 1))
        output.store((0, 0), source.load((0, 0), scratch=padded), scratch=padded)
    if CASE == "scratch access":
        read_only = metile.tensor(memory, shape=(8, 8), access="read")
        output.store((0, 0), source.load((0, 0), scratch=read_only), scratch=read_only)
    if CASE == "scratch dtype":
        halves = metile.tensor(metile.shared(64, dtype="f16"), shape=(8, 8))
        output.store((0, 0), source.load((0, 0), scratch=halves), scratch=scratch)
    if CASE == "offset alias":
        alias = metile.tensor(memory + 8, shape=(8, 8))
        output.store((0, 0), source.load((0, 0), scratch=alias), scratch=scratch)
    if CASE == "scalar use":
        output.store((0, 0), source.load((0, 0), scratch=scratch), scratch=scratch)
        scratch.store((0, 0), 1.0)
    if CASE == "matrix view":
        view = metile.tensor(memory, shape=(8, 8), block_shape=(8, 8))
        output.store((0, 0), source.load((0, 0), scratch=scratch) + view.load((0, 0)),
                     scratch=scratch)
    if CASE == "read and write":
        both = metile.tensor(Output, shape=(8, 8), strides=(8, 1), block_shape=(8, 8))
        fragment = both.load((0, 0), scratch=scratch)
        metile.barrier()
        both.store((0, 0), fragment, scratch=scratch)
    if CASE == "scalar alias":
        output.store((0, 0), source.load((0, 0), scratch=scratch), scratch=scratch)
        metile.barrier()
        metile.store(Output + metile.thread_id(), metile.load(Output + metile.thread_id()))
    if CASE == "varying origin":
        output.store((metile.thread_id(), 0), source.load((0, 0), scratch=scratch),
                     scratch=scratch)
    if CASE == "load of a write view":
        output.load((0, 0), scratch=scratch)


@pytest.mark.parametrize("case, error, message", [
    ("no scratch", metile.CompilationError,
     r"tensor.load: a device tile needs scratch= for incomplete tiles: a metile.tensor over a "
     r"metile.shared allocation of shape \(BLOCK // 4, 8\)"),
    ("device scratch", metile.CompilationError, r"scratch= must be a metile.tensor over a "
     r"metile.shared allocation .*, got DeviceTileView"),
    ("scratch shape", metile.CompilationError,
     r"device_tile_load: scratch= must have shape \(BLOCK // 4, 8\) = \(8, 8\): 64 elements "
     r"for each of the kernel's 1 SIMD groups \(32 threads\), got shape \(4, 8\)"),
    ("scratch strides", metile.CompilationError,
     r"scratch= must have strides \(8, 1\), got \(16, 1\)"),
    ("scratch access", metile.CompilationError,
     r"scratch= must have read/write access, got 'read'"),
    ("scratch dtype", metile.CompilationError,
     r"scratch= must have the device tensor's dtype f32, got f16"),
    ("offset alias", metile.CompilationError,
     r"device_tile_load: in kernel 'misuse', scratch= must reference a metile.shared "
     r"allocation directly, but %\w+ is an offset alias of it"),
    ("scalar use", metile.CompilationError,
     r"is the scratch= of device tile accesses, which the compiler synchronises itself, so "
     r"nothing else may use it \(no scalar access, other matrix view or offset alias\); "
     r"(ptr_add|store) at .*test_device_tiles.py:\d+ does"),
    ("matrix view", metile.CompilationError,
     r"matrix_load at .*test_device_tiles.py:\d+ does"),
    ("read and write", metile.CompilationError,
     r"device buffer 'Output' is accessed by matrix operations \(device_tile_load at .*\) and "
     r"is both read \(device_tile_load at .*\) and written \(device_tile_store at .*\) in the "
     r"kernel; this is rejected even with metile.barrier\(\), which orders threadgroup memory "
     r"only"),
    ("scalar alias", metile.CompilationError,
     r"device buffer 'Output' is accessed by matrix operations \(device_tile_store at .*\) and "
     r"is both read \(load at .*\) and written"),
    ("varying origin", metile.CompilationError,
     r"the device tile's row origin %\w+ differs between threads .*it must be uniform here"),
    ("load of a write view", metile.CompilationError,
     r"tensor.load: the device tile view was declared access='write'"),
])
def test_contract_violations_are_named(case, error, message):
    source = np.zeros((8, 8), np.float32)
    with pytest.raises(error, match=message):
        misuse[(1,)](source, np.zeros((8, 8), np.float32), CASE=case, SCHEDULE=INLINE)


@pytest.mark.parametrize("declare, message", [
    (dict(shape=(8, 8, 8)), r"a device tile view has rank two, got shape \(8, 8, 8\)"),
    (dict(shape=(8, 8), strides=(8, 2)), r"strides are constant and positive, row-major "
     r"\(n, 1\) or column-major \(1, n\), got \(8, 2\)"),
    (dict(shape=(8, 8), strides=(-8, 1)), r"got \(-8, 1\)"),
])
def test_device_views_are_rank_two_with_constant_strides(declare, message):
    @metile.kernel
    def view(Source):
        metile.tensor(Source, block_shape=(8, 8), access="read", **declare)

    with pytest.raises(metile.NotSupportedError, match=message):
        view[(1,)](np.zeros((8, 8), np.float32), SCHEDULE=INLINE)


def test_device_views_hold_f16_or_f32():
    @metile.kernel
    def view(Source):
        metile.tensor(Source, shape=(8, 8), block_shape=(8, 8), access="read")

    with pytest.raises(metile.NotSupportedError, match="device tile views hold f16 or f32, got i32"):
        view[(1,)](np.zeros((8, 8), np.int32), SCHEDULE=INLINE)
