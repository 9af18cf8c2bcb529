"""Kernel arguments in memory: metile.Buffer, and how numpy arrays, DLPack tensors, GPU
arrays and Python numbers become launch arguments.

A Buffer is device memory (a runtime::Buffer); launches use it without copies. A plain
numpy array is caller memory: the launch copies it to the device and back when the kernel
writes it, so it is updated in place. A view that is not C-contiguous is first gathered
into a contiguous temporary (and scattered back after a launch that writes it).

GPU memory the caller owns (a torch CUDA tensor, an object with __cuda_array_interface__
or a CUDA __dlpack__) is a GpuArray: on the cuda device it is used in place, without
copies. torch is never imported here unless a torch tensor is passed.
"""

import ctypes
import functools
import math

import numpy as np

from . import _core, dtypes

_NO_DTYPE = object()
_LIST_DTYPES = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32}


class Buffer:
    """Device memory holding an array of one dtype.

    ``Buffer(data=array_like)`` copies the data in (numpy arrays, DLPack tensors, or nested
    lists, whose floats become f32 and integers i32); ``Buffer.zeros(shape, dtype)``;
    ``Buffer.from_numpy(array)``; ``buf.numpy()`` copies the contents out.
    """

    __slots__ = ("device_buffer", "shape", "_np_dtype")

    def __init__(self, data=None, *, shape=None, dtype=None):
        if data is None:
            if shape is None:
                raise TypeError("Buffer needs data= or shape= (and dtype=)")
            shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
            array = np.zeros(shape, dtypes.to_numpy(dtype or "f32"))
        else:
            array = _as_numpy(data)
            if dtype is not None:
                array = array.astype(dtypes.to_numpy(dtype))
            elif not isinstance(data, (np.ndarray, Buffer)) and not hasattr(data, "__dlpack__"):
                array = array.astype(_LIST_DTYPES.get(array.dtype, array.dtype))
            array = np.ascontiguousarray(array)
        name = dtypes.from_numpy(array.dtype)  # raises for dtypes meTile cannot hold
        self.shape = tuple(array.shape)
        self._np_dtype = array.dtype
        self.device_buffer = _core.DeviceBuffer.allocate(_core.default_device(), name,
                                                         list(self.shape))
        if array.nbytes:
            self.device_buffer.copy_from_host(array.ctypes.data, array.nbytes)

    @classmethod
    def zeros(cls, shape, dtype="f32"):
        """A buffer of ``shape`` filled with zeros of ``dtype``."""
        return cls(shape=shape, dtype=dtype)

    @classmethod
    def from_numpy(cls, array):
        """A buffer holding a copy of ``array`` (its dtype must be a meTile buffer dtype)."""
        return cls(data=np.asarray(array))

    def numpy(self):
        """A numpy copy of the contents."""
        array = np.empty(self.shape, self._np_dtype)
        if array.nbytes:
            self.device_buffer.copy_to_host(array.ctypes.data, array.nbytes)
        return array

    def data_ptr(self):
        """The address of the first element as kernels see it (torch's ``data_ptr``): what a
        kernel casts back to a pointer, ``tl.load(ptrs + i).to(tl.pointer_type(tl.float16))``
        (Triton's grouped GEMM tutorial). The buffer must outlive the kernels that use it. On
        the cuda device, pass torch tensors and their ``data_ptr()`` instead."""
        address = self.device_buffer.host_address
        if not address:
            raise NotImplementedError(
                f"Buffer.data_ptr: the {self.device_buffer.device} device's buffers have no "
                "address here; use a torch tensor's data_ptr()")
        return address

    @property
    def dtype(self):
        """The meTile dtype name, e.g. 'f32'."""
        return dtypes.from_numpy(self._np_dtype)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self):
        return self.size * self._np_dtype.itemsize

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"metile.Buffer(shape={self.shape}, dtype={self.dtype})"

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)


def device():
    """The device kernels run on: 'cuda' when a GPU is present, else 'host';
    METILE_DEVICE=host|cuda chooses (an error saying why when that device is unusable)."""
    return _core.default_device()


def _as_numpy(data):
    if isinstance(data, Buffer):
        return data.numpy()
    if gpu_array(data) is not None:
        raise TypeError(f"Buffer(data=...) copies host data; {type(data).__name__} is GPU "
                        "memory: pass it to the kernel directly (it is used in place)")
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "__dlpack__"):
        return np.from_dlpack(data)
    return np.asarray(data)


def scalar_dtype(value):
    """The parameter dtype of a Python number argument: i32 for ints, f32 for floats."""
    if isinstance(value, (bool, int, np.bool_, np.integer)):
        return "i32"
    if isinstance(value, (float, np.floating)):
        return "f32"
    return None


def buffer_array(value):
    """The numpy array behind a caller-memory argument (ndarray or DLPack tensor), or None."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__ == "mlx.core" and str(value.dtype) != "mlx.core.bfloat16":
        # MLX's buffer protocol shares the array's memory writeably (DLPack's import is
        # read-only): an MLX array can be a kernel's output, as a torch tensor is in Triton.
        return np.asarray(value)
    if hasattr(value, "__dlpack__") and not isinstance(value, type):
        try:
            return np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError) as e:
            raise TypeError(f"cannot pass {type(value).__name__} through DLPack to the host "
                            f"device: {e}") from None
    return None


def describe(value, name):
    """("buffer", dtype, Buffer, GpuArray or array) or ("scalar", dtype, value) for a runtime
    argument."""
    # The common arguments first, each by one type test (bool is not int here).
    cls = type(value)
    if cls is np.ndarray and value.dtype in dtypes._FROM_NUMPY:
        return "buffer", dtypes._FROM_NUMPY[value.dtype], value
    if cls is int:
        return "scalar", "i32", value
    if _is_torch_type(cls) and getattr(value, "is_cuda", False):
        gpu = _from_torch(value, name)
        return "buffer", gpu.dtype, gpu
    if isinstance(value, Buffer):
        return "buffer", value.dtype, value
    gpu = gpu_array(value, name)
    if gpu is not None:
        return "buffer", gpu.dtype, gpu
    array = buffer_array(value)
    if array is not None:
        try:
            return "buffer", dtypes.from_numpy(array.dtype), array
        except TypeError as e:
            raise TypeError(f"argument '{name}': {e}") from None
    dtype = scalar_dtype(value)
    if dtype is None:
        raise TypeError(f"argument '{name}': expected a metile.Buffer, a numpy array, a DLPack "
                        f"tensor or a Python number, got {type(value).__name__}")
    return "scalar", dtype, value


_char_view = ctypes.c_char.from_buffer
# numpy's own dtypes, whose arrays export a buffer (ml_dtypes' bfloat16 does not).
_BUFFER_DTYPES = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                                 np.int32, np.uint32, np.int64, np.float16,
                                                 np.float32, np.float64))


def array_address(array):
    """The address of a C-contiguous numpy array's first element. A ctypes view of a writable,
    non-empty array's buffer finds it in a third of the time of ``array.ctypes.data``, which
    builds two objects per call (a launch asks for every array argument's address)."""
    if array.dtype in _BUFFER_DTYPES and array.flags.writeable and array.nbytes:
        return ctypes.addressof(_char_view(array))
    return array.ctypes.data


# ---- GPU memory the caller owns ----------------------------------------------------------

class GpuArray:
    """GPU memory of another library, used in place: its address and length, meTile dtype
    and shape, `stream()` (the owner's current CUstream handle on its GPU, or None), the
    object that keeps the memory alive, and `gpu`, the ordinal of the GPU that holds it
    (torch's ``tensor.device.index``; None when the producer does not say, and the driver
    tells from the address)."""

    __slots__ = ("address", "nbytes", "dtype", "shape", "stream", "owner", "origin", "gpu")

    def __init__(self, address, nbytes, dtype, shape, owner, origin, stream=None, gpu=None):
        self.address, self.nbytes, self.dtype, self.shape = address, nbytes, dtype, shape
        self.owner, self.origin, self.stream, self.gpu = owner, origin, stream, gpu


def launch_gpu(kernel_name, placed):
    """The GPU a launch runs on: the one that holds its GPU arguments, ``placed`` as (name,
    GPU ordinal or None, bytes) (None when no argument says). An argument of no bytes goes
    with any GPU. ValueError naming each argument and its GPU when they are on several."""
    gpus = {gpu for _, gpu, nbytes in placed if gpu is not None and nbytes}
    if len(gpus) <= 1:  # the common case, in one pass (a launch's own cost)
        return next(iter(gpus), None)
    by_gpu = {}
    for name, gpu, nbytes in placed:
        if gpu is not None and nbytes:
            by_gpu.setdefault(gpu, []).append(name)
    where = "; ".join(f"{', '.join(map(repr, names))} on cuda:{gpu}"
                      for gpu, names in sorted(by_gpu.items()))
    raise ValueError(f"{kernel_name}: the GPU arguments are on different GPUs: {where}. A "
                     "launch runs on one GPU, which must hold all of its arguments: move "
                     "them to one device (tensor.to('cuda:N'))")


_TORCH_DTYPES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16",
                 "torch.float64": "f64", "torch.float8_e4m3fn": "f8e4m3",
                 "torch.float8_e5m2": "f8e5m2", "torch.int8": "i8", "torch.uint8": "u8",
                 "torch.int16": "i16", "torch.uint16": "u16", "torch.int32": "i32",
                 "torch.uint32": "u32", "torch.int64": "i64", "torch.bool": "i1"}
_DLPACK_GPU = (2, 13)  # kDLCUDA, kDLCUDAManaged
# (type code, bits): 10 and 12 are DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2.
_DLPACK_DTYPES = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8",
                  (1, 16): "u16", (1, 32): "u32", (2, 16): "f16", (2, 32): "f32", (2, 64): "f64",
                  (4, 16): "bf16", (6, 8): "i1", (10, 8): "f8e4m3", (12, 8): "f8e5m2"}


# Per Python type: whether it is torch's (a torch.Tensor or a subclass), asked once per type.
_TORCH_TYPES = {}


def _is_torch_type(cls):
    known = _TORCH_TYPES.get(cls)
    if known is None:
        known = _TORCH_TYPES[cls] = (cls.__module__ or "").startswith("torch")
    return known


def gpu_array(value, name="data"):
    """The GpuArray of a GPU object, or None when `value` is not GPU memory."""
    if isinstance(value, (type, np.ndarray, Buffer)):
        return None
    if _is_torch_type(type(value)) and getattr(value, "is_cuda", False):
        return _from_torch(value, name)
    try:
        interface = getattr(value, "__cuda_array_interface__", None)
    except (AttributeError, TypeError, RuntimeError):
        interface = None
    if isinstance(interface, dict):
        return _from_cuda_array_interface(value, interface, name)
    dlpack_device = getattr(value, "__dlpack_device__", None)
    if callable(dlpack_device) and hasattr(value, "__dlpack__"):
        kind, gpu = dlpack_device()
        if int(kind) in _DLPACK_GPU:
            return _from_dlpack(value, name, int(gpu))
    return None


def _require_c_contiguous(shape, strides, element_stride, protocol, name):
    """ValueError unless `strides` (in units where one element is `element_stride`) lay
    `shape` out C-contiguously; a dimension of extent 1 may have any stride."""
    step = element_stride
    for extent, stride in zip(reversed(shape), reversed(tuple(strides))):
        if extent != 1 and stride != step:
            raise ValueError(f"argument '{name}': {protocol} memory must be C-contiguous")
        step *= extent


# torch.dtype -> meTile dtype (None: none), filled as tensors of each dtype are passed.
_TORCH_DTYPE_OBJECTS = {}
# GPU index -> stream(): torch's current CUstream on that GPU, one function per GPU.
_TORCH_STREAMS = {}


def _torch_stream(index):
    stream = _TORCH_STREAMS.get(index)
    if stream is None:
        import torch  # already imported: the caller made a torch tensor

        # The CUstream handle without building a torch.cuda.Stream per launch (what Triton's
        # launcher reads); the public spelling where a torch lacks it.
        raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw_stream is not None:
            stream = functools.partial(raw_stream, index)
        else:
            def stream():
                return torch.cuda.current_stream(index).cuda_stream
        _TORCH_STREAMS[index] = stream
    return stream


def _from_torch(tensor, name):
    torch_dtype = tensor.dtype
    dtype = _TORCH_DTYPE_OBJECTS.get(torch_dtype, _NO_DTYPE)
    if dtype is _NO_DTYPE:
        dtype = _TORCH_DTYPE_OBJECTS[torch_dtype] = _TORCH_DTYPES.get(str(torch_dtype))
    if dtype is None:
        raise TypeError(f"argument '{name}': meTile has no dtype for {torch_dtype}")
    if not tensor.is_contiguous():
        raise ValueError(f"argument '{name}': a non-contiguous torch tensor; pass "
                         f"{name}.contiguous()")
    index = tensor.get_device()
    return GpuArray(tensor.data_ptr(), tensor.numel() * tensor.element_size(), dtype,
                    tuple(tensor.shape), tensor, "torch CUDA tensor", _torch_stream(index), index)


# __cuda_array_interface__ typestr -> (meTile dtype, element bytes), as they are met.
_TYPESTRS = {}


def _typestr_dtype(typestr, name):
    known = _TYPESTRS.get(typestr)
    if known is None:
        np_dtype = np.dtype(typestr)
        try:
            known = (dtypes.from_numpy(np_dtype), np_dtype.itemsize)
        except TypeError as e:
            raise TypeError(f"argument '{name}': {e}") from None
        _TYPESTRS[typestr] = known
    return known


def _from_cuda_array_interface(value, interface, name):
    shape = tuple(int(d) for d in interface["shape"])
    dtype, itemsize = _typestr_dtype(interface["typestr"], name)
    strides = interface.get("strides")
    if strides is not None:
        _require_c_contiguous(shape, strides, itemsize, "__cuda_array_interface__", name)
    nbytes = math.prod(shape) * itemsize
    producer_stream = interface.get("stream")
    # 1 and 2 name the legacy and per-thread default streams; 0 (ours) is the legacy one.
    stream = None if producer_stream in (None, 1, 2) else (lambda: int(producer_stream))
    return GpuArray(int(interface["data"][0]), nbytes, dtype, shape, value,
                    "__cuda_array_interface__ object", stream)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):  # the first member of DLManagedTensor
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


# DLPack's name for the legacy default stream, where meTile launches a dispatch whose GPU
# arguments carry no stream of their own (its stream 0).
_DLPACK_LEGACY_DEFAULT_STREAM = 1


def _from_dlpack(value, name, gpu):
    # The consumer names its stream, so the producer orders its pending work before it.
    capsule = value.__dlpack__(stream=_DLPACK_LEGACY_DEFAULT_STREAM)
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    tensor = _DLTensor.from_address(get_pointer(capsule, b"dltensor"))
    dtype = _DLPACK_DTYPES.get((tensor.dtype.code, tensor.dtype.bits))
    if dtype is None or tensor.dtype.lanes != 1:
        raise TypeError(f"argument '{name}': meTile has no dtype for DLPack type code "
                        f"{tensor.dtype.code} with {tensor.dtype.bits} bits")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.strides:
        strides = [tensor.strides[i] for i in range(tensor.ndim)]
        _require_c_contiguous(shape, strides, 1, "DLPack", name)
    nbytes = int(np.prod(shape, dtype=np.int64)) * (tensor.dtype.bits // 8)
    # The capsule holds the producer's reference until it is collected with `owner`.
    return GpuArray(tensor.data + tensor.byte_offset, nbytes, dtype, shape, (value, capsule),
                    "CUDA DLPack tensor", gpu=gpu)
