"""Compile-time helpers (static_range, static_assert, static_print), the compiler hints
multiple_of / max_contiguous / max_constancy, and Triton's device-side debugging calls.

Hints are recorded on the trace (``Trace.hints``) and checked where that is cheap: a hint
on a Python number must hold. The lowering does not read them yet; they change no result.
"""

from .errors import user_error
from .frames import user_location
from .tracing import current
from .values import Value, as_value, is_number


def _constant(x, what):
    if isinstance(x, Value):
        raise user_error(f"{what} needs a value known while tracing (a Python number or a "
                         f"constexpr), got the traced value {x.type}", user_location())
    return x


def static_range(start, end=None, step=1):
    """A Python range over constexprs: the loop is unrolled while tracing."""
    bounds = (start, end, step) if end is not None else (0, start, step)
    for b in bounds:
        _constant(b, "static_range")
        if not isinstance(b, int):
            raise user_error(f"static_range: bounds are Python ints, got {b!r}", user_location())
    return range(*bounds)


def static_assert(condition, message=""):
    """Fails the compilation when ``condition`` (known while tracing) is false."""
    if not _constant(condition, "static_assert"):
        raise user_error(f"static_assert failed{': ' + message if message else ''}",
                         user_location())


def static_print(*values, **kwargs):
    """print() while tracing: constexprs print their values, traced values their types."""
    print(*values, **kwargs)


def device_assert(condition, message="", mask=None):
    """Triton's tl.device_assert: where an element of ``condition`` is false (and ``mask``,
    when given, true) the kernel stops, and the launch raises metile.KernelFaultError naming
    the message, the kernel, this line, the program and the thread (on CUDA the report is
    printed and the kernel traps). A condition known while tracing is checked now. Unlike
    Triton, which checks only in debug mode, every launch checks."""
    if is_number(condition):
        static_assert(condition, message)
        return
    from .language import where

    condition = as_value(condition, "device_assert")
    if condition.dtype != "i1":
        condition = condition != 0  # a number holds where it is not zero, as in C
    if mask is not None:
        condition = where(mask, condition, True)
    if not isinstance(message, str):
        raise user_error(f"device_assert: the message is a string, got {message!r}",
                         user_location())
    condition.trace.at().device_assert(condition.id, message)


def device_print(prefix, *values, hex=False):
    """Triton's tl.device_print: every thread prints ``prefix`` and its values, one line per
    element it owns (scalars: one line per thread), "pid (x, y, z) thread t idx (i) prefix
    value", each thread's lines in program order. Several values print one after the other,
    marked "(operand k)"."""
    if not isinstance(prefix, str):
        raise user_error(f"device_print: the prefix is a string, got {prefix!r}", user_location())
    trace = current("device_print")
    values = [as_value(v, "device_print") for v in values]
    trace.at().device_print(prefix, [v.id for v in values], bool(hex))


def _hint(kind, value, amounts):
    amounts = (amounts,) if isinstance(amounts, int) else tuple(amounts)
    if not amounts or not all(isinstance(a, int) and a > 0 for a in amounts):
        raise user_error(f"{kind}: the hint is a positive Python int or a tuple of them, got "
                         f"{amounts!r}", user_location())
    if is_number(value):
        if kind == "multiple_of" and int(value) % amounts[0] != 0:
            raise user_error(f"multiple_of: {value} is not a multiple of {amounts[0]}",
                             user_location())
        return value
    if not isinstance(value, Value):
        raise user_error(f"{kind}: expects a traced value or a number, got "
                         f"{type(value).__name__}", user_location())
    rank = max(len(value.shape), 1)
    if len(amounts) not in (1, rank):
        raise user_error(f"{kind}: {len(amounts)} hints for a value of rank {rank}",
                         user_location())
    current(kind).hints.append((kind, value.id, amounts))
    return value


def multiple_of(value, values):
    """``value``, with the hint that it (each first element of a run) is a multiple of
    ``values``."""
    return _hint("multiple_of", value, values)


def max_contiguous(value, values):
    """``value``, with the hint that runs of ``values`` consecutive elements are contiguous."""
    return _hint("max_contiguous", value, values)


def max_constancy(value, values):
    """``value``, with the hint that runs of ``values`` elements are equal."""
    return _hint("max_constancy", value, values)


def assume(condition):
    """Triton's tl.assume: a fact the compiler may rely on (``x > 0``, ``stride % 16 == 0``).
    A condition known while tracing must hold; a traced one is accepted and not used, so it
    changes no result (and, unlike an assert, is not checked)."""
    if is_number(condition):
        if not condition:
            raise user_error("assume: the condition is false", user_location())
        return
    if not isinstance(condition, Value):
        raise user_error(f"assume: expects a traced condition or a Python bool, got "
                         f"{type(condition).__name__}", user_location())
