"""Errors name the user's file and line and the rule that was broken."""

import numpy as np
import pytest

import metile

X = np.zeros(64, np.float32)


def line_of(marker):
    with open(__file__, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(marker)


def expect_error(kernel, marker, rule, *args, error=metile.CompilationError, **kwargs):
    with pytest.raises(error) as caught:
        kernel.trace(*args, **kwargs)
    e = caught.value
    assert e.file == __file__
    assert e.line == line_of(marker)
    assert rule in e.rule
    assert str(e).startswith(f"{__file__}:{e.line}: ")
    return e


@metile.kernel
def mask_shape(x, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    metile.load(x + offs, mask=metile.arange(0, BLOCK // 2) < 3)  # mask-shape


def test_mask_shape_mismatch():
    expect_error(mask_shape, "mask-shape", "load: mask shape [32] does not match pointer shape [64]",
                 X, BLOCK=64)


@metile.kernel
def mixed_signedness(x, n):
    offs = metile.arange(0, 64)
    metile.store(x + offs, offs.to("u32") // n)  # mixed-signedness


def test_division_of_mixed_signedness():
    expect_error(mixed_signedness, "mixed-signedness",
                 "floordiv: cannot divide or take the remainder of u32 and i32: they differ in "
                 "signedness", X, 3)


@metile.kernel
def python_if(x, n):
    if metile.arange(0, 64) > n:  # python-if
        metile.store(x, 1.0)


def test_python_if_on_a_traced_tile():
    # An `if` on a traced scalar is a device `if` (tests/python/test_traced_if.py); on a tile
    # it is an error, as in Triton.
    expect_error(python_if, "python-if", "if: the condition `metile.arange(0, 64) > n` is a "
                 "tile<64xi1>, not a scalar", X, 5)


@metile.kernel
def python_while(x, n):
    i = metile.program_id(0)
    while i < n:  # python-while
        i = i + 1
        if i == 3:
            break


def test_break_in_a_while_on_a_traced_value():
    # A `while` on a traced scalar is a device loop (tests/python/test_traced_while.py);
    # `break` in it is rejected, as in Triton.
    expect_error(python_while, "python-while", "with `break` in its body is not supported", X,
                 5, error=metile.NotSupportedError)


@metile.kernel
def python_range(x, n):
    for i in range(n):  # python-range
        metile.store(x + i, 1.0)
        break


def test_python_for_with_break_over_traced_range():
    # range() over a traced bound is a device loop, but not with break: Python runs it
    expect_error(python_range, "python-range",
                 "a Python `for` loop that is not over metile.tile_range on a traced value", X, 5)


@metile.kernel
def python_and(x, n):
    flag = (n > 1) and metile.load  # python-and
    metile.store(x, metile.where(flag, 1.0, 0.0))


def test_python_and_on_traced_value():
    # `and` of traced values is their i1 `&` (tests/python/test_traced_if.py); a right side
    # that is neither a traced value nor a number has no truth value on the device.
    expect_error(python_and, "python-and", "and:", X, 5)


@metile.kernel
def escapes(x, n):
    for i in metile.tile_range(0, n, 64):
        v = metile.load(x + i + metile.arange(0, 64))
    metile.store(x + metile.arange(0, 64), v)  # escapes


def test_value_escapes_loop_body():
    expect_error(escapes, "escapes", "was defined inside the tile_range body", X, 64)


@metile.kernel
def type_change(x, n):
    acc = metile.zeros((64,), "f32")
    for i in metile.tile_range(0, n, 64):  # type-change
        acc = metile.load(x + i + metile.arange(0, 64)).to("f16")
    metile.store(x + metile.arange(0, 64), acc.to("f32"))


def test_carried_value_changes_type():
    expect_error(type_change, "type-change",
                 "loop-carried variable 'acc' changes type from tile<64xf32> to tile<64xf16>", X, 64)


@metile.kernel
def breaks(x, n):
    for i in metile.tile_range(0, n, 64):
        break  # break


def test_break_in_tile_range():
    expect_error(breaks, "break", "'break' cannot be used in a tile_range loop body", X, 64)


@metile.kernel
def not_built(x):
    metile.tile_swizzle(metile.arange(0, 64))  # not-built


def test_not_supported_is_a_compilation_error():
    e = expect_error(not_built, "not-built", "metile.tile_swizzle is not built yet", X,
                     error=metile.NotSupportedError)
    assert isinstance(e, metile.CompilationError)


@metile.kernel
def stores_read_only_tensor(x, n):
    t = metile.tensor(x, shape=(n,), access="read")
    t.store(metile.arange(0, 64), 1.0)  # read-only


def test_store_through_read_only_descriptor():
    expect_error(stores_read_only_tensor, "read-only",
                 "tensor.store: the tensor was declared with access='read'", X, 64)


def test_schedule_is_rejected_clearly():
    @metile.kernel
    def k(x):
        metile.store(x + metile.arange(0, 64), 1.0)

    with pytest.raises(metile.CompilationError,
                       match=r"Schedule\(backend='simdgroup'\) cannot be met for kernel 'k': "
                             "the kernel has no matrix work"):
        k[(1,)](X, SCHEDULE=metile.Schedule(backend="simdgroup"))
    with pytest.raises(ValueError, match="cannot both be True"):
        k[(1,)](X, STRICT_MATH=True, RELAXED_PRECISION=True)
    with pytest.raises(ValueError, match="num_simdgroups"):
        metile.Schedule(num_simdgroups=64)


def test_bad_launch_arguments():
    @metile.kernel
    def k(x, BLOCK: metile.constexpr):
        metile.store(x + metile.arange(0, BLOCK), 1.0)

    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOCKK'"):
        k[(1,)](X, BLOCKK=64)
    with pytest.raises(TypeError, match="missing argument 'BLOCK'"):
        k[(1,)](X)
    with pytest.raises(TypeError, match="complex64 has no meTile buffer dtype"):
        k[(1,)](np.zeros(64, np.complex64), BLOCK=64)
    with pytest.raises(TypeError, match=r"launch the kernel with k\[grid\]"):
        k(X, BLOCK=64)


def test_language_outside_a_kernel():
    with pytest.raises(metile.CompilationError, match="can only run while a @metile.kernel is traced"):
        metile.program_id(0)
