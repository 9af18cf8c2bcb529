"""Elementwise functions Triton code uses daily: floor and ceil (Tile IR ops), and sigmoid,
erf, log2, fma, clamp and ``x ** n`` for constant n, built from Tile IR's arithmetic and math
ops.

Float functions of f16 or bf16 tiles compute in f32 and round the result back, so each
keeps the accuracy stated here whatever the input dtype.
"""

import math

from . import dtypes
from .errors import NotSupportedError, user_error
from .frames import user_location
from .language import where
from .values import as_value, as_values, binary, cast, compare, is_number, unary

# Abramowitz and Stegun 7.1.26: |erf(x) - approximation| <= 1.5e-7 for x >= 0.
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _float_operand(x, op):
    x = as_value(x, op)
    if not dtypes.is_float(x.dtype):
        raise user_error(f"metile.{op}: expects a float operand, got {x.type}; convert it "
                         "with .to('f32')", user_location())
    return x


def _in_f32(x, op, compute):
    """compute(x as f32), rounded back to x's dtype."""
    x = _float_operand(x, op)
    result = compute(cast(x, "f32") if x.dtype != "f32" else x)
    return cast(result, x.dtype) if x.dtype != "f32" else result


def sigmoid(x):
    """1 / (1 + e^-x), elementwise."""
    if is_number(x):
        return 1.0 / (1.0 + math.exp(-x))
    x = _float_operand(x, "sigmoid")
    return 1.0 / (1.0 + unary("exp", -x))


def erf(x):
    """The error function, elementwise, in f32: within 4e-7 of the exact value (absolute)
    for every input, and within 2e-7 relative below |x| = 0.5 (a Taylor series there;
    Abramowitz and Stegun 7.1.26 above)."""
    if is_number(x):
        return math.erf(x)

    def compute(v):
        a = abs(v)
        t = 1.0 / (1.0 + _ERF_P * a)
        poly = _ERF_A[4]
        for c in reversed(_ERF_A[:4]):
            poly = poly * t + c
        tail = 1.0 - poly * t * unary("exp", -(a * a))
        far = where(compare("lt", v, 0.0), -tail, tail)
        v2 = v * v  # 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
        series = v * (1.1283791670955126 + v2 * (-0.37612638903183754 + v2 * (
            0.11283791670955126 + v2 * (-0.026866170645131252 + v2 * (
                0.005223977625442188 - v2 * 0.0008548327023450852)))))
        return where(compare("lt", a, 0.5), series, far)

    return _in_f32(x, "erf", compute)


def floor(x):
    """The largest integer not above x, elementwise (floats)."""
    return math.floor(x) if is_number(x) else unary("floor", _float_operand(x, "floor"))


def ceil(x):
    """The smallest integer not below x, elementwise (floats)."""
    return math.ceil(x) if is_number(x) else unary("ceil", _float_operand(x, "ceil"))


def log2(x):
    """The base-2 logarithm, elementwise (log(x) / log(2))."""
    if is_number(x):
        return math.log2(x)
    return _in_f32(x, "log2", lambda v: unary("log", v) * (1.0 / math.log(2.0)))


def fma(x, y, z):
    """x * y + z, elementwise, the three operands promoted to one dtype first, as Triton's
    tl.fma does (f16 x and y beside an f32 z multiply in f32). Rounded as a multiply and an
    add; the target compiler may contract them into one fused operation, as Triton's may not."""
    x, y = as_values(x, y, "fma")
    z, x = as_values(z, x, "fma")
    z, y = as_values(z, y, "fma")
    return x * y + z


def clamp(x, min, max):
    """x limited to [min, max], elementwise: minimum(maximum(x, min), max)."""
    return binary("min", binary("max", x, min), max)


def power(base, exponent):
    """``base ** exponent`` for a traced base and a constant exponent: integers by repeated
    multiplication, 0.5 and -0.5 as sqrt and rsqrt."""
    if not is_number(exponent):
        raise user_error("**: the exponent must be a Python number (a constant); for a traced "
                         "exponent write metile.exp(y * metile.log(x)) (x > 0)",
                         user_location(), NotSupportedError)
    if exponent in (0.5, -0.5):
        base = _float_operand(base, "**")
        return unary("sqrt" if exponent > 0 else "rsqrt", base)
    if float(exponent).is_integer():
        n = int(exponent)
        result, square, k = None, base, abs(n)
        while k:
            if k & 1:
                result = square if result is None else result * square
            k >>= 1
            if k:
                square = square * square
        if result is None:
            result = base * 0 + 1
        return 1.0 / result if n < 0 else result
    raise user_error(f"**: the exponent {exponent!r} is not an integer nor +-0.5; write "
                     "metile.exp(exponent * metile.log(x)) for x > 0", user_location(),
                     NotSupportedError)


def reversed_power(base, exponent):
    """``number ** traced``: 2 ** x is exp2(x); any other positive base is exp(x log(base))."""
    if not is_number(base) or base <= 0:
        raise user_error(f"**: a traced exponent needs a positive constant base, got {base!r}",
                         user_location(), NotSupportedError)
    exponent = _float_operand(exponent, "**")
    if base == 2:
        return unary("exp2", exponent)
    return unary("exp", exponent * math.log(base))


def fdiv(x, y, ieee_rounding=False):
    """``x / y`` of floats (Triton's tl.fdiv): correctly rounded outside relaxed math, as ``/``
    is; ``ieee_rounding`` is accepted for that reason."""
    x, y = as_values(x, y, "fdiv")
    if not dtypes.is_float(x.dtype):
        raise user_error(f"fdiv: divides floats, got {x.dtype}", user_location())
    return binary("div", x, y)


def swizzle2d(i, j, size_i, size_j, size_g):
    """Triton's tl.swizzle2d: the index (i, j) of a size_i x size_j row-major grid moved to
    column-major order within groups of size_g rows (the tutorial's grouped program order)."""
    from .language import minimum

    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    return off_i + ij % size_g, ij // size_g


def umulhi(x, y):
    """The high 32 bits of the 64-bit product of 32-bit integers (Triton's tl.umulhi): of the
    signed product for i32, the unsigned one for u32."""
    x, y = as_values(x, y, "umulhi")
    if x.dtype == "i32":
        return cast((cast(x, "i64") * cast(y, "i64")) >> 32, "i32")
    if x.dtype != "u32":
        raise user_error(f"umulhi: multiplies i32 or u32, got {x.dtype}", user_location())
    # 16-bit halves: each partial product and the carry sum fit 32 bits.
    mask = cast(0xFFFF, "u32")
    x_lo, x_hi, y_lo, y_hi = x & mask, x >> 16, y & mask, y >> 16
    low, cross_a, cross_b = x_lo * y_lo, x_hi * y_lo, x_lo * y_hi
    carry = (low >> 16) + (cross_a & mask) + cross_b
    return x_hi * y_hi + (cross_a >> 16) + (carry >> 16)
