"""METILE_DEBUG=bounds on the cuda device (issue 34; docs/reliability.md, "Out-of-bounds
accesses"): every device access of a kernel is checked against its buffer's extent, and the
launch raises the first access outside as a KernelFaultError naming the kernel, threadgroup,
thread, buffer, byte offset and source line, as the host emulator does. The probes are those of
test_bounds.py: reads 1, 2, 3, 15 and 16 bytes past the end, one element and 100,000 elements
past, with a constant or a runtime offset, for f32, f16, i32 and bf16; writes; and a masked
kernel that stays inside. They run on a GPU (METILE_DEVICE=cuda); the runtime's parts that need
none (the extents of torch tensors, the compile-cache key) are tested on any device.

Which thread records the fault is the GPU's choice (the first to claim the record), and an
access may be a whole vector (up to 16 bytes), so the probes check that the reported access
is one of the kernel's accesses that reach past the end, not which one."""

import re

import numpy as np
import pytest

import metile
from bounds_probes import (BLOCK, CASES, DTYPES, N, launch, line_of, masked_copy, read_constant,
                           read_runtime, write_past)
from metile.launch import storage_extent

on_cuda = pytest.mark.skipif(metile.device() != "cuda",
                             reason="the CUDA bounds checks run on an NVIDIA GPU "
                                    "(METILE_DEVICE=cuda)")


@pytest.fixture
def bounds(monkeypatch):
    monkeypatch.setenv("METILE_DEBUG", "bounds")


def access_bytes(error, kind):
    found = re.search(rf"\(a (\d+)-byte {kind}\)", str(error))
    assert found, str(error)
    return int(found.group(1))


def expect_fault_past_the_end(error, kernel, buffer, extent, size, first, last, kind):
    """The fault of an access of elements first..last (those a tile touches; vectors of up to
    16 bytes) that reaches past the end of `buffer`, `extent` bytes long."""
    assert error.kernel == kernel
    assert error.buffer == buffer
    assert error.thread is not None and error.threadgroup == (0, 0, 0)
    bytes_ = access_bytes(error, kind)
    assert bytes_ % size == 0 and size <= bytes_ <= 16
    assert error.offset % size == 0
    assert first * size <= error.offset <= last * size
    assert error.offset + bytes_ > extent, "the reported access reaches past the end"
    assert f"out-of-bounds access in kernel '{kernel}' (threadgroup (0,0,0), thread " in str(error)
    assert f"past the end of buffer 0 ('{buffer}', {extent} bytes) (a {bytes_}-byte {kind})" \
        in str(error)


@on_cuda
@pytest.mark.parametrize("constant", [False, True], ids=["runtime_offset", "constant_offset"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_a_read_past_the_end_is_an_error_naming_kernel_buffer_and_line(bounds, dtype_name, case,
                                                                         constant):
    dtype = DTYPES[dtype_name]
    kernel = read_constant if constant else read_runtime
    target = CASES[case](dtype)
    text = "constant-offset read" if constant else "runtime-offset read"
    with pytest.raises((metile.KernelFaultError, metile.CompilationError)) as info:
        launch(kernel, dtype, target, constant)
    error = info.value
    assert error.line == line_of(kernel.fn, text)
    if isinstance(error, metile.CompilationError):
        # A constant offset the compiler proves outside may be refused before any launch.
        assert constant, str(error)
        return
    size = np.dtype(dtype).itemsize
    expect_fault_past_the_end(error, kernel.fn.__name__, "X", N * size, size,
                              target - (BLOCK - 1), target, "read")


@on_cuda
@pytest.mark.parametrize("constant", [False, True], ids=["runtime_offset", "constant_offset"])
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_the_last_element_is_in_bounds(bounds, dtype_name, constant):
    dtype = DTYPES[dtype_name]
    x, out = launch(read_constant if constant else read_runtime, dtype, N - 1, constant)
    np.testing.assert_array_equal(out, x[N - BLOCK:])


@on_cuda
def test_a_read_before_the_start_is_an_error(bounds):
    with pytest.raises(metile.KernelFaultError, match="is before the start of buffer 0") as info:
        launch(read_runtime, np.float32, BLOCK - 2, False)
    assert info.value.offset < 0 and info.value.offset % 4 == 0


@on_cuda
def test_a_write_past_the_end_is_an_error_and_writes_nothing_outside(bounds):
    out = np.zeros(N, np.float32)
    with pytest.raises(metile.KernelFaultError) as info:
        write_past[(1,)](out, N, BLOCK=64)
    expect_fault_past_the_end(info.value, "write_past", "out", N * 4, 4, 0, N, "write")
    assert info.value.line == line_of(write_past.fn, "one too many")


@on_cuda
def test_masked_off_lanes_are_not_checked_and_the_result_is_exact(bounds):
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    masked_copy[(1,)](x, out, N, BLOCK=64)
    np.testing.assert_array_equal(out, x)


@on_cuda
def test_a_fault_leaves_the_gpu_usable(bounds):
    with pytest.raises(metile.KernelFaultError):
        launch(read_runtime, np.float32, N, False)
    x, out = launch(read_runtime, np.float32, N - 1, False)
    np.testing.assert_array_equal(out, x[N - BLOCK:])


@on_cuda
def test_without_the_option_no_check_is_compiled(monkeypatch):
    monkeypatch.delenv("METILE_DEBUG", raising=False)
    plain = read_runtime.compile(np.zeros(N, np.float32), np.zeros(BLOCK, np.float32), 0,
                                 BLOCK=BLOCK)
    assert "metile_in_bounds" not in plain.source
    monkeypatch.setenv("METILE_DEBUG", "bounds")
    checked = read_runtime.compile(np.zeros(N, np.float32), np.zeros(BLOCK, np.float32), 0,
                                   BLOCK=BLOCK)
    assert "metile_in_bounds(" in checked.source and checked.abi["bounds_checks"]


# ---- torch tensors: the extent is the storage's -------------------------------------------

def cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    return torch


@on_cuda
def test_a_torch_tensor_is_bounded_by_the_end_of_its_storage(bounds):
    torch = cuda_torch()
    base = torch.arange(2 * N, dtype=torch.float32, device="cuda")
    out = torch.zeros(BLOCK, dtype=torch.float32, device="cuda")
    # Reading past the view's end but inside its storage reads the caller's own memory.
    read_runtime[(1,)](base[:N], out, N, BLOCK=BLOCK)
    torch.testing.assert_close(out.cpu(), base[N:N + BLOCK].cpu())
    # Past the storage's end: the launch waits and raises at the call.
    with pytest.raises(metile.KernelFaultError) as info:
        read_runtime[(1,)](base[N:], out, N - BLOCK + 1, BLOCK=BLOCK)
    expect_fault_past_the_end(info.value, "read_runtime", "X", N * 4, 4, N - BLOCK + 1, N,
                              "read")


# ---- without a GPU -------------------------------------------------------------------------

class _Owner:
    """torch.Tensor's storage API, as storage_extent reads it."""

    def __init__(self, storage_bytes, offset_elements, element_size):
        self._bytes, self._offset, self._size = storage_bytes, offset_elements, element_size

    def untyped_storage(self):
        return type("Storage", (), {"nbytes": lambda _: self._bytes})()

    def storage_offset(self):
        return self._offset

    def element_size(self):
        return self._size


def test_a_tensors_extent_runs_to_the_end_of_its_storage():
    from metile.buffer import GpuArray

    view = GpuArray(0x1000, 40, "f32", (10,), _Owner(400, 30, 4), "torch CUDA tensor")
    assert storage_extent(view) == 400 - 30 * 4
    other = GpuArray(0x1000, 40, "f32", (10,), object(), "__cuda_array_interface__")
    assert storage_extent(other) == 40, "memory whose allocation is unknown: its own bytes"
    empty = GpuArray(0, 0, "f32", (0,), _Owner(400, 0, 4), "torch CUDA tensor")
    assert storage_extent(empty) == 0


def test_storage_extent_reads_torch_as_it_is():
    torch = pytest.importorskip("torch")
    base = torch.zeros(100, dtype=torch.float16)
    from metile.buffer import GpuArray

    view = base[30:40]
    gpu = GpuArray(view.data_ptr(), view.numel() * 2, "f16", (10,), view, "torch tensor")
    assert storage_extent(gpu) == (100 - 30) * 2


def test_a_bounds_build_is_a_separate_specialisation(monkeypatch):
    @metile.kernel
    def copy(X, out, BLOCK: metile.constexpr):
        offs = metile.arange(0, BLOCK)
        metile.store(out + offs, metile.load(X + offs))

    x, out = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    monkeypatch.delenv("METILE_DEBUG", raising=False)
    copy[(1,)](x, out, BLOCK=16)
    compiles = copy.stats.compiles
    monkeypatch.setenv("METILE_DEBUG", "bounds")
    copy[(1,)](x, out, BLOCK=16)
    assert copy.stats.compiles == compiles + 1
    compiled = copy.compile(x, out, BLOCK=16)
    # The host emulator checks every access anyway; CUDA compiles the recorded checks.
    assert compiled.abi["bounds_checks"] == (metile.device() == "cuda")
    np.testing.assert_array_equal(out, x)
