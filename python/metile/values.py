"""Traced values: proxies for Tile IR values with Python operators.

Operands of different dtypes are promoted as in Triton (promotion.py): a Python number does
not widen a value of its kind or a higher one (``x * 2`` on an f16 tile multiplies by an f16
2; ``ptr + 4`` offsets by an i32 4), ``i * 0.5`` is f32. ``/`` is true division (integers
are converted to f32 first); ``//`` rounds toward negative infinity; ``%`` takes the sign of
the dividend, as in C and Triton.
"""

import numpy as np

from . import dtypes, promotion
from .errors import user_error
from .frames import user_location
from .tracing import current

NUMBER_TYPES = (bool, int, float, np.bool_, np.integer, np.floating)


def is_number(x):
    return isinstance(x, NUMBER_TYPES) and not isinstance(x, Value)


def number_dtype(x):
    """The dtype of a lone Python number: i1 for bool, i32 for int, f32 for float."""
    if isinstance(x, (bool, np.bool_)):
        return "i1"
    return "f32" if isinstance(x, (float, np.floating)) else "i32"


def wrap(trace, value_id):
    return Value(trace, value_id)


def constant(trace, x, dtype, op):
    """The Python number ``x`` as a scalar constant of ``dtype``."""
    core = trace.at()
    if dtypes.is_float(dtype):
        return wrap(trace, core.constant_float(float(x), dtype))
    if isinstance(x, (float, np.floating)):
        if not float(x).is_integer():
            raise user_error(
                f"{op}: the Python number {x} is not an integer but the other operand is {dtype}; "
                "cast that operand to a float dtype first (.to('f32'))", user_location())
    return wrap(trace, core.constant_int(int(x), dtype))


def _operand_error(op, x):
    return user_error(
        f"{op}: operands must be traced values or Python numbers, got {type(x).__name__}",
        user_location())


def as_value(x, op, dtype=None):
    """``x`` as a traced Value: a Value as is, a number as a constant of ``dtype`` (or its own)."""
    trace = current(op)
    if isinstance(x, Value):
        trace.check(x, op)
        return x
    if is_number(x):
        return constant(trace, x, dtype or number_dtype(x), op)
    raise _operand_error(op, x)


def dtype_for_numbers(v):
    """The dtype a number adopts next to ``v``: v's dtype, or i32 beside a pointer."""
    return "i32" if v.pointer else v.dtype


def as_values(a, b, op, div_or_mod=False):
    """Both operands as Values of one dtype, promoted as in Triton (promotion.py); beside a
    pointer a number is an i32 offset."""
    if is_number(a) and is_number(b):
        dtype = "f32" if "f32" in (number_dtype(a), number_dtype(b)) else number_dtype(a)
        return as_value(a, op, dtype), as_value(b, op, dtype)
    for x in (a, b):
        if not (isinstance(x, Value) or is_number(x)):
            raise _operand_error(op, x)
    a = as_value(a, op) if isinstance(a, Value) else a
    b = as_value(b, op) if isinstance(b, Value) else b
    if (isinstance(a, Value) and a.pointer) or (isinstance(b, Value) and b.pointer):
        if isinstance(a, Value):
            return a, as_value(b, op, dtype_for_numbers(a))
        return as_value(a, op, dtype_for_numbers(b)), b
    try:
        if not isinstance(b, Value):
            dtype = promotion.with_number(a.dtype, b, div_or_mod)
        elif not isinstance(a, Value):
            dtype = promotion.with_number(b.dtype, a, div_or_mod)
        else:
            dtype = promotion.computation_type(a.dtype, b.dtype, div_or_mod)
    except promotion.PromotionError as e:
        raise user_error(f"{op}: {e}", user_location()) from None
    return _as_dtype(a, dtype, op), _as_dtype(b, dtype, op)


def _as_dtype(x, dtype, op):
    if isinstance(x, Value):
        return x if x.dtype == dtype else cast(x, dtype)
    return as_value(x, op, dtype)


_DIV_OR_MOD = ("div", "rem", "floordiv")


_BITWISE = ("and", "or", "xor", "shl", "shr")


def _fp8_operands(op, *values):
    """fp8 operands in f32, where their arithmetic is computed (docs/python.md, "8-bit
    floats"): an fp8 value is a byte the target cannot compute with."""
    if op in _BITWISE:
        raise user_error(f"{op}: bitwise operations need integer operands, got {values[0].dtype}",
                         user_location())
    return [cast(v, "f32") for v in values]


def binary(op, a, b):
    """An arithmetic or bitwise Tile IR op ('add', 'floordiv', 'max', ...) on two operands.
    Two fp8 operands of one format compute in f32 and round once to their format, as Triton's
    result dtype is theirs."""
    a, b = as_values(a, b, op, op in _DIV_OR_MOD)
    if dtypes.is_fp8(a.dtype):
        wide_a, wide_b = _fp8_operands(op, a, b)
        return cast(wrap(a.trace, a.trace.at().binary(op, wide_a.id, wide_b.id)), a.dtype)
    return wrap(a.trace, a.trace.at().binary(op, a.id, b.id))


def floor_divide(a, b):
    """``a // b`` as Triton computes it: on traced integers (tiles and scalars alike, which
    Triton compiles to ``arith.divsi``) C's division, rounding toward zero; on floats Python's,
    rounding toward negative infinity. Python numbers divide in Python, before tracing sees
    them."""
    a, b = as_values(a, b, "floordiv", True)
    return binary("floordiv" if dtypes.is_float(a.dtype) else "div", a, b)


def remainder(a, b):
    """``a % b`` as Triton computes it: C's remainder, with the dividend's sign (``a - b * (a
    // b)`` of the truncating division; ``arith.remsi`` on traced integers)."""
    a, b = as_values(a, b, "rem", True)
    return binary("rem", a, b)


def compare(pred, a, b):
    a, b = as_values(a, b, "cmp")
    if dtypes.is_fp8(a.dtype):  # every fp8 value is exact in f32
        a, b = _fp8_operands("cmp", a, b)
    return wrap(a.trace, a.trace.at().cmp(pred, a.id, b.id))


def unary(op, a, fast=False):
    a = as_value(a, op)
    if dtypes.is_fp8(a.dtype):  # in f32, rounded once back to the fp8 format
        (wide,) = _fp8_operands(op, a)
        return cast(wrap(a.trace, a.trace.at().unary(op, wide.id, fast)), a.dtype)
    return wrap(a.trace, a.trace.at().unary(op, a.id, fast))


def cast(a, dtype, fp_downcast_rounding=None, bitcast=False):
    """``a`` converted to ``dtype`` (Triton's tl.cast). Float conversions round to nearest
    even, so ``fp_downcast_rounding="rtne"`` (Triton's spelling of it, common before fp8
    downcasts) is accepted; bitcasts and ``"rtz"`` are not supported."""
    if fp_downcast_rounding == "rtne":
        fp_downcast_rounding = None
    if bitcast or fp_downcast_rounding is not None:
        from .errors import NotSupportedError

        what = "bitcast=True" if bitcast else f"fp_downcast_rounding={fp_downcast_rounding!r}"
        raise user_error(f"cast: {what} is not supported; conversions round to nearest (floats) "
                         "and truncate (float to integer)", user_location(), NotSupportedError)
    a = as_value(a, "cast")
    to = dtypes.dtype_name(dtype)
    if "f64" in (a.dtype, to) and (dtypes.is_fp8(a.dtype) or dtypes.is_fp8(to)):
        from .errors import NotSupportedError

        raise user_error(f"cast: {a.dtype} to {to} is not supported (Triton converts fp8 to and "
                         "from f32, f16 and bf16 only); convert through f32 (.to(tl.float32))",
                         user_location(), NotSupportedError)
    return wrap(a.trace, a.trace.at().cast(a.id, to))


def ptr_add(ptr, offsets, op="ptr_add"):
    """``ptr`` advanced by ``offsets`` elements. A pointer tile ``base + first`` that would
    have to broadcast to the offsets' shape is rebuilt as ``base + (first + offsets)``: the
    offsets broadcast, and no tile of pointers moves between threads (the 2-D idiom
    ``src + offs_m[:, None] * stride + offs_n[None, :]``)."""
    ptr = as_value(ptr, op)
    offsets = as_value(offsets, op, "i32")
    if ptr.address is not None and offsets.shape and offsets.shape != ptr.shape:
        base, first = ptr.address
        if ptr.trace.usable(base) and ptr.trace.usable(first):
            return ptr_add(base, first + offsets, op)
    result = wrap(ptr.trace, ptr.trace.at().ptr_add(ptr.id, offsets.id))
    if not ptr.shape and offsets.shape:
        result.address = (ptr, offsets)
    return result


def _address_cast(value, dtype):
    """Triton's casts between integers and pointers: an integer (an address, as tutorial 08's
    arrays of pointers hold) to ``tl.pointer_type(T)``, a pointer to an integer (its address),
    a pointer to a pointer of another element type (through its address)."""
    to_pointer = isinstance(dtype, dtypes.pointer_type)
    trace = value.trace
    if value.pointer and to_pointer and value.dtype == dtypes.dtype_name(str(dtype)):
        return value  # the same pointer type: nothing to do (and its buffer stays known)
    if value.pointer:
        address = wrap(trace, trace.at().ptr_to_int(value.id))
        if not to_pointer:
            if not dtypes.is_integer(dtypes.dtype_name(dtype)):
                raise user_error(f"to: a pointer becomes an integer (its address) or another "
                                 f"pointer, not {dtype}", user_location())
            return cast(address, dtype)
        value = address
    elif not dtypes.is_integer(value.dtype):
        raise user_error(f"to: only an integer becomes a pointer (an address), got "
                         f"{value.dtype} to tl.pointer_type({dtype})", user_location())
    if value.dtype != "i64":
        value = cast(value, "i64")
    return wrap(trace, trace.at().int_to_ptr(value.id, dtypes.dtype_name(str(dtype))))


def true_divide(a, b):
    a, b = as_values(a, b, "div", div_or_mod=True)
    if not dtypes.is_float(a.dtype):
        a, b = cast(a, "f32"), cast(b, "f32")
    return binary("div", a, b)


def _not_a_python_value(what):
    """Raises for Python control flow on a traced value, naming the construct and line."""
    from .source_rewrite import construct_at

    file, line = user_location()
    construct = construct_at(file, line) or what
    raise user_error(
        f"{construct} on a traced value: Python control flow runs once, while tracing, and "
        "cannot depend on values known only when the kernel runs; use metile.where for "
        "values and metile.tile_range for loops (constexpr parameters may drive Python "
        "control flow)", (file, line))


def _reversed(f):
    return lambda self, other: f(other, self)


class Value:
    """A traced Tile IR value: a scalar, a tile, a pointer (tile), or a tensor descriptor."""

    __slots__ = ("trace", "id", "type", "address")

    def __init__(self, trace, value_id):
        self.trace = trace
        self.id = value_id
        self.type = trace.core.type(value_id)
        self.address = None  # (scalar pointer, offsets) of a pointer tile made by ptr_add

    @property
    def dtype(self):
        """The element dtype name ('f32'); for pointers, the pointee's, whose ``element_ty``
        is the pointee dtype as in Triton (dtypes.pointer_type)."""
        name = self.type.dtype
        return dtypes.pointer_type(name) if self.type.pointer else dtypes.dtype(name)

    @property
    def shape(self):
        """The tile shape as a tuple; () for scalars and pointers."""
        return tuple(self.type.shape)

    @property
    def pointer(self):
        return self.type.pointer

    def to(self, dtype, fp_downcast_rounding=None, bitcast=False):
        """This value converted to ``dtype`` (round to nearest for floats); Triton's
        ``bitcast`` and rounding modes are not supported, nor is an integer made a pointer."""
        if isinstance(dtype, dtypes.pointer_type) or self.pointer:
            return _address_cast(self, dtype)
        return cast(self, dtype, fp_downcast_rounding, bitcast)

    cast = to  # Triton's tensor.cast, its member form of tl.cast

    # Triton's tensor member functions (x.sum(axis=0), x.exp(), ...): the free functions.
    def sum(self, axis=None, keep_dims=False, dtype=None):
        from .reductions import sum

        return sum(self, axis, keep_dims, dtype)

    def max(self, axis=None, return_indices=False, return_indices_tie_break_left=True,
            keep_dims=False):
        from .reductions import max

        return max(self, axis, return_indices, return_indices_tie_break_left, keep_dims)

    def min(self, axis=None, return_indices=False, return_indices_tie_break_left=True,
            keep_dims=False):
        from .reductions import min

        return min(self, axis, return_indices, return_indices_tie_break_left, keep_dims)

    def argmax(self, axis, tie_break_left=True, keep_dims=False):
        from .reductions import argmax

        return argmax(self, axis, tie_break_left, keep_dims)

    def argmin(self, axis, tie_break_left=True, keep_dims=False):
        from .reductions import argmin

        return argmin(self, axis, tie_break_left, keep_dims)

    def exp(self):
        return unary("exp", self)

    def log(self):
        return unary("log", self)

    def sqrt(self):
        return unary("sqrt", self)

    def abs(self):
        return unary("abs", self)

    def sigmoid(self):
        from .elementwise import sigmoid

        return sigmoid(self)

    def broadcast_to(self, *shape):
        from .language import broadcast_to

        return broadcast_to(self, *shape)

    def expand_dims(self, axis):
        from .language import expand_dims

        return expand_dims(self, axis)

    def reshape(self, *shape, can_reorder=False):
        from .shapes import reshape

        return reshape(self, *shape, can_reorder=can_reorder)

    def trans(self, *dims):
        from .shapes import trans

        return trans(self, *dims)

    def permute(self, *dims):
        from .shapes import permute

        return permute(self, *dims)

    @property
    def T(self):
        """The transpose of a 2-D tile, as Triton's ``x.T``."""
        return self.trans()

    def __pow__(self, exponent):
        from .elementwise import power

        return power(self, exponent)

    def __rpow__(self, base):
        from .elementwise import reversed_power

        return reversed_power(base, self)

    def __repr__(self):
        return f"metile.Value(%{self.id}: {self.type})"

    __hash__ = object.__hash__

    def __add__(self, other):
        if self.pointer:
            return ptr_add(self, other)
        if isinstance(other, Value) and other.pointer:
            return ptr_add(other, self)
        return binary("add", self, other)

    def __radd__(self, other):
        return ptr_add(self, other) if self.pointer else binary("add", other, self)

    def __sub__(self, other):
        if self.pointer:
            return ptr_add(self, -other if is_number(other) else unary("neg", other), "ptr_sub")
        return binary("sub", self, other)

    __mul__ = lambda self, other: binary("mul", self, other)  # noqa: E731
    __truediv__ = true_divide
    __floordiv__ = lambda self, other: floor_divide(self, other)  # noqa: E731
    __mod__ = lambda self, other: remainder(self, other)  # noqa: E731
    __and__ = lambda self, other: binary("and", self, other)  # noqa: E731
    __or__ = lambda self, other: binary("or", self, other)  # noqa: E731
    __xor__ = lambda self, other: binary("xor", self, other)  # noqa: E731
    __lshift__ = lambda self, other: binary("shl", self, other)  # noqa: E731
    __rshift__ = lambda self, other: binary("shr", self, other)  # noqa: E731
    __rsub__ = _reversed(lambda a, b: binary("sub", a, b))
    __rmul__ = _reversed(lambda a, b: binary("mul", a, b))
    __rtruediv__ = _reversed(true_divide)
    __rfloordiv__ = _reversed(floor_divide)
    __rmod__ = _reversed(remainder)
    __rand__ = _reversed(lambda a, b: binary("and", a, b))
    __ror__ = _reversed(lambda a, b: binary("or", a, b))
    __rxor__ = _reversed(lambda a, b: binary("xor", a, b))
    __rlshift__ = _reversed(lambda a, b: binary("shl", a, b))
    __rrshift__ = _reversed(lambda a, b: binary("shr", a, b))

    def __neg__(self):
        return unary("neg", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return unary("abs", self)

    def __invert__(self):
        # True, not 1, for a boolean: a Python int would promote it to i32 (Triton's ~ of an
        # i1 is an i1).
        ones = True if self.dtype == "i1" else {"u32": 0xFFFFFFFF, "u16": 0xFFFF,
                                                "u8": 0xFF}.get(self.dtype, -1)
        return binary("xor", self, ones)

    def __lt__(self, other):
        return compare("lt", self, other)

    def __le__(self, other):
        return compare("le", self, other)

    def __gt__(self, other):
        return compare("gt", self, other)

    def __ge__(self, other):
        return compare("ge", self, other)

    def __eq__(self, other):
        if not (isinstance(other, Value) or is_number(other)):
            return NotImplemented
        return compare("eq", self, other)

    def __ne__(self, other):
        if not (isinstance(other, Value) or is_number(other)):
            return NotImplemented
        return compare("ne", self, other)

    def __getitem__(self, index):
        """``t[:, None]`` (a column) and ``t[None, :]`` (a row) of a 1-D tile."""
        index = index if isinstance(index, tuple) else (index,)
        full = slice(None)
        if len(self.shape) == 1 and len(index) == 2:
            if index[0] == full and index[1] is None:
                return wrap(self.trace, self.trace.at().expand_dims(self.id, 1))
            if index[0] is None and index[1] == full:
                return wrap(self.trace, self.trace.at().expand_dims(self.id, 0))
        raise user_error(
            f"indexing: only t[:, None] and t[None, :] on a 1-D tile are supported, got "
            f"{index!r} on {self.type}", user_location())

    def __bool__(self):
        _not_a_python_value("converting a traced value to a Python bool")

    def __index__(self):
        _not_a_python_value("using a traced value as a Python integer")

    __int__ = __index__

    def __float__(self):
        _not_a_python_value("using a traced value as a Python float")

    def __iter__(self):
        _not_a_python_value("iterating over a traced value")
