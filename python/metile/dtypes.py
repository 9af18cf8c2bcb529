"""Element dtypes: meTile's names, their aliases, and their numpy counterparts.

f16 is numpy.float16; bf16 is ml_dtypes.bfloat16 (numpy has no bfloat16); the 8-bit floats
f8e4m3 (Triton's float8e4nv) and f8e5m2 (Triton's float8e5) are ml_dtypes.float8_e4m3fn and
ml_dtypes.float8_e5m2; the integers and f64 are numpy's own.
"""

import numpy as np


class dtype(str):
    """A dtype as Triton's ``tl.dtype`` offers it: meTile's name ("f16"), equal to that string
    wherever a name is taken, with Triton's queries."""

    __slots__ = ()

    @property
    def primitive_bitwidth(self):
        return _BITS[self]

    @property
    def int_bitwidth(self):
        """The width of an integer dtype (Triton's ``int_bitwidth``); AttributeError otherwise."""
        if not self.is_int():
            raise AttributeError(f"{self} is not an integer dtype")
        return _BITS[self]

    @property
    def fp_mantissa_width(self):
        """The stored mantissa bits of a float dtype (Triton's ``fp_mantissa_width``)."""
        if not self.is_floating():
            raise AttributeError(f"{self} is not a floating dtype")
        return _MANTISSA[self]

    @property
    def exponent_bias(self):
        """The exponent bias of a float dtype (Triton's ``exponent_bias``)."""
        if not self.is_floating():
            raise AttributeError(f"{self} is not a floating dtype")
        return _EXPONENT_BIAS[self]

    def is_floating(self):
        return self in _FLOATS

    def is_int(self):
        return self in ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "i1")

    def is_int_signed(self):
        return self in ("i8", "i16", "i32", "i64")

    def is_int_unsigned(self):
        # Triton counts int1 among the unsigned types (its UINT_TYPES); meTile's queries did
        # not, and keep it that way.
        return self in ("u8", "u16", "u32")

    def is_fp8(self):
        return self in ("f8e4m3", "f8e5m2")

    def is_fp8e4nv(self):
        return self == "f8e4m3"

    def is_fp8e5(self):
        return self == "f8e5m2"

    def is_fp64(self):
        return self == "f64"

    def is_int16(self):
        return self == "i16"

    def is_uint16(self):
        return self == "u16"

    def is_int8(self):
        return self == "i8"

    def is_uint8(self):
        return self == "u8"

    def is_int32(self):
        return self == "i32"

    def is_uint32(self):
        return self == "u32"

    def is_int64(self):
        return self == "i64"

    def is_bool(self):
        return self == "i1"

    def is_fp16(self):
        return self == "f16"

    def is_bf16(self):
        return self == "bf16"

    def is_fp32(self):
        return self == "f32"

    def is_ptr(self):
        return False

    @property
    def scalar(self):
        return self


class pointer_type(dtype):
    """A pointer's dtype, as Triton's ``tl.pointer_type``: equal to its pointee's name (as a
    pointer's dtype has always been in meTile), with ``element_ty`` the pointee's dtype."""

    __slots__ = ()

    @property
    def element_ty(self):
        return dtype(self)

    def is_ptr(self):
        return True

    def is_floating(self):
        return False

    def is_int(self):
        return False


_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i8": 8, "u8": 8, "i32": 32, "u32": 32, "i64": 64,
         "i1": 1, "i16": 16, "u16": 16, "f64": 64, "f8e4m3": 8, "f8e5m2": 8}
_FLOATS = ("f8e4m3", "f8e5m2", "f16", "bf16", "f32", "f64")
_MANTISSA = {"f8e4m3": 3, "f8e5m2": 2, "f16": 10, "bf16": 7, "f32": 23, "f64": 52}
_EXPONENT_BIAS = {"f8e4m3": 7, "f8e5m2": 15, "f16": 15, "bf16": 127, "f32": 127, "f64": 1023}

float16 = dtype("f16")
bfloat16 = dtype("bf16")
float32 = dtype("f32")
int32 = dtype("i32")
uint32 = dtype("u32")
int64 = dtype("i64")
int1 = dtype("i1")
int8 = dtype("i8")
uint8 = dtype("u8")
int16 = dtype("i16")
uint16 = dtype("u16")
float64 = dtype("f64")
float8e4nv = dtype("f8e4m3")
float8e5 = dtype("f8e5m2")

NAMES = ("f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2", "i8", "u8", "i16", "u16", "i32", "u32",
         "i64", "i1")
_ALIASES = {
    "float16": "f16", "half": "f16", "fp16": "f16", "bfloat16": "bf16", "float32": "f32",
    "float": "f32", "fp32": "f32", "float64": "f64", "double": "f64", "fp64": "f64",
    "float8e4nv": "f8e4m3", "fp8e4nv": "f8e4m3", "float8_e4m3fn": "f8e4m3",
    "float8e5": "f8e5m2", "fp8e5": "f8e5m2", "float8_e5m2": "f8e5m2",
    "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32",
    "uint32": "u32", "int64": "i64", "bool": "i1", "int1": "i1",
}


# The dtypes numpy lacks, by their ml_dtypes names.
_ML_DTYPES = {"bf16": "bfloat16", "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}


def _ml_dtype(name):
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))


def _numpy_to_name():
    table = {
        np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
        np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.int16): "i16",
        np.dtype(np.uint16): "u16", np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32",
        np.dtype(np.int64): "i64",
    }
    for name in _ML_DTYPES:
        try:
            table[_ml_dtype(name)] = name
        except ImportError:
            pass
    return table


_FROM_NUMPY = _numpy_to_name()
_TO_NUMPY = {name: dtype for dtype, name in _FROM_NUMPY.items()}


def dtype_name(dtype):
    """The meTile name of a dtype given as a name, an alias, or a numpy dtype/type."""
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype, dtype)
        if name in NAMES:
            return name
        raise ValueError(f"unknown dtype '{dtype}' (expected one of {', '.join(NAMES)})")
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"unknown dtype {dtype!r} (expected one of {', '.join(NAMES)})") from None
    if np_dtype == np.bool_:
        return "i1"
    return from_numpy(np_dtype)


def from_numpy(np_dtype):
    """The meTile name of a numpy array dtype usable as a buffer; TypeError otherwise."""
    name = _FROM_NUMPY.get(np.dtype(np_dtype))
    if name is None:
        hint = "; convert with .astype(numpy.float32)" if np.dtype(np_dtype).kind == "f" else ""
        raise TypeError(
            f"numpy dtype {np.dtype(np_dtype)} has no meTile buffer dtype "
            f"(supported: float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2, int8, "
            f"uint8, int16, uint16, int32, uint32, int64){hint}")
    return name


def to_numpy(name):
    """The numpy dtype of a meTile buffer dtype."""
    name = dtype_name(name)
    if name in _ML_DTYPES and name not in _TO_NUMPY:
        _TO_NUMPY[name] = _ml_dtype(name)
    if name not in _TO_NUMPY:
        raise TypeError(f"dtype {name} cannot be a buffer dtype")
    return _TO_NUMPY[name]


def is_float(name):
    return name in _FLOATS


def is_fp8(name):
    return name in ("f8e4m3", "f8e5m2")


def is_integer(name):
    return name in ("i8", "u8", "i16", "u16", "i32", "u32", "i64")
