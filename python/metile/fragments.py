"""Matrix fragment views (docs/fragments.md): ``metile.tensor(shared_ptr, shape=,
block_shape=(8, 8))`` describes threadgroup memory as 8x8 tiles that ``.load(coords)`` reads
into an opaque per-SIMD-group fragment and ``.store(coords, fragment)`` writes back. Views are
row-major, padded-row-major or transposed (strides (1, n)); origins are Python integers and
every tile must lie inside the declared shape.

On a device buffer, ``metile.tensor(ptr, shape=(rows, columns), strides=, block_shape=(8, 8))``
is a device tile view: ``.load((row, column), scratch=)`` / ``.store((row, column), fragment,
scratch=)`` move any 8x8 tile, elements outside the view reading 0 and never written; the
compiler passes incomplete tiles through the scratch shared tensor."""

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


class DeviceTileView:
    """An 8x8-tiled view of a device buffer, made by metile.tensor(block_shape=(8, 8)) on a
    device pointer: rank two, constant strides, runtime extents and origins (uniform)."""

    __slots__ = ("base", "shape", "strides", "access", "dtype")

    def __init__(self, base, shape, strides, access):
        self.base, self.shape, self.strides, self.access = base, shape, strides, access
        self.dtype = base.dtype

    def _tile(self, coords, scratch, op):
        coords = tuple(coords) if isinstance(coords, (tuple, list)) else (coords,)
        if len(coords) != 2 or not all(isinstance(c, (int, Value)) for c in coords):
            raise user_error(f"{op}: a device tile origin is two integers (Python or traced), "
                             f"got {coords!r}", user_location())
        row, column = (as_value(c, op, "i32").id for c in coords)
        rows, columns = (as_value(d, op, "i32").id for d in self.shape)
        return dict(ptr=self.base.id, row=row, column=column, rows=rows, columns=columns,
                    row_stride=self.strides[0], column_stride=self.strides[1],
                    scratch=_scratch(scratch, self.dtype, op), scratch_rows=scratch.shape[0])

    def load(self, coords, scratch=None):
        """The 8x8 fragment whose top-left element is at ``coords``; elements outside the view
        read 0."""
        if self.access == "write":
            raise user_error("tensor.load: the device tile view was declared access='write'",
                             user_location())
        trace = current("tensor.load")
        tile = self._tile(coords, scratch, "tensor.load")
        return Value(trace, trace.at().device_tile_load(**tile))

    def store(self, coords, value, scratch=None):
        """Writes the fragment ``value`` (cast to the view's dtype) at ``coords``; elements
        outside the view are not written."""
        if self.access == "read":
            raise user_error("tensor.store: the device tile view was declared access='read'",
                             user_location())
        trace = current("tensor.store")
        if not isinstance(value, Value) or value.type.kind != "matrix":
            raise user_error("tensor.store: a device tile view stores matrix fragments (from "
                             ".load or metile.dot)", user_location())
        if value.dtype != self.dtype:
            value = value.to(self.dtype)
        tile = self._tile(coords, scratch, "tensor.store")
        trace.at().device_tile_store(value.id, **tile)


def _scratch(scratch, dtype, op):
    """The pointer of a device tile's scratch= tensor, after checking the seed's contract."""
    contract = ("a metile.tensor over a metile.shared allocation of shape (BLOCK // 4, 8), "
                "strides (8, 1), read/write access and the device tensor's dtype")
    if scratch is None:
        raise user_error(f"{op}: a device tile needs scratch= for incomplete tiles: {contract}",
                         user_location())
    if not isinstance(scratch, SharedView):
        raise user_error(f"{op}: scratch= must be {contract}, got {type(scratch).__name__}",
                         user_location())
    if len(scratch.shape) != 2 or not isinstance(scratch.shape[0], int) or scratch.shape[1] != 8:
        raise user_error(f"{op}: scratch= must have shape (BLOCK // 4, 8), got "
                         f"{tuple(scratch.shape)}", user_location())
    if tuple(scratch.strides) != (8, 1):
        raise user_error(f"{op}: scratch= must have strides (8, 1), got "
                         f"{tuple(scratch.strides)}", user_location())
    if scratch.access not in (None, "read_write"):
        raise user_error(f"{op}: scratch= must have read/write access, got '{scratch.access}'",
                         user_location())
    if scratch.dtype != dtype:
        raise user_error(f"{op}: scratch= must have the device tensor's dtype {dtype}, got "
                         f"{scratch.dtype}", user_location())
    return scratch.base.id


def device_tile_view(base, shape, strides, access):
    """The view metile.tensor returns for ``block_shape`` on a device pointer."""
    if base.dtype not in ("f16", "f32"):
        raise user_error(f"tensor: device tile views hold f16 or f32, got {base.dtype}",
                         user_location(), NotSupportedError)
    if access not in (None, "read", "write", "read_write"):
        raise user_error(f"tensor: access must be read, write or read_write, got '{access}'",
                         user_location())
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if len(shape) != 2 or not all(isinstance(d, (int, Value)) for d in shape):
        raise user_error(f"tensor: a device tile view has rank two, got shape {shape!r}",
                         user_location(), NotSupportedError)
    if strides is None:
        if not isinstance(shape[1], int):
            raise user_error("tensor: a device tile view with a runtime column count needs "
                             "constant strides=", user_location())
        strides = (shape[1], 1)
    strides = tuple(strides)
    if len(strides) != 2 or not all(isinstance(s, int) and s > 0 for s in strides) or (
            1 not in strides):
        raise user_error(f"tensor: device tile view strides are constant and positive, "
                         f"row-major (n, 1) or column-major (1, n), got {strides!r}",
                         user_location(), NotSupportedError)
    return DeviceTileView(base, shape, strides, access)


def fragment_view(ptr, shape, strides, block_shape, access=None):
    """The view metile.tensor returns for ``block_shape``."""
    if tuple(block_shape) != (8, 8):
        raise user_error(f"tensor: block_shape must be (8, 8), got {tuple(block_shape)}",
                         user_location(), NotSupportedError)
    base = as_value(ptr, "tensor")
    if base.pointer and not base.type.threadgroup:
        return device_tile_view(base, shape, strides, access)
    if not base.pointer:
        raise user_error("tensor(block_shape=(8, 8)) views a metile.shared allocation or a "
                         "device buffer", user_location())
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

    __slots__ = ("base", "shape", "strides", "access", "dtype")

    def __init__(self, base, shape, strides, access=None):
        self.base, self.shape, self.strides, self.access = base, shape, strides, access
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


def shared_view(base, shape, strides, access=None):
    """The view metile.tensor returns for a shared pointer without block_shape."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if strides is None:
        strides = [1]
        for dim in reversed(shape[1:]):
            strides.insert(0, dim * strides[0])
    return SharedView(base, shape, tuple(strides), access)
