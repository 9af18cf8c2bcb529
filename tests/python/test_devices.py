"""Device choice and GPU memory as kernel arguments. Without a GPU: metile.device() is
host and GPU objects are clear errors. On the cuda device with torch: tensors are used in
place and launches go on torch's current stream."""

import json
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
    """Says it is on CUDA device 0 and hands out a (host) DLPack capsule to parse; records
    the consumer stream it was asked for."""

    def __init__(self, array):
        self.array = array
        self.streams = []

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
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
    tensor = FakeDlpackGpuTensor(array)
    gpu = gpu_array(tensor)
    assert (gpu.address, gpu.nbytes, gpu.dtype, gpu.shape) == (array.ctypes.data, 24, "i32", (2, 3))
    # The consumer's stream, as the DLPack protocol asks: the legacy default stream (1),
    # where a launch of arguments without a stream of their own goes.
    assert tensor.streams == [1]
    assert gpu.stream is None


@pytest.mark.skipif(metile.device() != "host", reason="the host device's rule")
def test_gpu_memory_on_the_host_device_is_a_clear_error():
    x = np.ones(8, np.float32)
    with pytest.raises(TypeError, match="argument 'x' is GPU memory .*runs on the host device"):
        add[(1,)](FakeCudaArray(), x, x, 8, BLOCK=8)
    with pytest.raises(TypeError, match="Buffer.*GPU memory"):
        metile.Buffer(data=FakeCudaArray())


# ---- launch modes, timing, and building another tree's source -------------------------

def test_a_prepared_dispatch_is_timed_and_numpy_launches_wait():
    x = np.arange(300, dtype=np.float32)
    out = np.zeros(300, np.float32)
    dispatch = add[(2,)].prepare(x, x, out, 300, BLOCK=256)
    assert not dispatch.asynchronous  # caller memory is copied back: the launch waits
    elapsed_ms = dispatch.time()
    assert isinstance(elapsed_ms, float) and elapsed_ms > 0
    np.testing.assert_array_equal(out, 2 * x)
    assert add[(0,)].prepare(x, x, out, 300, BLOCK=256).time() == 0.0  # nothing launched
    metile.synchronize()  # nothing left to wait for


def test_another_source_of_the_same_kernel_runs_in_a_prepared_dispatch():
    x = np.arange(300, dtype=np.float32)
    out = np.zeros(300, np.float32)
    dispatch = add[(2,)].prepare(x, x, out, 300, BLOCK=256)
    exported = json.loads(json.dumps(dispatch.abi))  # as the regression harness passes it
    built = _core.build_kernel(metile.device(), dispatch.source, exported)
    assert (built.name, built.device, built.source) == ("add", metile.device(), dispatch.source)
    assert built.abi == dispatch.abi
    other = dispatch.with_kernel(built)
    assert other.source == dispatch.source and other.grid == dispatch.grid
    other()
    np.testing.assert_array_equal(out, 2 * x)


def test_build_kernel_keeps_the_tensor_maps_and_persistent_tiles_of_the_abi():
    # sm90's tensor_ops kernels carry both (docs/hopper.md); a source rebuilt from an exported
    # ABI must launch with them, or its launch fails for want of its tensor map parameters.
    x = np.zeros(8, np.float32)
    dispatch = add[(1,)].prepare(x, x, x, 8, BLOCK=8)
    abi = json.loads(json.dumps(dispatch.abi))
    assert abi["tensor_maps"] == [] and abi["persistent"] is None
    abi["tensor_maps"] = [{"buffer": 0, "outer": {"param": 3, "value": 0},
                           "inner": {"param": -1, "value": 64}, "box_outer": 128,
                           "box_inner": 64}]
    abi["persistent"] = {"rows": {"param": 3, "value": 0}, "columns": {"param": -1, "value": 64},
                         "block_m": 128, "block_n": 256}
    built = _core.build_kernel(metile.device(), dispatch.source, abi)
    assert json.loads(json.dumps(built.abi)) == abi
    abi["tensor_maps"][0].pop("box_inner")
    with pytest.raises(ValueError, match=r"tensor_maps\[0\] has no 'box_inner'"):
        _core.build_kernel(metile.device(), dispatch.source, abi)


def test_with_kernel_rejects_a_kernel_of_other_parameters():
    x = np.zeros(8, np.float32)
    dispatch = add[(1,)].prepare(x, x, x, 8, BLOCK=8)
    abi = dict(dispatch.abi)
    abi["params"] = [dict(p) for p in abi["params"]]
    abi["params"][3]["dtype"] = "i64"
    built = _core.build_kernel(metile.device(), dispatch.source, abi)
    with pytest.raises(ValueError, match=r"takes .*'n', 'scalar', 'i64'.* binds .*'n', 'scalar', 'i32'"):
        dispatch.with_kernel(built)


@pytest.mark.parametrize("change, message", [
    (lambda abi: abi.pop("params"), "the ABI has no 'params'"),
    (lambda abi: abi.update(threads_per_threadgroup=[0, 1, 1]), "must be positive"),
    (lambda abi: abi.update(threads_per_threadgroup=[32, 1]), "must have 3 entries"),
    (lambda abi: abi["params"][0].update(kind="pointer"),
     r"params\[0\]'s kind is 'pointer', not buffer or scalar"),
    (lambda abi: abi["params"][1].update(dtype="f8"), r"params\[1\]: dtype: unknown dtype 'f8'"),
    (lambda abi: abi.update(threadgroup_bytes="many"), "'threadgroup_bytes' has the wrong type"),
])
def test_build_kernel_names_the_malformed_abi_field(change, message):
    x = np.zeros(8, np.float32)
    dispatch = add[(1,)].prepare(x, x, x, 8, BLOCK=8)
    abi = dict(dispatch.abi)
    abi["params"] = [dict(p) for p in abi["params"]]
    change(abi)
    with pytest.raises(ValueError, match=message):
        _core.build_kernel(metile.device(), dispatch.source, abi)


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")
def test_build_kernel_and_synchronize_on_an_unavailable_gpu_say_why():
    x = np.zeros(8, np.float32)
    abi = add[(1,)].prepare(x, x, x, 8, BLOCK=8).abi
    with pytest.raises(metile.CompilationError, match="device 'cuda' is not available"):
        _core.build_kernel("cuda", "extern \"C\" __global__ void add() {}", abi)
    with pytest.raises(metile.CompilationError, match="device 'cuda' is not available"):
        _core.synchronize("cuda")


@metile.kernel
def wild_store(out, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    metile.store(out + offs * 4_000_000, metile.zeros([BLOCK], metile.float32))


@pytest.mark.skipif(metile.device() != "host", reason="the host emulator's fault")
def test_a_kernel_fault_is_a_kernel_fault_error():
    # A run-time fault, not a broken rule of the language (issue 9: its own class).
    assert issubclass(metile.KernelFaultError, RuntimeError)
    assert not issubclass(metile.KernelFaultError, metile.CompilationError)
    # The bounds checks catch the store before it touches memory (docs/host_emulator.md).
    with pytest.raises(metile.KernelFaultError, match="out-of-bounds access in kernel "
                       "'wild_store'.*past the end of buffer 0 \\('out'"):
        wild_store[(1,)](np.zeros(256, np.float32), BLOCK=256)


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


def test_launches_on_torch_tensors_are_asynchronous_and_time_waits():
    torch = _torch_cuda()
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("this torch has no torch.cuda._sleep to keep the GPU busy")
    n = 1 << 22
    x = torch.ones(n, device="cuda")
    out = torch.zeros(n, device="cuda")
    dispatch = add[(metile.cdiv(n, 1024),)].prepare(x, x, out, n, BLOCK=1024)
    assert dispatch.asynchronous
    torch.cuda._sleep(50_000_000)  # the GPU is busy: a launch that waited would block here
    dispatch()
    assert not torch.cuda.current_stream().query()  # queued behind the sleep, not finished
    metile.synchronize()
    assert out.sum().item() == 2.0 * n
    assert dispatch.time() > 0


def test_a_dispatch_with_a_metile_buffer_waits():
    torch = _torch_cuda()
    x = torch.ones(64, device="cuda")
    out = metile.Buffer.zeros(64)
    assert not add[(1,)].prepare(x, x, out, 64, BLOCK=64).asynchronous


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


_WILD_STORE = """
import metile
import torch

@metile.kernel
def wild_store(out, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    metile.store(out + offs * 4_000_000, metile.zeros([BLOCK], metile.float32))

out = torch.zeros(256, device="cuda")
wild_store[(1,)](out, BLOCK=256)  # queued: returns without waiting
print("launched", flush=True)
try:
    metile.synchronize()
except metile.KernelFaultError as e:
    print(e, flush=True)
    raise SystemExit(3)
"""


def test_an_asynchronous_fault_surfaces_at_synchronize_naming_the_kernel(tmp_path):
    _torch_cuda()
    import subprocess
    import sys

    # The fault leaves the CUDA context unusable: it happens in a process of its own (from a
    # file, since the tracer reads the kernel's source).
    script = tmp_path / "wild_store.py"
    script.write_text(_WILD_STORE)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("launched\n")
    assert "kernel 'wild_store' faulted on the GPU" in done.stdout
    assert "It is the last kernel meTile launched" in done.stdout
