"""Outputs and arguments as the guarded runtime sees them: an output on the host as float64
for the numerical gate, and an argument's description for the decision key. numpy arrays,
metile.Buffer, torch tensors and MLX arrays are read by their own library; any other value
that numpy can read (a DLPack array) through numpy."""

import numpy as np

from ..buffer import Buffer

_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
           "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32",
           "int64": "i64", "uint32": "u32", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2",
           "bool": "i1"}


def _library(value):
    return type(value).__module__.split(".")[0]


def dtype_of(value):
    """The meTile name of an array's dtype (f64 included), or None for a non-array."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    return _DTYPES.get(str(dtype).split(".")[-1])


def host_values(value):
    """(the values as a flat float64 numpy array, the dtype name, the shape) of an output."""
    dtype = dtype_of(value)
    if isinstance(value, Buffer):
        array = value.numpy()
    elif _library(value) == "torch":
        tensor = value.detach()
        array = (tensor.float() if dtype == "bf16" else tensor).cpu().numpy()
    elif _library(value) == "mlx":
        import mlx.core as mx

        array = np.array(value.astype(mx.float32) if dtype == "bf16" else value)
    else:
        array = np.asarray(value)
        dtype = dtype or _DTYPES.get(array.dtype.name)
    if dtype is None:
        raise TypeError(f"metile.select: an output of type {type(value).__name__} with dtype "
                        f"{getattr(value, 'dtype', None)} has no gate tolerance (outputs are "
                        f"arrays of {', '.join(sorted(set(_DTYPES)))})")
    return np.ascontiguousarray(array, dtype=np.float64).reshape(-1), dtype, tuple(array.shape)


def describe(value):
    """What the decision key records of an argument: kind, dtype, shape and strides (in
    elements) of an array, the type and value of a scalar."""
    if isinstance(value, Buffer):
        return ["buffer", value.dtype, list(value.shape)]
    library = _library(value)
    if library == "torch":
        return ["torch", dtype_of(value), list(value.shape), list(value.stride()),
                str(value.device.type)]
    if library == "mlx":
        return ["mlx", dtype_of(value), list(value.shape)]
    if isinstance(value, np.ndarray):
        strides = [s // value.itemsize for s in value.strides]
        return ["numpy", dtype_of(value) or value.dtype.name, list(value.shape), strides]
    if isinstance(value, (bool, int, float, str, type(None))):
        return ["scalar", type(value).__name__, repr(value)]
    if isinstance(value, (tuple, list)):
        return ["sequence", [describe(v) for v in value]]
    raise TypeError(f"metile.select: cannot key a decision on an argument of type "
                    f"{type(value).__name__} (arrays, metile.Buffer, torch and MLX arrays, "
                    "numbers, strings and sequences of them)")
