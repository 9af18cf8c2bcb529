"""Type promotion for binary operations, as in Triton (docs/python.md, "Type promotion").

Two traced values of different dtypes meet in the computation type of Triton's
``computation_type_impl``: f64 wins over everything, then f32; f16 wins over bf16, fp8 and
integers; bf16 stays bf16 only beside bf16 (else f32); ``/`` and ``%`` of f16 or bf16
compute in f32; two fp8 values of one format stay in it (values.py computes them in f32 and
rounds once), values of the two formats meet in f16, and fp8 beside an integer is an error;
integers widen by C's usual arithmetic conversions without C's promotion of 8-bit operands
to int (i8 + i8 stays i8 and wraps, u8 + i8 is u8, i8 + i32 is i32), and ``/``, ``//``,
``%`` of integers of different signedness are an error. A Python number does not widen a traced value of its
kind or a higher one (bool < integer < float): ``x_f16 * 2.0`` stays f16, ``i * 2`` stays
i32, while ``i * 0.5`` is f32.
"""

from . import dtypes

_INT_BITS = {"i1": 1, "i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64}
_UNSIGNED = ("i1", "u8", "u16", "u32")  # Triton counts int1 among the unsigned types


def kind(dtype):
    """0 for i1, 1 for the integers, 2 for the floats (Triton's dtype.KIND)."""
    if dtype == "i1":
        return 0
    return 2 if dtypes.is_float(dtype) else 1


def number_kind(x):
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return 0
    return 2 if isinstance(x, float) or type(x).__name__.startswith("float") else 1


def _integer_promote(a, b):
    a_unsigned, b_unsigned = a in _UNSIGNED, b in _UNSIGNED
    if a_unsigned == b_unsigned:
        return a if _INT_BITS[a] > _INT_BITS[b] else b
    if a_unsigned:
        return a if _INT_BITS[a] >= _INT_BITS[b] else b
    return b if _INT_BITS[b] >= _INT_BITS[a] else a


class PromotionError(TypeError):
    pass


def computation_type(a, b, div_or_mod=False):
    """The dtype two traced operands of dtypes ``a`` and ``b`` are computed in."""
    if a == b and not (div_or_mod and a in ("f16", "bf16")):
        return a
    if "f64" in (a, b):
        return "f64"
    if "f32" in (a, b):
        return "f32"
    if "f16" in (a, b):
        return "f32" if div_or_mod else "f16"
    if "bf16" in (a, b):
        return "bf16" if (a == b and not div_or_mod) else "f32"
    if dtypes.is_fp8(a) and dtypes.is_fp8(b):
        return "f16"  # two formats (one format returned above)
    if dtypes.is_fp8(a) or dtypes.is_fp8(b):
        raise PromotionError(
            f"no computation type for {a} and {b} (Triton's 'unexpected type'): convert the "
            "fp8 operand to a float dtype first (.to(tl.float32))")
    if div_or_mod and (a in _UNSIGNED) != (b in _UNSIGNED) and "i1" not in (a, b):
        raise PromotionError(
            f"cannot divide or take the remainder of {a} and {b}: they differ in signedness, "
            "which is unlikely to give a useful answer; cast them to one signedness first "
            "(.to('i32') or .to('u32'))")
    return _integer_promote(a, b)


def with_number(dtype, number, div_or_mod=False):
    """The dtype a traced operand of ``dtype`` and a Python number are computed in."""
    if number_kind(number) <= kind(dtype):
        if div_or_mod and dtype in ("f16", "bf16"):
            return "f32"
        return dtype
    number_dtype = "f32" if number_kind(number) == 2 else "i32"
    return computation_type(dtype, number_dtype, div_or_mod)
