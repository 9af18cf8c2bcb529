"""Device choice and GPU memory as kernel arguments. Without a GPU: metile.device() is
host and GPU objects are clear errors. On the cuda device with torch: tensors are used in
place and launches go on torch's current stream."""

import os

import numpy as np
import pytest

import metile
from metile import _core
from metile.buffer import gpu_array

HAS_GPU = _core.device_unavailable_reason("cuda") == ""


@metile.kernel
def add(x, y, out, n, BLOCK: metile.constexpr):
    offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offs < n
    metile.store(out + offs, metile.load(x + offs, mask) + metile.load(y + offs, mask), mask)


class FakeCudaArray:
    """Claims GPU memory through __cuda_array_interface__ (never dereferenced here)."""

    def __init__(self, shape=(8,), typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (0x7000_0000, False), "version": 3}


class FakeDlpackGpuTensor:
    """Says it is on CUDA device 0 and hands out a (host) DLPack capsule to parse."""

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()


def test_the_device_is_cuda_exactly_when_a_gpu_is_present():
    if os.environ.get("METILE_DEVICE"):
        assert metile.device() == os.environ["METILE_DEVICE"]
    else:
        assert metile.device() == ("cuda" if HAS_GPU else "host")
    assert "host" in _core.devices()


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
def test_without_a_gpu_the_reason_is_given():
    assert "cu" in _core.device_unavailable_reason("cuda")  # libcuda / cuInit / CUDA error
    with pytest.raises(metile.CompilationError,
                       match="device 'cuda' is not available on this machine"):
        _core.DeviceBuffer.allocate("cuda", "f32", [4])


def test_cuda_array_interface_objects_are_described_without_copies():
    gpu = gpu_array(FakeCudaArray((4, 8), "<f2"))
    assert (gpu.address, gpu.nbytes, gpu.dtype, gpu.shape) == (0x7000_0000, 64, "f16", (4, 8))
    with pytest.raises(ValueError, match="C-contiguous"):
        gpu_array(FakeCudaArray((4, 8), "<f4", strides=(4, 16)))
    # A dimension of extent 1 may have any stride (as in DLPack): the memory is contiguous.
    assert gpu_array(FakeCudaArray((1, 8), "<f4", strides=(4, 4))).shape == (1, 8)
    assert gpu_array(np.zeros(4, np.float32)) is None


def test_cuda_dlpack_tensors_are_parsed_in_place():
    array = np.arange(6, dtype=np.int32).reshape(2, 3)
    gpu = gpu_array(FakeDlpackGpuTensor(array))
    assert (gpu.address, gpu.nbytes, gpu.dtype, gpu.shape) == (array.ctypes.data, 24, "i32", (2, 3))


@pytest.mark.skipif(metile.device() != "host", reason="the host device's rule")
def test_gpu_memory_on_the_host_device_is_a_clear_error():
    x = np.ones(8, np.float32)
    with pytest.raises(TypeError, match="argument 'x' is GPU memory .*runs on the host device"):
        add[(1,)](FakeCudaArray(), x, x, 8, BLOCK=8)
    with pytest.raises(TypeError, match="Buffer.*GPU memory"):
        metile.Buffer(data=FakeCudaArray())


# ---- on the cuda device, with torch ---------------------------------------------------

def _torch_cuda():
    torch = pytest.importorskip("torch")
    if metile.device() != "cuda" or not torch.cuda.is_available():
        pytest.skip("needs the cuda device and torch with CUDA")
    return torch


def test_torch_cuda_tensors_are_used_in_place():
    torch = _torch_cuda()
    n = 1000
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.full((n,), 0.5, device="cuda")
    out = torch.empty(n, device="cuda")
    address = out.data_ptr()
    add[(metile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    assert out.data_ptr() == address
    torch.testing.assert_close(out, x + y)


def test_launches_go_on_the_current_torch_stream():
    torch = _torch_cuda()
    n = 1 << 20
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.ones(n, device="cuda")
        out = torch.zeros(n, device="cuda")
        add[(metile.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024)
        total = out.sum()  # ordered after the kernel on the same stream
    stream.synchronize()
    assert total.item() == 2.0 * n


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_and_bfloat_tensors(dtype):
    torch = _torch_cuda()
    x = torch.randn(300, device="cuda").to(getattr(torch, dtype))
    out = torch.empty_like(x)
    add[(2,)](x, x, out, 300, BLOCK=256)
    torch.testing.assert_close(out, x + x)


def test_mixing_host_and_gpu_arguments_is_a_clear_error():
    torch = _torch_cuda()
    x = torch.ones(8, device="cuda")
    with pytest.raises(TypeError, match="host memory .* GPU memory"):
        add[(1,)](x, np.ones(8, np.float32), x, 8, BLOCK=8)


def test_numpy_and_buffers_are_copied_in_and_out_on_the_gpu():
    _torch_cuda()
    x = np.arange(100, dtype=np.float32)
    out = metile.Buffer.zeros(100)
    add[(1,)](x, x, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out.numpy(), 2 * x)
