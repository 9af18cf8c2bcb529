"""Triton's ``tl.inline_asm_elementwise``: PTX run on every element of its arguments. It is
inline PTX, so only the cuda device runs it; tracing it for another device is a
NotSupportedError naming that device."""

from . import dtypes
from .buffer import device
from .errors import NotSupportedError, user_error
from .frames import user_location
from .tracing import current
from .values import as_value, wrap


def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """The elementwise result of the PTX ``asm`` on ``args`` (tiles broadcast to one shape, or
    scalars), of ``dtype``; Triton's operand syntax (``$0`` the result, ``$1``... the
    arguments) and LLVM's ``constraints`` (``"=r,r"``: the output's first). ``is_pure=False``
    keeps it even when its result is unused (``asm volatile``). Only ``pack=1`` and one
    result dtype are supported."""
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise user_error("inline_asm_elementwise: asm and constraints are strings",
                         user_location())
    if isinstance(dtype, (tuple, list)):
        raise user_error("inline_asm_elementwise: several result dtypes (a tuple) are not "
                         "supported; give one dtype", user_location(), NotSupportedError)
    if pack != 1:
        raise user_error(f"inline_asm_elementwise: pack={pack} is not supported (each asm "
                         "call takes one element of each argument: pack=1)", user_location(),
                         NotSupportedError)
    where = device()
    if where != "cuda":
        raise user_error("inline_asm_elementwise: inline PTX runs only on the cuda device; "
                         f"this kernel is compiled for the {where} device", user_location(),
                         NotSupportedError)
    trace = current("inline_asm_elementwise")
    values = [as_value(a, "inline_asm_elementwise") for a in args]
    if not values:
        raise user_error("inline_asm_elementwise: needs at least one argument", user_location())
    return wrap(trace, trace.at().inline_asm([v.id for v in values], dtypes.dtype_name(dtype),
                                             asm, constraints, bool(is_pure)))
