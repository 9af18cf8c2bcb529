"""The kernel being traced: a proxy over the C++ tracing core (metile/trace/kernel_trace.h),
which owns the Tile IR, keeps values inside the regions that defined them, and infers each
buffer's access (read, write or read_write) from what the body does with it."""

import threading
import types
from contextlib import contextmanager

from . import _core
from .errors import CompilationError, InternalCompilerError, KernelFaultError, user_error
from .frames import _PACKAGE_DIR, user_location

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


# ---- Python failures of a traced body ------------------------------------------------------
# The rewritten bodies of loops and branches (source_rewrite.py) are named with this prefix.
_REWRITE_PREFIX = "__metile_"
_USER_FRAMES_SHOWN = 30
_COMBINED = {}  # exception type -> CompilationError subclass that is also of that type


def _user_frames(traceback):
    """(frame, lasti, lineno) of the traceback's frames outside the metile package."""
    frames = []
    while traceback is not None:
        if not traceback.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            frames.append((traceback.tb_frame, traceback.tb_lasti, traceback.tb_lineno))
        traceback = traceback.tb_next
    return frames


def _raised_by_metile(traceback):
    """Whether the innermost Python frame is meTile's: an error it raised on purpose (a
    misused language function), or a bug of its own, which must stay visible as it is."""
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    return traceback.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR)


def _function_names(frames):
    """The user functions of the frames, outermost first, each run of one function once."""
    names = []
    for frame, _, _ in frames:
        name = frame.f_code.co_name
        if not name.startswith(_REWRITE_PREFIX) and (not names or names[-1] != name):
            names.append(name)
    return names


def _recursing(frames):
    """The user functions seen more than once, in the order they were first called."""
    counts = {}
    for frame, _, _ in frames:
        name = frame.f_code.co_name
        if not name.startswith(_REWRITE_PREFIX):
            counts[name] = counts.get(name, 0) + 1
    return [name for name, count in counts.items() if count > 1]


def _first_visits(frames):
    """The frames up to where a recursion repeats: each (code, line) once, outermost first."""
    seen, kept = set(), []
    for entry in frames:
        place = (entry[0].f_code, entry[2])
        if place not in seen:
            seen.add(place)
            kept.append(entry)
    return kept


def _traceback_of(frames):
    """A traceback through ``frames`` only (outermost first)."""
    traceback = None
    for frame, lasti, lineno in reversed(frames):
        traceback = types.TracebackType(traceback, frame, lasti, lineno)
    return traceback


def _combined_class(error_type):
    """A CompilationError that is also an ``error_type``, so that code catching the
    original exception's type still catches it; None when the two cannot be combined."""
    if error_type not in _COMBINED:
        try:
            combined = type("CompilationError", (CompilationError, error_type),
                            {"__module__": "metile", "__str__": BaseException.__str__})
            combined("probe")
        except TypeError:  # a layout or constructor of its own (UnicodeDecodeError)
            combined = None
        _COMBINED[error_type] = combined
    return _COMBINED[error_type]


def body_failure(error, kernel_name):
    """The CompilationError for an exception of Python that escaped a kernel's traced body:
    unbounded recursion anywhere, or an exception the user's own code raised. It names the
    kernel and the helper, points at the user's line, and carries a traceback of the user's
    frames only (a recursion's once each). None for meTile's own errors and for exceptions
    meTile raised, which propagate unchanged."""
    if isinstance(error, (CompilationError, InternalCompilerError, KernelFaultError)):
        return None
    recursion = isinstance(error, RecursionError)
    traceback = error.__traceback__
    if traceback is None or (not recursion and _raised_by_metile(traceback)):
        return None
    frames = _user_frames(traceback)
    if not frames:
        return None
    shown = _first_visits(frames) if recursion else frames[-_USER_FRAMES_SHOWN:]
    innermost = shown[-1][0]
    where = (innermost.f_code.co_filename, shown[-1][2])
    if recursion:
        loop = _recursing(frames) or _function_names(frames)[-1:]
        through = "".join(f" (through '{name}')" for name in loop[1:])
        rule = (f"{kernel_name}: the helper '{loop[0]}'{through} recursed without end while "
                f"the kernel was traced ({error}); helpers run inline while a kernel is "
                "traced, so a recursion must stop on values known then (Python numbers, "
                "constexprs)")
    else:
        names = _function_names(frames)
        place = f"the helper '{names[-1]}'" if len(names) > 1 else "the kernel's body"
        rule = (f"{kernel_name}: {type(error).__name__} in {place} while the kernel was "
                f"traced: {error}")
    failure = user_error(rule, where, _combined_class(type(error)) or CompilationError)
    return failure.with_traceback(_traceback_of(shown))
