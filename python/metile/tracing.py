"""The kernel being traced: its C++ KernelTrace, the regions that have closed (so a value
from a loop body cannot leak out), and what the body did with each buffer parameter (so
its access can be inferred: read, write or read_write)."""

import threading
from contextlib import contextmanager

from . import _core
from .errors import user_error
from .frames import user_location

_active = threading.local()


class BufferUse:
    """How the traced body used one buffer parameter."""

    __slots__ = ("index", "reads", "writes")

    def __init__(self, index):
        self.index, self.reads, self.writes = index, False, False

    @property
    def access(self):
        if self.reads and self.writes:
            return "read_write"
        return "write" if self.writes else "read"


class Trace:
    def __init__(self, name):
        self.name = name
        self.core = _core.KernelTrace(name)
        self.closed = []  # (first id, end id, what): values of regions that have closed
        self.buffers = {}  # parameter index -> BufferUse
        self.implicit_tensors = []  # (descriptor id, origins): access follows the buffer

    def at(self):
        """The C++ trace with the user's current line set on the ops made next."""
        file, line = user_location()
        if file is not None:
            self.core.set_location(file, line)
        return self.core

    def close_region(self, first, what):
        self.closed.append((first, self.core.next_value_id(), what))

    def usable(self, value):
        """Whether ``value`` belongs to this trace and to no closed region."""
        return value.trace is self and not any(f <= value.id < e for f, e, _ in self.closed)

    def check(self, value, op):
        """Raises when ``value`` may not be used here: another trace, or a closed region."""
        if value.trace is not self:
            raise user_error(f"{op}: the value belongs to another kernel's trace", user_location())
        for first, end, what in self.closed:
            if first <= value.id < end:
                raise user_error(
                    f"{op}: the value was defined inside {what} and cannot be used outside it; "
                    "assign the variable before the loop so it is carried", user_location())
        return value.id

    def mark(self, origins, read=False, write=False):
        for index in origins:
            use = self.buffers[index]
            use.reads |= read
            use.writes |= write

    def finish(self):
        """Fixes the inferred accesses and returns the Tile IR kernel."""
        for index, use in self.buffers.items():
            self.core.set_param_access(index, use.access)
        for descriptor, origins in self.implicit_tensors:
            accesses = {self.buffers[i].access for i in origins}
            access = accesses.pop() if len(accesses) == 1 else "read_write"
            self.core.set_tensor_access(descriptor, access)
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
