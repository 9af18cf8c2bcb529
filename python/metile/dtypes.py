"""Element dtypes: meTile's names, their aliases, and their numpy counterparts.

f16 is numpy.float16; bf16 is ml_dtypes.bfloat16 (numpy has no bfloat16); i8 and u8 are
numpy.int8 and numpy.uint8.
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

    def is_floating(self):
        return self in ("f16", "bf16", "f32")

    def is_int(self):
        return self in ("i8", "u8", "i32", "u32", "i64", "i1")

    def is_int_signed(self):
        return self in ("i8", "i32", "i64")

    def is_int_unsigned(self):
        # Triton counts int1 among the unsigned types (its UINT_TYPES); meTile's queries did
        # not, and keep it that way.
        return self in ("u8", "u32")

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
         "i1": 1}

float16 = dtype("f16")
bfloat16 = dtype("bf16")
float32 = dtype("f32")
int32 = dtype("i32")
uint32 = dtype("u32")
int64 = dtype("i64")
int1 = dtype("i1")
int8 = dtype("i8")
uint8 = dtype("u8")

NAMES = ("f16", "bf16", "f32", "i8", "u8", "i32", "u32", "i64", "i1")
_ALIASES = {
    "float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
    "int8": "i8", "uint8": "u8", "int32": "i32", "uint32": "u32", "int64": "i64", "bool": "i1",
    "int1": "i1",
}


def _bfloat16():
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def _numpy_to_name():
    table = {
        np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.int8): "i8",
        np.dtype(np.uint8): "u8", np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32",
        np.dtype(np.int64): "i64",
    }
    try:
        table[_bfloat16()] = "bf16"
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
            f"(supported: float16, bfloat16, float32, int8, uint8, int32, uint32, int64){hint}")
    return name


def to_numpy(name):
    """The numpy dtype of a meTile buffer dtype."""
    name = dtype_name(name)
    if name == "bf16" and name not in _TO_NUMPY:
        _TO_NUMPY[name] = _bfloat16()
    if name not in _TO_NUMPY:
        raise TypeError(f"dtype {name} cannot be a buffer dtype")
    return _TO_NUMPY[name]


def is_float(name):
    return name in ("f16", "bf16", "f32")


def is_integer(name):
    return name in ("i8", "u8", "i32", "u32", "i64")
