"""Kernel arguments in memory: metile.Buffer, and how numpy arrays, DLPack tensors and
Python numbers become launch arguments.

A Buffer is device memory (a runtime::Buffer); launches use it without copies. A plain
numpy array is caller memory: the launch copies it to the device and back when the kernel
writes it, so it is updated in place. A view that is not C-contiguous is first gathered
into a contiguous temporary (and scattered back after a launch that writes it).
"""

import numpy as np

from . import _core, dtypes

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


def _as_numpy(data):
    if isinstance(data, Buffer):
        return data.numpy()
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
    if hasattr(value, "__dlpack__") and not isinstance(value, type):
        try:
            return np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError) as e:
            raise TypeError(f"cannot pass {type(value).__name__} through DLPack to the host "
                            f"device: {e}") from None
    return None


def describe(value, name):
    """("buffer", dtype, Buffer or array) or ("scalar", dtype, value) for a runtime argument."""
    if isinstance(value, Buffer):
        return "buffer", value.dtype, value
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
