"""Every device access of a kernel run on the host emulator is checked against its buffer's
extent (issue 34): a read that ends 1 to 16 bytes past the end (inside the slack before the
guard page, which used to return the guard's fill bytes) and a read far beyond (which used to
land in other mapped memory) are KernelFaultErrors naming the kernel, the buffer, the byte
offset and the line, with the offset a constant or a launch argument, for each dtype."""


import numpy as np
import pytest

import metile
from bounds_probes import (BLOCK, CASES, DTYPES, N, launch, line_of, masked_copy, read_constant,
                           read_runtime, write_past)

pytestmark = pytest.mark.skipif(metile.device() != "host", reason="host emulator bounds checks")



@pytest.mark.parametrize("constant", [False, True], ids=["runtime_offset", "constant_offset"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_a_read_past_the_end_is_an_error_naming_kernel_buffer_and_line(dtype_name, case,
                                                                         constant):
    dtype = DTYPES[dtype_name]
    kernel = read_constant if constant else read_runtime
    target = CASES[case](dtype)
    with pytest.raises(metile.KernelFaultError) as info:
        launch(kernel, dtype, target, constant)
    error = info.value
    size = np.dtype(dtype).itemsize
    assert error.kernel == kernel.fn.__name__
    assert error.buffer == "X"
    first_outside = max(N, target - (BLOCK - 1))  # the first element past the end is reported
    assert error.offset == first_outside * size
    text = "constant-offset read" if constant else "runtime-offset read"
    assert error.line == line_of(kernel.fn, text)
    assert f"out-of-bounds access in kernel '{kernel.fn.__name__}'" in str(error)
    assert f"past the end of buffer 0 ('X', {N * size} bytes) (a {size}-byte read)" in str(error)


@pytest.mark.parametrize("constant", [False, True], ids=["runtime_offset", "constant_offset"])
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_the_last_element_is_in_bounds(dtype_name, constant):
    dtype = DTYPES[dtype_name]
    x, out = launch(read_constant if constant else read_runtime, dtype, N - 1, constant)
    np.testing.assert_array_equal(out, x[N - BLOCK:])


def test_a_read_before_the_start_is_an_error():
    with pytest.raises(metile.KernelFaultError, match="is before the start of buffer 0") as info:
        launch(read_runtime, np.float32, BLOCK - 2, False)
    assert info.value.offset == -4


def test_fibers_check_as_the_work_group_function_does(monkeypatch):
    monkeypatch.setenv("METILE_HOST_EXECUTION", "fibers")
    with pytest.raises(metile.KernelFaultError) as info:
        launch(read_runtime, np.float32, N, False)
    assert info.value.buffer == "X" and info.value.offset == N * 4
    assert info.value.thread is not None


def test_a_write_past_the_end_names_its_thread():
    out = np.zeros(N, np.float32)
    with pytest.raises(metile.KernelFaultError) as info:
        write_past[(1,)](out, N, BLOCK=64)
    error = info.value
    assert error.buffer == "out" and error.offset == N * 4 and error.thread is not None
    assert "(a 4-byte write)" in str(error)


def test_masked_off_lanes_are_not_checked():
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    masked_copy[(1,)](x, out, N, BLOCK=64)
    np.testing.assert_array_equal(out, x)
