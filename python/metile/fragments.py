"""Matrix fragment views (docs/fragments.md): ``metile.tensor(shared_ptr, shape=,
block_shape=(8, 8))`` describes threadgroup memory as 8x8 tiles that ``.load(coords)`` reads
into an opaque per-SIMD-group fragment and ``.store(coords, fragment)`` writes back. Views are
row-major, padded-row-major or transposed (strides (1, n)); origins are Python integers and
every tile must lie inside the declared shape."""

from .errors import NotSupportedError, user_error
from .frames import user_location
from .tracing import current
from .values import Value, as_value, ptr_add


class FragmentView:
    """An 8x8-tiled view of a shared allocation, made by metile.tensor(block_shape=(8, 8))."""

    __slots__ = ("base", "shape", "strides", "dtype")

    def __init__(self, base, shape, strides):
        self.base, self.shape, self.strides = base, shape, strides
        self.dtype = base.dtype

    def _address(self, coords, op):
        coords = tuple(coords) if isinstance(coords, (tuple, list)) else (coords,)
        if len(coords) != 2 or not all(isinstance(c, int) for c in coords):
            raise user_error(f"{op}: a fragment origin is two Python integers, got {coords!r}",
                             user_location())
        row, column = coords
        if row < 0 or column < 0 or row + 8 > self.shape[0] or column + 8 > self.shape[1]:
            raise user_error(f"{op}: the 8x8 tile at {coords} leaves the view of shape "
                             f"{self.shape}", user_location())
        offset = row * self.strides[0] + column * self.strides[1]
        transpose = self.strides[1] != 1
        stride = self.strides[1] if transpose else self.strides[0]
        return as_value(offset, op, "i32").id, as_value(stride, op, "i32").id, transpose

    def load(self, coords, scratch=None):
        """The 8x8 fragment whose top-left element is at ``coords``."""
        if scratch is not None:
            raise user_error("tensor.load: scratch= is for device tiles, not shared views",
                             user_location())
        trace = current("tensor.load")
        offset, stride, transpose = self._address(coords, "tensor.load")
        return Value(trace, trace.at().matrix_load(self.base.id, offset, stride, transpose))

    def store(self, coords, value, scratch=None):
        """Writes the fragment ``value`` (cast to the view's dtype) at ``coords``."""
        if scratch is not None:
            raise user_error("tensor.store: scratch= is for device tiles, not shared views",
                             user_location())
        trace = current("tensor.store")
        if not isinstance(value, Value) or value.type.kind != "matrix":
            raise user_error("tensor.store: a fragment view stores matrix fragments (from "
                             ".load or metile.dot)", user_location())
        if value.dtype != self.dtype:
            value = value.to(self.dtype)
        offset, stride, transpose = self._address(coords, "tensor.store")
        trace.at().matrix_store(value.id, self.base.id, offset, stride, transpose)


def fragment_view(ptr, shape, strides, block_shape):
    """The view metile.tensor returns for ``block_shape``."""
    if tuple(block_shape) != (8, 8):
        raise user_error(f"tensor: block_shape must be (8, 8), got {tuple(block_shape)}",
                         user_location(), NotSupportedError)
    base = as_value(ptr, "tensor")
    if not base.pointer or not base.type.threadgroup:
        raise user_error("tensor(block_shape=(8, 8)) on a device buffer needs scratch= for its "
                         "masked tails, which is not built yet; stage the tile through "
                         "metile.shared memory", user_location(), NotSupportedError)
    shape = tuple(shape)
    if len(shape) != 2 or not all(isinstance(d, int) for d in shape):
        raise user_error(f"tensor: a fragment view has a constant 2-D shape, got {shape}",
                         user_location())
    strides = (shape[1], 1) if strides is None else tuple(strides)
    if len(strides) != 2 or not all(isinstance(s, int) and s > 0 for s in strides) or (
            1 not in strides):
        raise user_error(f"tensor: fragment view strides are (n, 1) or (1, n), got {strides}",
                         user_location(), NotSupportedError)
    return FragmentView(base, shape, strides)


class SharedView:
    """A scalar view of a shared allocation (metile.tensor on a metile.shared pointer without
    block_shape): ``.load(coords)`` / ``.store(coords, value)`` at element coordinates; out
    of bounds reads 0 and writes nothing, as device descriptors do."""

    __slots__ = ("base", "shape", "strides", "dtype")

    def __init__(self, base, shape, strides):
        self.base, self.shape, self.strides = base, shape, strides
        self.dtype = base.dtype

    def _pointer_and_mask(self, coords, op):
        coords = tuple(coords) if isinstance(coords, (tuple, list)) else (coords,)
        if len(coords) != len(self.shape):
            raise user_error(f"{op}: {len(self.shape)} coordinates needed, got {len(coords)}",
                             user_location())
        offset, inside = 0, True
        for c, d, s in zip(coords, self.shape, self.strides):
            offset = offset + c * s
            inside = inside & (c >= 0) & (c < d)
        return ptr_add(self.base, offset), inside

    def load(self, coords, scratch=None):
        from .language import load

        pointer, inside = self._pointer_and_mask(coords, "tensor.load")
        return load(pointer, mask=inside, other=0)

    def store(self, coords, value, scratch=None):
        from .language import store

        pointer, inside = self._pointer_and_mask(coords, "tensor.store")
        store(pointer, value, mask=inside)


def shared_view(base, shape, strides):
    """The view metile.tensor returns for a shared pointer without block_shape."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if strides is None:
        strides = [1]
        for dim in reversed(shape[1:]):
            strides.insert(0, dim * strides[0])
    return SharedView(base, shape, tuple(strides))
