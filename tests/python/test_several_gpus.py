"""Several GPUs: a launch runs on the GPU that holds its tensors, on torch's current stream
of that GPU, and arguments on several GPUs (or GPU and host memory together) are an error
naming them. The choice itself is checked everywhere with stand-ins for GPU tensors; the
launches need the cuda device and torch (one GPU), the cuda:1 tests a second GPU, and skip
saying so otherwise. The driver-level checks are tests/runtime/cuda_several_gpus_test.cc."""

import types

import numpy as np
import pytest

import metile
from metile import _core
from metile.buffer import gpu_array, launch_gpu
from metile.launch import _device_and_gpu


@metile.kernel
def add(x, y, out, n, BLOCK: metile.constexpr):
    offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offs < n
    metile.store(out + offs, metile.load(x + offs, mask) + metile.load(y + offs, mask), mask)


class FakeDlpackGpuTensor:
    """A host array that says it is on CUDA device `gpu` (never dereferenced here)."""

    def __init__(self, array, gpu):
        self.array, self.gpu = array, gpu

    def __dlpack_device__(self):
        return (2, self.gpu)

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()


# ---- the choice of GPU, without a GPU ----------------------------------------------------

def test_a_launch_runs_on_the_gpu_that_holds_its_arguments():
    assert launch_gpu("add", [("x", 1, 40), ("y", 1, 40), ("out", 1, 40)]) == 1
    assert launch_gpu("add", [("x", 0, 4)]) == 0
    # An argument that does not name its GPU (__cuda_array_interface__) goes with the rest;
    # the driver places it from its address.
    assert launch_gpu("add", [("x", None, 4), ("y", 2, 4)]) == 2
    assert launch_gpu("add", [("x", None, 4)]) is None
    assert launch_gpu("add", []) is None
    # An empty tensor is never dereferenced: it goes with any GPU.
    assert launch_gpu("add", [("x", 0, 0), ("y", 1, 8)]) == 1


def test_arguments_on_several_gpus_are_an_error_naming_them():
    with pytest.raises(ValueError) as error:
        launch_gpu("add", [("x", 1, 8), ("y", 0, 8), ("out", 1, 8)])
    assert str(error.value) == (
        "add: the GPU arguments are on different GPUs: 'y' on cuda:0; 'x', 'out' on cuda:1. A "
        "launch runs on one GPU, which must hold all of its arguments: move them to one device "
        "(tensor.to('cuda:N'))")


def test_a_dlpack_tensor_says_which_gpu_holds_it():
    array = np.arange(6, dtype=np.float32)
    assert gpu_array(FakeDlpackGpuTensor(array, 3)).gpu == 3
    assert gpu_array(FakeDlpackGpuTensor(array, 0)).gpu == 0


def test_synchronize_takes_a_device_or_one_of_its_gpus():
    assert _device_and_gpu(None) == ("", -1)
    assert _device_and_gpu(1) == ("cuda", 1)
    assert _device_and_gpu("cuda:2") == ("cuda", 2)
    assert _device_and_gpu("cuda") == ("cuda", -1)
    assert _device_and_gpu("host") == ("host", -1)
    # A torch.device, or anything with its type and index.
    assert _device_and_gpu(types.SimpleNamespace(type="cuda", index=1)) == ("cuda", 1)
    assert _device_and_gpu(types.SimpleNamespace(type="cuda", index=None)) == ("cuda", -1)
    with pytest.raises(ValueError, match="'cuda:x' is not a device name"):
        _device_and_gpu("cuda:x")
    with pytest.raises(TypeError, match="not float"):
        _device_and_gpu(1.0)
    metile.synchronize("host")
    metile.synchronize("host:0")
    with pytest.raises(metile.CompilationError, match="device 'host' has 1 GPU.*there is no GPU 1"):
        metile.synchronize("host:1")
    assert _core.gpu_count("host") == 1


# ---- on GPUs, with torch -----------------------------------------------------------------

def _torch_cuda(gpus=1):
    torch = pytest.importorskip("torch")
    if metile.device() != "cuda" or not torch.cuda.is_available():
        pytest.skip("needs the cuda device and torch with CUDA")
    if torch.cuda.device_count() < gpus:
        pytest.skip(f"needs {gpus} GPUs; torch sees {torch.cuda.device_count()}")
    return torch


def test_the_cuda_device_drives_every_visible_gpu():
    torch = _torch_cuda()
    assert _core.gpu_count("cuda") == torch.cuda.device_count()
    x = torch.ones(100, device="cuda:0")
    out = torch.empty_like(x)
    dispatch = add[(1,)].prepare(x, x, out, 100, BLOCK=128)
    assert dispatch.gpu == 0
    dispatch()
    metile.synchronize(0)
    metile.synchronize(torch.device("cuda", 0))
    metile.synchronize("cuda:0")
    torch.testing.assert_close(out, x + x)
    with pytest.raises(metile.CompilationError, match="there is no GPU cuda:99"):
        metile.synchronize(99)


def test_a_kernel_on_cuda_1_runs_there_on_that_gpus_current_stream():
    torch = _torch_cuda(gpus=2)
    torch.cuda.set_device(0)
    n = 1000  # ragged: the last block is masked
    x = torch.arange(n, dtype=torch.float32, device="cuda:1")
    y = torch.full((n,), 0.5, device="cuda:1")
    out = torch.empty(n, device="cuda:1")
    stream = torch.cuda.Stream(device=1)
    with torch.cuda.stream(stream):  # cuda:1's current stream; cuda:0 stays current
        dispatch = add[(metile.cdiv(n, 256),)].prepare(x, y, out, n, BLOCK=256)
        assert dispatch.gpu == 1 and dispatch.asynchronous
        dispatch()
        total = out.sum()  # ordered after the kernel on the same stream
    stream.synchronize()
    torch.testing.assert_close(out, x + y)
    assert total.item() == float((x + y).sum().item())
    assert torch.cuda.current_device() == 0
    metile.synchronize(1)
    # A numpy launch after it still runs where torch's current device is.
    host = np.arange(n, dtype=np.float32)
    result = np.zeros(n, np.float32)
    add[(metile.cdiv(n, 256),)](host, host, result, n, BLOCK=256)
    np.testing.assert_array_equal(result, 2 * host)


def test_tensors_on_two_gpus_are_an_error_naming_them():
    torch = _torch_cuda(gpus=2)
    x = torch.ones(64, device="cuda:0")
    y = torch.ones(64, device="cuda:1")
    with pytest.raises(ValueError, match=r"'x', 'out' on cuda:0; 'y' on cuda:1"):
        add[(1,)](x, y, torch.empty_like(x), 64, BLOCK=64)
    with pytest.raises(TypeError, match=r"'y' are host memory \(on the CPU\) and 'x', 'out' GPU "
                                        r"memory \('x' on cuda:1, 'out' on cuda:1\)"):
        add[(1,)](y, np.ones(64, np.float32), y, 64, BLOCK=64)


def test_a_compiled_graph_runs_on_the_gpu_of_its_inputs():
    torch = _torch_cuda(gpus=2)
    torch.cuda.set_device(0)
    builder = metile.GraphBuilder()
    values = builder.input("values", metile.TensorSpec((3, 300), "f32"))
    residual = builder.input("residual", metile.TensorSpec((3, 300), "f32"))
    weight = builder.input("weight", metile.TensorSpec((300,), "f32"))
    summed = builder.add(values, residual)
    graph = builder.build((summed, builder.rms_norm(summed, weight, 1e-5)))
    run = metile.plan_graph_fusion(graph).compile()
    generator = torch.Generator(device="cuda:1").manual_seed(0)
    v, r, w = (torch.randn(*shape, device="cuda:1", generator=generator)
               for shape in ((3, 300), (3, 300), (300,)))
    total, normed = run(v, r, w)
    assert total.device == torch.device("cuda", 1) and normed.device == total.device
    reference = v + r
    torch.testing.assert_close(total, reference)
    torch.testing.assert_close(
        normed, reference * torch.rsqrt(reference.pow(2).mean(-1, keepdim=True) + 1e-5) * w)
