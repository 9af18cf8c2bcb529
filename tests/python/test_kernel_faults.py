"""Run-time faults of kernels on the host emulator: each is a metile.KernelFaultError (not a
CompilationError) naming the kernel and the kernel's source line, and the process stays
usable afterwards. Integer division by a constant zero is a compile-time error."""

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import metile

pytestmark = pytest.mark.skipif(metile.device() != "host", reason="host emulator faults")


def line_of(function, text):
    source, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(source) if text in line)


@metile.kernel
def copy_without_mask(src, out, BLOCK: metile.constexpr):
    offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    x = metile.load(src + offs)
    metile.store(out + offs, x)


def test_an_out_of_bounds_store_names_the_line_buffer_offset_and_thread():
    src = np.arange(1024, dtype=np.float32)
    out = np.zeros(1000, np.float32)
    with pytest.raises(metile.KernelFaultError) as info:
        copy_without_mask[(4,)](src, out, BLOCK=256)
    error = info.value
    assert not isinstance(error, metile.CompilationError)
    assert error.line == line_of(copy_without_mask.fn, "metile.store(out + offs, x)")
    assert error.file.endswith("test_kernel_faults.py")
    assert error.kernel == "copy_without_mask"
    assert error.buffer == "out" and error.offset == 4000
    assert error.threadgroup == (3, 0, 0)
    assert 0 <= error.thread < 256
    assert f"test_kernel_faults.py:{error.line}: out-of-bounds access in kernel " \
           "'copy_without_mask' (threadgroup (3,0,0)" in str(error)
    assert "is past the end of buffer 1 ('out', 4000 bytes)" in str(error)

    # The process stays usable: the same kernel runs where it fits.
    fits = np.zeros(1024, np.float32)
    copy_without_mask[(4,)](src, fits, BLOCK=256)
    np.testing.assert_array_equal(fits, src)


def test_integer_division_by_a_constant_zero_is_a_compile_time_error():
    @metile.kernel
    def divide_by_zero(x_ptr, out, BLOCK: metile.constexpr):
        offs = metile.arange(0, BLOCK)
        metile.store(out + offs, metile.load(x_ptr + offs) // 0)

    x = np.arange(32, dtype=np.int32)
    with pytest.raises(metile.CompilationError,
                       match="div: integer division by zero \\(the divisor is the constant 0\\)"
                       ) as info:
        divide_by_zero[(1,)](x, np.zeros_like(x), BLOCK=32)
    assert info.value.line == line_of(divide_by_zero.fn, "// 0")


# Integer division by zero at run time used to kill the process (SIGILL from the host
# compiler's ud2), so it runs in a child process.
RUNTIME_ZERO_DIVISOR = textwrap.dedent("""
    import numpy as np
    import metile

    @metile.kernel
    def divide(x_ptr, out, d, BLOCK: metile.constexpr):
        offs = metile.arange(0, BLOCK)
        x = metile.load(x_ptr + offs)
        metile.store(out + offs, x {op} d)

    x = np.arange(1, 33, dtype=np.int32)
    out = np.zeros_like(x)
    divide[(1,)](x, out, 3, BLOCK=32)
    assert (out == x {op} 3).all(), out
    try:
        divide[(1,)](x, out, 0, BLOCK=32)
    except metile.KernelFaultError as e:
        print("line", e.line, "kernel", e.kernel, "thread", e.thread)
        print(e)
    divide[(1,)](x, out, 5, BLOCK=32)
    assert (out == x {op} 5).all(), out
    print("usable")
""")


@pytest.mark.parametrize("op", ["//", "%"])
def test_integer_division_by_a_runtime_zero_is_a_kernel_fault(op, tmp_path):
    script = tmp_path / "divide.py"
    script.write_text(RUNTIME_ZERO_DIVISOR.format(op=op))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    line = RUNTIME_ZERO_DIVISOR.splitlines().index(f"    metile.store(out + offs, x {{op}} d)") + 1
    assert f"line {line} kernel divide thread 0" in run.stdout
    assert "arithmetic fault in kernel 'divide' (threadgroup (0,0,0), thread 0): an integer " \
           "division or remainder by zero" in run.stdout
    assert run.stdout.rstrip().endswith("usable")



# A loop whose step is zero or negative at run time used to run forever, so it runs in a
# child process with a timeout.
RUNTIME_LOOP_STEP = textwrap.dedent("""
    import numpy as np
    import metile

    @metile.kernel
    def strided_sum(x_ptr, out, n, step):
        acc = 0
        for i in metile.tile_range(0, n, step):
            acc += metile.load(x_ptr + i)
        metile.store(out, acc)

    x = np.arange(1, 9, dtype=np.int32)
    out = np.zeros(1, dtype=np.int32)
    try:
        strided_sum[(1,)](x, out, 8, {step})
    except metile.KernelFaultError as e:
        print("line", e.line, "kernel", e.kernel)
        print(e)
    strided_sum[(1,)](x, out, 8, 2)
    assert out[0] == 1 + 3 + 5 + 7, out
    print("usable")
""")


@pytest.mark.parametrize("step", [0, -1])
def test_a_runtime_loop_step_that_is_not_positive_is_a_kernel_fault(step, tmp_path):
    script = tmp_path / "loop_step.py"
    script.write_text(RUNTIME_LOOP_STEP.format(step=step))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    line = RUNTIME_LOOP_STEP.splitlines().index("    for i in metile.tile_range(0, n, step):") + 1
    assert f"line {line} kernel strided_sum" in run.stdout
    assert "arithmetic fault in kernel 'strided_sum'" in run.stdout
    assert "or a loop whose step is zero or negative" in run.stdout
    assert run.stdout.rstrip().endswith("usable")

@metile.kernel
def reverse_through_shared(x_ptr, out, SYNC: metile.constexpr, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    staged = metile.shared(BLOCK)
    metile.store(staged + offs, metile.load(x_ptr + offs))
    if SYNC:
        metile.barrier()
    metile.store(out + offs, metile.load(staged + (BLOCK - 1 - offs)))


@pytest.mark.skipif(os.environ.get("METILE_HOST_RACECHECK") != "1",
                    reason="race checks are on in tests (conftest.py), opt-in otherwise")
def test_a_threadgroup_memory_race_names_the_threads_offset_and_line():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    reverse_through_shared[(1,)](x, out, SYNC=True, BLOCK=64)
    np.testing.assert_array_equal(out, x[::-1])
    with pytest.raises(metile.KernelFaultError,
                       match="threadgroup memory race in kernel 'reverse_through_shared' "
                             "\\(threadgroup \\(0,0,0\\), thread \\d+\\): thread \\d+ writes byte "
                             "offset \\d+ of threadgroup memory, which thread \\d+ read since the "
                             "last threadgroup barrier") as info:
        reverse_through_shared[(1,)](x, out, SYNC=False, BLOCK=64)
    error = info.value
    assert error.line == line_of(reverse_through_shared.fn, "metile.store(staged + offs")
    assert error.kernel == "reverse_through_shared" and error.buffer is None
    assert error.offset is not None and error.thread is not None


@metile.kernel
def divide_and_shift(x_ptr, d_ptr, quotient, remainder, shifted, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    x = metile.load(x_ptr + offs)
    d = metile.load(d_ptr + offs)
    metile.store(quotient + offs, x // d)
    metile.store(remainder + offs, x % d)
    metile.store(shifted + offs, x << (32 - d))


def test_threads_that_own_no_element_do_not_fault_on_their_divisors():
    # A 4-element tile on 32 threads: threads 4..31 own nothing and their loads give 0, which
    # used to divide by zero and shift by 32 (found by the tracer fuzzer, seed 342).
    x = np.array([-7, 7, 100, -2**31], np.int32)
    d = np.array([2, 3, 31, 5], np.int32)
    quotient, remainder, shifted = (np.zeros(4, np.int32) for _ in range(3))
    divide_and_shift[(1,)](x, d, quotient, remainder, shifted, BLOCK=4)
    assert quotient.tolist() == np.trunc(x.astype(np.float64) / d).astype(np.int64).tolist()
    assert remainder.tolist() == np.fmod(x, d).tolist()
    expected = (x.astype(np.uint64) << (32 - d).astype(np.uint64)) & 0xFFFFFFFF
    assert shifted.tolist() == expected.astype(np.uint32).view(np.int32).tolist()


FLOAT_TO_INT = textwrap.dedent("""
    import numpy as np
    import metile

    @metile.kernel
    def truncate(x, out, BLOCK: metile.constexpr):
        offs = metile.arange(0, BLOCK)
        metile.store(out + offs, metile.load(x + offs).to(metile.int32))

    out = np.zeros(4, dtype=np.int32)
    truncate[(1,)](np.array([1.5, -2.5, 3e9 / 2, -7.0], np.float32), out, BLOCK=4)
    assert out.tolist() == [1, -2, 1500000000, -7], out
    for bad in (3e9, float("nan"), float("-inf")):
        try:
            truncate[(1,)](np.array([0.0, bad, 1.0, 2.0], np.float32), out, BLOCK=4)
            print("no fault for", bad)
        except metile.KernelFaultError as e:
            print("line", e.line, "thread", e.thread, "kernel", e.kernel,
                  "arithmetic fault" in str(e) and "cannot hold" in str(e))
    print("usable")
""")


def test_a_float_converted_to_an_integer_that_cannot_hold_it_is_a_kernel_fault(tmp_path):
    script = tmp_path / "truncate.py"
    script.write_text(FLOAT_TO_INT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    line = FLOAT_TO_INT.splitlines().index(
        "    metile.store(out + offs, metile.load(x + offs).to(metile.int32))") + 1
    assert run.stdout.count(f"line {line} thread 1 kernel truncate True") == 3, run.stdout
    assert run.stdout.rstrip().endswith("usable")
