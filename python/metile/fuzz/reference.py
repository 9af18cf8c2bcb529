"""The numpy interpreter the tracer fuzzer compares kernels with.

A value is exact where that is possible: integers are computed exactly (in int64, then wrapped
to their dtype as the device wraps them), floats in float64 together with a bound on how far
the device's value may lie from the exact one (each rounding of the dtype the device computes
in, each function's accuracy, and the errors of the operands carried through). An element
whose outcome depends on where inside its bound the device's value lies (a comparison of two
close floats, a float cast to an integer near an integer, a result past the dtype's range) is
marked unknown and not compared, nor is anything computed from it.
"""

import math

import numpy as np

FLOATS = ("f16", "bf16", "f32")
INTEGERS = ("i32", "u32")
# Unit roundoff, smallest normal and largest finite value of each float dtype.
UNIT = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24}
TINY = {"f16": 2.0**-14, "bf16": 2.0**-126, "f32": 2.0**-126}
LARGEST = {"f16": 65504.0, "bf16": 3.3895e38, "f32": 3.4028e38}
# Relative accuracy assumed of the device's math functions (fast variants included), on top
# of the rounding of the result.
FUNCTION_ACCURACY = {"f16": 2.0**-10, "bf16": 2.0**-7, "f32": 2.0**-19}


class R:
    """A value: dtype, exact values ``v`` (float64 or int64), error bounds ``e`` (floats)
    and the mask ``u`` of unknown elements."""

    def __init__(self, dtype, v, e=None, u=None):
        self.dtype = dtype
        self.v = np.asarray(v, np.float64 if dtype in FLOATS else np.int64)
        self.e = np.zeros(self.v.shape) if e is None else np.broadcast_to(e, self.v.shape) * 1.0
        self.u = (np.zeros(self.v.shape, bool) if u is None
                  else np.broadcast_to(u, self.v.shape).copy())


def wrap(v, dtype):
    """Integer values as the device holds them in ``dtype`` (two's complement wrap)."""
    v = np.asarray(v).astype(np.int64)
    if dtype == "i1":
        return (v != 0).astype(np.int64)
    low = v.astype(np.uint64) & np.uint64(0xFFFFFFFF)
    if dtype == "u32":
        return low.astype(np.int64)
    return low.astype(np.uint32).view(np.int32).astype(np.int64)


def _modular(op, a, b):
    """``op`` of two integer arrays modulo 2^64 (the caller wraps to 32 bits)."""
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    with np.errstate(over="ignore"):
        return op(a, b).astype(np.int64)


def _round(dtype, v, e, u):
    """The result of a float operation computed in ``dtype``: its rounding widens the bound,
    a value past the dtype's range is unknown."""
    magnitude = np.abs(v)
    e = e + UNIT[dtype] * magnitude + TINY[dtype]
    u = u | ~np.isfinite(v) | (magnitude + e > LARGEST[dtype]) | ~np.isfinite(e)
    return R(dtype, np.where(u, 0.0, v), np.where(u, 0.0, e), u)


def convert(x, dtype):
    """``x.to(dtype)`` and the implicit conversions of promotion and store."""
    if x.dtype == dtype:
        return x
    if dtype in FLOATS:
        if x.dtype in FLOATS:
            if dtype == "f32":  # f16 and bf16 values are f32 values
                return R(dtype, x.v, x.e, x.u)
            return _round(dtype, x.v, x.e, x.u)
        v = x.v.astype(np.float64)
        exact = np.abs(v) <= (2**24 if dtype == "f32" else 2**8 if dtype == "bf16" else 2**11)
        rounded = _round(dtype, v, np.zeros(v.shape), x.u)
        rounded.e = np.where(exact & ~rounded.u, 0.0, rounded.e)
        return rounded
    if x.dtype in FLOATS:
        if dtype == "i1":
            unknown = x.u | ((np.abs(x.v) <= x.e) & (x.e > 0))
            return R(dtype, x.v != 0, u=unknown)
        low, high = np.trunc(x.v - x.e), np.trunc(x.v + x.e)
        unknown = x.u | (low != high) | (np.trunc(x.v) != low)
        limit = (0, 2**32 - 1) if dtype == "u32" else (-(2**31), 2**31 - 1)
        truncated = np.trunc(np.where(unknown, 0, x.v))
        unknown |= (truncated < limit[0]) | (truncated > limit[1])
        return R(dtype, np.where(unknown, 0, truncated).astype(np.int64), u=unknown)
    return R(dtype, wrap(x.v, dtype), u=x.u)


def promote(a, b, div_or_mod=False):
    """docs/python.md, "Type promotion", for two traced operands."""
    if a == b and not (div_or_mod and a in ("f16", "bf16")):
        return a
    if "f32" in (a, b):
        return "f32"
    if "f16" in (a, b):
        return "f32" if div_or_mod else "f16"
    if "bf16" in (a, b):
        return "bf16" if a == b and not div_or_mod else "f32"
    if "i1" in (a, b):
        return b if a == "i1" else a
    return "u32"  # i32 with u32: the same width, the unsigned one


def with_number(dtype, number, div_or_mod=False):
    """The dtype of a traced ``dtype`` operand with a Python number."""
    number_kind = 2 if isinstance(number, float) else 1
    kind = 0 if dtype == "i1" else 2 if dtype in FLOATS else 1
    if number_kind <= kind:
        return "f32" if div_or_mod and dtype in ("f16", "bf16") else dtype
    return promote(dtype, "f32" if number_kind == 2 else "i32", div_or_mod)


def number(value, dtype, shape=()):
    return R(dtype, np.full(shape, value))


def _unknown(*xs):
    return np.logical_or.reduce([np.broadcast_to(x.u, np.broadcast(*[y.v for y in xs]).shape)
                                 for x in xs])


def arithmetic(op, a, b, dtype):
    """``a op b`` computed in ``dtype`` (operands already converted to it)."""
    u = _unknown(a, b)
    if dtype in FLOATS:
        av, bv, ae, be = a.v, b.v, a.e, b.e
        with np.errstate(all="ignore"):
            if op == "+":
                v, e = av + bv, ae + be
            elif op == "-":
                v, e = av - bv, ae + be
            elif op == "*":
                v, e = av * bv, ae * np.abs(bv) + be * np.abs(av) + ae * be
            elif op == "/":
                denominator = np.abs(bv) - be
                u = u | (denominator <= 0)
                v = av / np.where(bv == 0, 1, bv)
                e = (ae + np.abs(v) * be) / np.where(denominator > 0, denominator, 1)
            elif op in ("maximum", "minimum"):
                v, e = (np.maximum if op == "maximum" else np.minimum)(av, bv), np.maximum(ae, be)
                return R(dtype, v, e, u)
            else:
                raise AssertionError(op)
        return _round(dtype, v, e, u)
    av, bv = a.v, b.v
    if op == "+":
        v = _modular(np.add, av, bv)
    elif op == "-":
        v = _modular(np.subtract, av, bv)
    elif op == "*":
        v = _modular(np.multiply, av, bv)
    elif op == "&":
        v = av & bv
    elif op == "|":
        v = av | bv
    elif op == "^":
        v = av ^ bv
    elif op == "<<":
        v = _modular(np.left_shift, av, bv & 31)
    elif op == ">>":
        v = np.right_shift(av, bv & 31)  # i32 values are signed here, u32 ones not
    elif op == "//":
        v = np.floor_divide(av, np.where(bv == 0, 1, bv))
    elif op == "%":
        v = np.fmod(av, np.where(bv == 0, 1, bv))
    elif op == "maximum":
        v = np.maximum(av, bv)
    elif op == "minimum":
        v = np.minimum(av, bv)
    else:
        raise AssertionError(op)
    return R(dtype, wrap(v, dtype), u=u)


def comparison(op, a, b):
    """``a op b`` of operands converted to one dtype: a bool, unknown where two floats are
    within their errors of each other."""
    u = _unknown(a, b)
    fn = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
          "==": np.equal, "!=": np.not_equal}[op]
    v = fn(a.v, b.v)
    if a.dtype in FLOATS:
        slack = a.e + b.e
        u = u | ((np.abs(a.v - b.v) <= slack) & (slack > 0))
    return R("i1", v, u=u)


def where(c, a, b):
    shape = np.broadcast(c.v, a.v, b.v).shape
    cv = np.broadcast_to(c.v != 0, shape)
    v = np.where(cv, a.v, b.v)
    e = np.where(cv, a.e, b.e)
    u = np.broadcast_to(c.u, shape) | np.where(cv, np.broadcast_to(a.u, shape),
                                                 np.broadcast_to(b.u, shape))
    return R(a.dtype, v, e, u)


def negate(a):
    if a.dtype in FLOATS:
        return R(a.dtype, -a.v, a.e, a.u)
    return R(a.dtype, wrap(-a.v, a.dtype), u=a.u)


def invert(a):
    if a.dtype == "i1":
        return R("i1", 1 - a.v, u=a.u)
    return R(a.dtype, wrap(~a.v, a.dtype), u=a.u)


def absolute(a):
    if a.dtype in FLOATS:
        return R(a.dtype, np.abs(a.v), a.e, a.u)
    return R(a.dtype, wrap(np.abs(a.v), a.dtype), u=a.u)


_MONOTONE = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda t: 1 / np.sqrt(t), "tanh": np.tanh,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
}


def math_function(name, a):
    """A unary math function of a float value; ``name``'s domain is the caller's to keep
    (log, log2, sqrt and rsqrt get positive operands)."""
    with np.errstate(all="ignore"):
        if name in ("floor", "ceil"):
            fn = np.floor if name == "floor" else np.ceil
            low, high = fn(a.v - a.e), fn(a.v + a.e)
            return R(a.dtype, fn(a.v), u=a.u | (low != high))
        if name in ("sin", "cos"):
            v = np.sin(a.v) if name == "sin" else np.cos(a.v)
            e = np.minimum(a.e, 2.0)
        else:
            fn = _MONOTONE[name]
            low = np.maximum(a.v - a.e, 0.0) if name in ("log", "log2", "sqrt", "rsqrt") else a.v - a.e
            v = fn(a.v)
            e = np.maximum(np.abs(fn(low) - v), np.abs(fn(a.v + a.e) - v))
            e = np.where(np.isfinite(e), e, np.inf)
        e = e + FUNCTION_ACCURACY[a.dtype] * np.abs(v) + 4 * TINY[a.dtype]
        if name in ("sin", "cos"):
            e = e + FUNCTION_ACCURACY[a.dtype]  # absolute: an argument reduction's error
        if name == "erf":
            e = e + 5e-7  # absolute: elementwise.py's approximation is within 4e-7
        return _round(a.dtype, v, e, a.u)


SUM_DTYPE = {"i1": "i32", "f16": "f32", "bf16": "f32"}


def _moved(x, axis):
    """x with the reduced axis last (None: flattened)."""
    if axis is None:
        return x.v.reshape(-1), x.e.reshape(-1), x.u.reshape(-1)
    return (np.moveaxis(x.v, axis, -1), np.moveaxis(x.e, axis, -1), np.moveaxis(x.u, axis, -1))


def _kept(r, x, axis, keep_dims):
    if not keep_dims:
        return r
    shape = [1 if axis is None or i == axis else d for i, d in enumerate(x.v.shape)]
    return R(r.dtype, r.v.reshape(shape), r.e.reshape(shape), r.u.reshape(shape))


def reduce(kind, x, axis, keep_dims):
    """sum / max / min / argmax / argmin over ``axis`` (None: all), as metile computes them."""
    if kind == "sum":
        x = convert(x, SUM_DTYPE.get(x.dtype, x.dtype))
    v, e, u = _moved(x, axis)
    unknown = u.any(-1)
    n = v.shape[-1]
    if kind == "sum":
        if x.dtype in FLOATS:
            total = v.sum(-1)
            bound = e.sum(-1) + n * UNIT[x.dtype] * np.abs(v).sum(-1)
            unknown = unknown | ~((np.abs(v) + e).sum(-1) <= LARGEST[x.dtype])  # partial sums
            r = _round(x.dtype, total, bound, unknown)
        else:
            with np.errstate(over="ignore"):
                total = np.add.reduce(v.astype(np.uint64), -1).astype(np.int64)
            r = R(x.dtype, wrap(total, x.dtype), u=unknown)
    elif kind in ("max", "min"):
        pick = np.max if kind == "max" else np.min
        r = R(x.dtype, pick(v, -1), e.max(-1), unknown)
    else:
        index = (np.argmax if kind == "argmax" else np.argmin)(v, -1)
        best = np.take_along_axis(v, index[..., None], -1)
        best_error = np.take_along_axis(e, index[..., None], -1)
        close = (np.abs(v - best) <= e + best_error) & ((e + best_error) > 0)
        if x.dtype in FLOATS:
            unknown = unknown | (close.sum(-1) > 1)
        r = R("i32", index, u=unknown)
    return _kept(r, x, axis, keep_dims)


def scan(kind, x, axis):
    """cumsum / cumprod along ``axis``: the dtype is kept, booleans scan in i32."""
    x = convert(x, "i32") if x.dtype == "i1" else x
    u = np.logical_or.accumulate(x.u, axis)
    if x.dtype in FLOATS:
        count = np.cumsum(np.ones(x.v.shape), axis)
        with np.errstate(all="ignore"):
            if kind == "cumsum":
                v = np.cumsum(x.v, axis)
                grown = np.cumsum(np.abs(x.v) + x.e, axis)  # bounds every partial sum
                e = np.cumsum(x.e, axis) + count * UNIT[x.dtype] * np.cumsum(np.abs(x.v), axis)
            else:
                v = np.cumprod(x.v, axis)
                grown = np.cumprod(np.abs(x.v) + x.e, axis)
                e = (grown - np.abs(v)) + count * UNIT[x.dtype] * grown
            # A partial result past the dtype's range (an inf, times a later 0 a NaN) leaves
            # every later one unknown, however small the exact one is.
            u = u | np.logical_or.accumulate(~(np.abs(grown) <= LARGEST[x.dtype]), axis)
        return _round(x.dtype, v, e, u)
    op = np.add if kind == "cumsum" else np.multiply
    with np.errstate(over="ignore"):
        v = op.accumulate(x.v.astype(np.uint64), axis).astype(np.int64)
    return R(x.dtype, wrap(v, x.dtype), u=u)
