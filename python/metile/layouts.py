"""Thread ownership (seed 004): which thread holds each element of a tile.

``ThreadLayout(bit_order, xor_mask=0, elements_per_thread=1)`` is an immutable bijection
between a tile's logical indices and (thread, register slot); ``metile.arange(start, end,
layout=)`` makes a tile owned by one, and ``metile.convert_layout(x, layout)`` moves a tile's
values to another owner without changing them. Arithmetic, comparisons, selections, casts and
descriptor loads keep their operands' owner; values of different owners combine only through
convert_layout (the compiler's check_ownership pass says where they do not).

A layout is a valid constexpr: each one gives its own specialisation.
"""

from ._core import ThreadLayout
from .errors import user_error
from .frames import user_location
from .tracing import current
from .values import as_value, wrap


def _checked(layout, op):
    if not isinstance(layout, ThreadLayout):
        raise user_error(f"{op}: layout must be a metile.ThreadLayout, got "
                         f"{type(layout).__name__}", user_location())
    return layout


def owned_arange(start, end, layout):
    """The i32 tile start, ..., end - 1 owned as ``layout`` says (of end - start elements)."""
    layout = _checked(layout, "arange")
    trace = current("arange")
    return wrap(trace, trace.at().arange(start, end, layout))


def convert_layout(value, layout):
    """The same logical tile, owned as ``layout`` says: the values move between threads, each
    logical index keeps its value."""
    layout = _checked(layout, "convert_layout")
    value = as_value(value, "convert_layout")
    return wrap(value.trace, value.trace.at().convert_layout(value.id, layout))


__all__ = ["ThreadLayout", "convert_layout", "owned_arange"]
