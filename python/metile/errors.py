"""The errors meTile raises (DESIGN.md, "Errors").

CompilationError: the kernel broke a rule; the message names the op, the rule and the
user's source line (also as the attributes ``file``, ``line`` and ``rule``).
NotSupportedError: a feature of the specification that is not built yet.
OutOfResources: a kernel or launch needs more than the device offers; the message names the
kernel, the requested geometry and the limit.
InternalCompilerError: a bug in meTile.
KernelFaultError: a kernel faulted while it ran (out-of-bounds access, integer division by
zero, threadgroup-memory race, ...); ``file`` and ``line`` name the kernel's source line
where the emitted code maps back to it, ``kernel``, ``threadgroup``, ``thread``, ``buffer``
and ``offset`` say where (None when unknown). Not a CompilationError.
"""

from ._core import (CompilationError, InternalCompilerError, KernelFaultError,
                    NotSupportedError, OutOfResources)


def user_error(rule, where=None, cls=CompilationError):
    """An exception of ``cls`` for a broken rule at ``where`` = (file, line) or None."""
    file, line = where if where else (None, None)
    error = cls(f"{file}:{line}: {rule}" if file else rule)
    error.file, error.line, error.rule = file, line, rule
    return error


__all__ = [
    "CompilationError",
    "InternalCompilerError",
    "KernelFaultError",
    "NotSupportedError",
    "OutOfResources",
    "user_error",
]
