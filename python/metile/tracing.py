"""The kernel being traced: a proxy over the C++ tracing core (metile/trace/kernel_trace.h),
which owns the Tile IR, keeps values inside the regions that defined them, and infers each
buffer's access (read, write or read_write) from what the body does with it."""

import threading
from contextlib import contextmanager

from . import _core
from .errors import user_error
from .frames import user_location

_active = threading.local()


class Trace:
    def __init__(self, name):
        self.name = name
        self.core = _core.KernelTrace(name)
        self.hints = []  # (multiple_of | max_contiguous | max_constancy, value id, amounts)

    def at(self):
        """The C++ trace with the user's current line set on the ops made next."""
        file, line = user_location()
        if file is not None:
            self.core.set_location(file, line)
        return self.core

    def usable(self, value):
        """Whether ``value`` belongs to this trace and to no closed region."""
        return value.trace is self and self.core.usable(value.id)

    def check(self, value, op):
        """Raises when ``value`` may not be used here: another trace, or a closed region."""
        if value.trace is not self:
            raise user_error(f"{op}: the value belongs to another kernel's trace", user_location())
        if not self.core.usable(value.id):
            self.at().use(value.id, op)  # raises the core's error at the user's line
        return value.id

    def finish(self):
        """Fixes the inferred accesses and returns the Tile IR kernel."""
        return self.core.finish()


def current(op):
    """The active trace; an error naming ``op`` when no kernel is being traced."""
    trace = getattr(_active, "trace", None)
    if trace is None:
        raise user_error(
            f"{op}: meTile language functions can only run while a @metile.kernel is traced "
            "(launch it with kernel[grid](...))", user_location())
    return trace


def active_trace():
    return getattr(_active, "trace", None)


@contextmanager
def activate(trace):
    previous = getattr(_active, "trace", None)
    _active.trace = trace
    try:
        yield trace
    finally:
        _active.trace = previous
