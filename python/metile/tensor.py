"""Tensor descriptors: ``metile.tensor(ptr, shape=, strides=, access=)`` describes a
buffer as a logical array; ``.load(coords)`` / ``.store(coords, value)`` access it at tile
coordinates (scalars and tiles broadcast); out-of-bounds elements read 0 and are never
written or read in memory."""

from .errors import user_error
from .fragments import fragment_view, shared_view
from .frames import user_location
from .language import _not_built, _stored_value
from .tracing import current
from .values import Value, as_value, is_number

_ACCESSES = ("read", "write", "read_write")


def _row_major_strides(shape):
    strides = [1]
    for dim in reversed(shape[1:]):
        strides.insert(0, strides[0] * dim)
    return strides


class Tensor:
    """A descriptor made by metile.tensor."""

    __slots__ = ("value", "rank", "dtype")

    def __init__(self, value, rank):
        self.value, self.rank = value, rank
        self.dtype = value.dtype

    def _coords(self, coords, op):
        coords = tuple(coords) if isinstance(coords, (tuple, list)) else (coords,)
        if any(not (isinstance(c, Value) or is_number(c)) for c in coords):
            raise user_error(f"{op}: coordinates are integers or traced integer values, got "
                             f"{coords!r}", user_location())
        return [as_value(c, op, "i32").id for c in coords]

    def load(self, coords, scratch=None):
        """The elements at ``coords`` (one per dimension); out of bounds reads 0."""
        if scratch is not None:
            _not_built("tensor.load(scratch=...)", ": matrix fragment tiles are not implemented")
        trace = current("tensor.load")
        trace.check(self.value, "tensor.load")
        ids = self._coords(coords, "tensor.load")
        return Value(trace, trace.at().tensor_load(self.value.id, ids))

    def store(self, coords, value, scratch=None):
        """Stores ``value`` at ``coords``; out-of-bounds elements are not written."""
        if scratch is not None:
            _not_built("tensor.store(scratch=...)", ": matrix fragment tiles are not implemented")
        trace = current("tensor.store")
        trace.check(self.value, "tensor.store")
        ids = self._coords(coords, "tensor.store")
        value = _stored_value(value, self.dtype, "tensor.store")
        trace.at().tensor_store(self.value.id, ids, value.id)


def tensor(ptr, shape, strides=None, block_shape=None, access=None):
    """A descriptor of the buffer ``ptr`` as a row-major (or ``strides``) array of ``shape``.

    ``access`` is "read", "write" or "read_write"; by default it follows what the kernel
    does with the buffer."""
    if block_shape is not None:
        return fragment_view(ptr, shape, strides, block_shape, access)
    trace = current("tensor")
    base = as_value(ptr, "tensor")
    if base.pointer and base.type.threadgroup:
        return shared_view(base, shape, strides, access)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if strides is None:
        if all(isinstance(d, int) for d in shape):
            strides = _row_major_strides(list(shape))
        else:
            strides = [1]
            for dim in reversed(shape[1:]):
                strides.insert(0, dim * strides[0])
    strides = tuple(strides) if isinstance(strides, (tuple, list)) else (strides,)
    if access is not None and access not in _ACCESSES:
        raise user_error(f"tensor: access must be read, write or read_write, got '{access}'",
                         user_location())
    dims = [as_value(d, "tensor", "i32").id for d in shape]
    steps = [as_value(s, "tensor", "i32").id for s in strides]
    descriptor = Value(trace, trace.at().make_tensor(base.id, dims, steps, access or ""))
    return Tensor(descriptor, len(shape))
