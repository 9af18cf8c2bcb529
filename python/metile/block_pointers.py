"""Triton's block pointers and tensor descriptors.

``make_block_ptr(base, shape, strides, offsets, block_shape, order)`` describes the block at
``offsets`` of a strided tensor; ``advance`` moves it; ``load(block_ptr, boundary_check=(0, 1),
padding_option="zero")`` and ``store(block_ptr, value, boundary_check=...)`` access the pointer
tile ``base + sum_d (offsets[d] + arange(block_shape[d])) * strides[d]``, masked only along the
dimensions ``boundary_check`` names (``0 <= offsets[d] + i < shape[d]``), as Triton's are.

``make_tensor_descriptor(base, shape, strides, block_shape)`` gives ``desc.load(offsets)`` and
``desc.store(offsets, value)`` of one block with TMA's bounds: every dimension is checked, reads
outside give 0 (or NaN with padding_option="nan") and writes outside are dropped. It is a
``metile.tensor`` view, meTile's own descriptor.

A block pointer is not a traced value but a record of its parts; a loop carries it as those
parts (loops.py), so advancing it in a K loop advances scalar offsets, not pointer tiles.
"""

import math

from .errors import CompilationError, NotSupportedError, user_error
from .frames import user_location
from .language import arange, broadcast_to, full, load, store, where
from .tensor import tensor
from .values import Value, as_value, is_number

# Triton's padding options of a block pointer load; "" (Triton leaves those elements undefined)
# reads zeros here.
_PADDINGS = ("", "zero", "nan")


def _error(rule, cls=CompilationError):
    return user_error(rule, user_location(), cls)


def _sequence(x):
    """A tuple of Triton's list-like argument (a single element is a list of one)."""
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _index(x, op, what, i, offsets=False):
    """An element of shape, strides or offsets: a Python int or a traced integer scalar."""
    if isinstance(x, Value):
        if x.shape or x.pointer:
            raise _error(f"{op}: {what}[{i}] must be a scalar, got {x.type}")
        if not x.dtype.is_int() or x.dtype == "i1":
            raise _error(f"{op}: {what}[{i}] must be an integer, got {x.dtype}")
        if offsets and x.dtype == "i64":
            raise _error(f"{op}: {what}[{i}] is i64, but block pointers take 32-bit offsets; "
                         "add .to(tl.int32)")
        return as_value(x, op)
    if isinstance(x, bool) or not is_number(x) or int(x) != x:
        raise _error(f"{op}: {what}[{i}] must be an integer or a traced integer scalar, got "
                     f"{x!r}")
    return int(x)


def _block_shape(block_shape, op):
    """The block shape: Python ints, each a power of two; 1-D or 2-D (meTile's tiles)."""
    block_shape = _sequence(block_shape)
    for i, d in enumerate(block_shape):
        if isinstance(d, bool) or not isinstance(d, int):
            raise _error(f"{op}: block_shape[{i}] must be a Python int (a constexpr), got {d!r}")
        if d <= 0 or d & (d - 1):
            raise _error(f"{op}: block_shape[{i}] must be a power of 2, got {d}")
    if len(block_shape) > 2:
        raise _error(f"{op}: a {len(block_shape)}-D block_shape {block_shape}: meTile's tiles "
                     "are 1-D or 2-D", NotSupportedError)
    if not block_shape:
        raise _error(f"{op}: block_shape is empty")
    return block_shape


def _base(base, op):
    if not (isinstance(base, Value) and base.pointer and not base.shape):
        got = base.type if isinstance(base, Value) else type(base).__name__
        raise _error(f"{op}: base must be a pointer (a buffer argument, or one offset from "
                     f"it), got {got}")
    return as_value(base, op)


def _is_zero(x):
    return is_number(x) and x == 0


def _ranges(offsets, block_shape):
    """offsets[d] + arange(block_shape[d]) for each dimension (1-D i32 tiles)."""
    ranges = []
    for offset, size in zip(offsets, block_shape):
        r = arange(0, size)
        ranges.append(r if _is_zero(offset) else r + offset)
    return ranges


def _in_bounds(index, offset, extent):
    """0 <= index < extent (the lower test only where the offset may be negative)."""
    upper = index < extent
    if is_number(offset) and offset >= 0:
        return upper
    return (index >= 0) & upper


def _spread(tiles):
    """1-D tiles, one per dimension, as [B0, 1] and [1, B1] for a 2-D block."""
    if len(tiles) == 1:
        return tiles
    return [tiles[0][:, None], tiles[1][None, :]]


def _padding(padding_option, dtype, op):
    padding = "" if padding_option is None else padding_option
    if padding not in _PADDINGS:
        raise _error(f"{op}: padding_option must be 'zero' or 'nan' (or '' for none), got "
                     f"{padding_option!r}")
    if padding == "nan" and not dtype.is_floating():
        raise _error(f"{op}: padding_option='nan' needs float elements; these are {dtype}")
    return padding


class BlockPointer:
    """A block pointer made by make_block_ptr (Triton's ``pointer_type<block_type>``)."""

    __slots__ = ("base", "shape", "strides", "offsets", "block_shape", "order")

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides = base, shape, strides
        self.offsets, self.block_shape, self.order = offsets, block_shape, order

    @property
    def dtype(self):
        """The pointee dtype (as a pointer's: its name, with ``element_ty``)."""
        return self.base.dtype

    def __repr__(self):
        return (f"metile.BlockPointer(<{self.dtype}>, block_shape={self.block_shape}, "
                f"order={self.order})")

    # ---- loops.py carries a block pointer as its parts --------------------------------------
    def loop_parts(self):
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def loop_varying(self):
        """The parts a loop body is expected to change: the offsets (tl.advance)."""
        rank = len(self.block_shape)
        return range(1 + 2 * rank, 1 + 3 * rank)

    def loop_kind(self):
        """What must stay the same through a loop: the pointee and the static block."""
        return ("block pointer", str(self.dtype), self.block_shape, self.order)

    def with_loop_parts(self, parts):
        rank = len(self.block_shape)
        return BlockPointer(parts[0], tuple(parts[1:1 + rank]), tuple(parts[1 + rank:1 + 2 * rank]),
                            tuple(parts[1 + 2 * rank:]), self.block_shape, self.order)

    # ---- tl.load / tl.store through a block pointer ------------------------------------------
    def _boundary_dims(self, boundary_check, op):
        dims = _sequence(boundary_check) if boundary_check not in (None, ()) else ()
        rank = len(self.block_shape)
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < rank:
                raise _error(f"{op}: boundary_check names dimension {d!r}, but the block "
                             f"pointer has {rank} dimension{'s' if rank > 1 else ''} "
                             f"({', '.join(str(i) for i in range(rank))})")
        if len(set(dims)) != len(dims):
            raise _error(f"{op}: boundary_check names a dimension twice: {tuple(dims)}")
        return sorted(dims)

    def _access(self, boundary_check, op):
        """The pointer tile and the mask (None when no dimension is checked)."""
        ranges = _ranges(self.offsets, self.block_shape)
        steps = [r if (is_number(s) and s == 1) else r * s for r, s in zip(ranges, self.strides)]
        steps = _spread(steps)
        pointers = self.base + (steps[0] if len(steps) == 1 else steps[0] + steps[1])
        mask = None
        inside = _spread([_in_bounds(r, o, e) for r, o, e in zip(ranges, self.offsets, self.shape)])
        for d in self._boundary_dims(boundary_check, op):
            mask = inside[d] if mask is None else mask & inside[d]
        return pointers, mask

    def block_load(self, mask=None, other=None, boundary_check=(), padding_option="",
                   **options):
        """tl.load(block_ptr, boundary_check=, padding_option=, ...)."""
        if mask is not None or other is not None:
            raise _error("load: mask and other cannot be given with a block pointer; its "
                         "boundary_check and padding_option say what is read")
        element = self.dtype.element_ty
        padding = _padding(padding_option, element, "load")
        pointers, mask = self._access(boundary_check, "load")
        if mask is None:
            return load(pointers, **options)
        return load(pointers, mask, math.nan if padding == "nan" else None, **options)

    def block_store(self, value, mask=None, boundary_check=(), **options):
        """tl.store(block_ptr, value, boundary_check=, ...)."""
        if mask is not None:
            raise _error("store: mask cannot be given with a block pointer; its boundary_check "
                         "says what is written")
        value = _block_value(value, self.dtype.element_ty, self.block_shape, "store")
        pointers, mask = self._access(boundary_check, "store")
        store(pointers, value, mask, **options)


def _block_value(value, element, block_shape, op):
    """The value stored into a block: a tile of the block's shape and element dtype (a scalar
    is broadcast, a Python number takes the element dtype), as Triton requires."""
    if is_number(value):
        return full(block_shape, value, element)
    value = as_value(value, op)
    if not value.shape:
        value = broadcast_to(value, block_shape)
    if value.shape != tuple(block_shape):
        raise _error(f"{op}: the value's shape {list(value.shape)} differs from the block shape "
                     f"{list(block_shape)}")
    if value.dtype != element:
        raise _error(f"{op}: the value's element type {value.dtype} differs from the block's "
                     f"{element}; convert it first (value.to(tl.{_triton_name(element)}))")
    return value


def _triton_name(dtype):
    return {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "i32": "int32",
            "u32": "uint32", "i64": "int64", "i1": "int1"}.get(str(dtype), str(dtype))


def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """Triton's tl.make_block_ptr: the block of ``block_shape`` (constexpr powers of two) at
    ``offsets`` of the tensor of ``shape`` and ``strides`` (elements) at ``base``. ``order``
    (a permutation of the dimensions, fastest first) is a layout hint, checked and kept."""
    op = "make_block_ptr"
    shape, strides, offsets = _sequence(shape), _sequence(strides), _sequence(offsets)
    shape = tuple(_index(x, op, "shape", i) for i, x in enumerate(shape))
    strides = tuple(_index(x, op, "strides", i) for i, x in enumerate(strides))
    offsets = tuple(_index(x, op, "offsets", i, offsets=True) for i, x in enumerate(offsets))
    base = _base(base, op)
    order = _sequence(order)
    if (any(isinstance(o, bool) or not isinstance(o, int) for o in order)
            or sorted(order) != list(range(len(order)))):
        raise _error(f"{op}: order must be a permutation of (0, ..., {len(order) - 1}), got "
                     f"{order!r}")
    lengths = {"shape": shape, "strides": strides, "offsets": offsets,
               "block_shape": _sequence(block_shape), "order": order}
    if len({len(v) for v in lengths.values()}) != 1:
        got = ", ".join(f"{k} {len(v)}" for k, v in lengths.items())
        raise _error(f"{op}: shape, strides, offsets, block_shape and order must have the same "
                     f"length (one entry per dimension), got {got}")
    block_shape = _block_shape(block_shape, op)
    return BlockPointer(base, shape, strides, offsets, block_shape, tuple(order))


def advance(base, offsets):
    """Triton's tl.advance: the block pointer moved by ``offsets`` (one per dimension)."""
    if not isinstance(base, BlockPointer):
        got = base.type if isinstance(base, Value) else type(base).__name__
        raise _error(f"advance: base must be a block pointer (made by make_block_ptr), got {got}")
    offsets = _sequence(offsets)
    rank = len(base.block_shape)
    if len(offsets) != rank:
        raise _error(f"advance: offsets must have {rank} entr{'ies' if rank > 1 else 'y'}, one "
                     f"per dimension of the block pointer, got {len(offsets)}")
    moved = []
    for i, (now, by) in enumerate(zip(base.offsets, offsets)):
        by = _index(by, "advance", "offsets", i, offsets=True)
        moved.append(now if _is_zero(by) else (by if _is_zero(now) else now + by))
    return BlockPointer(base.base, base.shape, base.strides, tuple(moved), base.block_shape,
                        base.order)


# ---- tensor descriptors ---------------------------------------------------------------------
class TensorDescriptor:
    """A tensor descriptor made by make_tensor_descriptor (Triton's tl.tensor_descriptor)."""

    __slots__ = ("view", "shape", "strides", "block_shape", "dtype", "padding")

    def __init__(self, view, shape, strides, block_shape, dtype, padding):
        self.view, self.shape, self.strides = view, shape, strides
        self.block_shape, self.dtype, self.padding = block_shape, dtype, padding

    def __repr__(self):
        return f"metile.TensorDescriptor(<{self.dtype}>, block_shape={self.block_shape})"

    def _coords(self, offsets, op):
        offsets = _sequence(offsets)
        rank = len(self.block_shape)
        if len(offsets) != rank:
            raise _error(f"{op}: offsets must have {rank} entr{'ies' if rank > 1 else 'y'}, one "
                         f"per dimension of the descriptor, got {len(offsets)}")
        offsets = tuple(_index(o, op, "offsets", i, offsets=True) for i, o in enumerate(offsets))
        return offsets, _spread(_ranges(offsets, self.block_shape))

    def load(self, offsets):
        """The block at ``offsets``; elements outside the tensor read 0 (NaN with
        padding_option="nan")."""
        offsets, coords = self._coords(offsets, "load")
        value = self.view.load(tuple(coords))
        if self.padding != "nan":
            return value
        ranges = _ranges(offsets, self.block_shape)
        inside = _spread([_in_bounds(r, o, e) for r, o, e in zip(ranges, offsets, self.shape)])
        mask = inside[0] if len(inside) == 1 else inside[0] & inside[1]
        return where(mask, value, math.nan)

    def store(self, offsets, value):
        """Stores the block ``value`` at ``offsets``; elements outside the tensor are dropped."""
        _, coords = self._coords(offsets, "store")
        value = _block_value(value, self.dtype, self.block_shape, "store")
        self.view.store(tuple(coords), value)


def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """Triton's tl.make_tensor_descriptor: ``desc.load(offsets)`` / ``desc.store(offsets, v)``
    of ``block_shape`` blocks of the tensor of ``shape`` and ``strides`` at ``base``, bounded as
    TMA is (reads outside give 0, writes outside are dropped). Triton's rules hold: the last
    stride is 1, the others multiples of 16 bytes, the block's last dimension at least 16 bytes
    (strides are checked where they are Python numbers; traced strides are taken as given)."""
    op = "make_tensor_descriptor"
    base = _base(base, op)
    shape, strides = _sequence(shape), _sequence(strides)
    block_shape = _sequence(block_shape)
    if len(strides) != len(shape):
        raise _error(f"{op}: strides must have {len(shape)} entries, one per dimension of "
                     f"shape, got {len(strides)}")
    if len(block_shape) != len(shape):
        raise _error(f"{op}: block_shape must have {len(shape)} entries, one per dimension of "
                     f"shape, got {len(block_shape)}")
    block_shape = _block_shape(block_shape, op)
    shape = tuple(_index(x, op, "shape", i) for i, x in enumerate(shape))
    strides = tuple(_index(x, op, "strides", i) for i, x in enumerate(strides))
    element = base.dtype.element_ty
    size = element.primitive_bitwidth // 8
    if element == "i1":
        raise _error(f"{op}: int1 elements are not supported", NotSupportedError)
    if block_shape[-1] * size < 16:
        raise _error(f"{op}: the block's last dimension must span at least 16 bytes, got "
                     f"block_shape[-1] = {block_shape[-1]} elements of {size} bytes")
    if is_number(strides[-1]) and strides[-1] != 1:
        raise _error(f"{op}: the last dimension must be contiguous: strides[-1] must be 1, got "
                     f"{strides[-1]}")
    for i, s in enumerate(strides[:-1]):
        if is_number(s) and s * size % 16:
            raise _error(f"{op}: strides[{i}] must be a multiple of 16 bytes, got {s} elements "
                         f"of {size} bytes")
    if padding_option not in ("zero", "nan"):
        raise _error(f"{op}: padding_option must be 'zero' or 'nan', got {padding_option!r}")
    _padding(padding_option, element, op)
    view = tensor(base, shape=shape, strides=strides)
    return TensorDescriptor(view, shape, strides, block_shape, element, padding_option)


def load_tensor_descriptor(desc, offsets):
    """Triton's tl.load_tensor_descriptor: ``desc.load(offsets)``."""
    return _descriptor(desc, "load_tensor_descriptor").load(offsets)


def store_tensor_descriptor(desc, offsets, value):
    """Triton's tl.store_tensor_descriptor: ``desc.store(offsets, value)``."""
    return _descriptor(desc, "store_tensor_descriptor").store(offsets, value)


def _descriptor(desc, op):
    if not isinstance(desc, TensorDescriptor):
        raise _error(f"{op}: desc must be a tensor descriptor (made by make_tensor_descriptor), "
                     f"got {type(desc).__name__}")
    return desc


__all__ = ["BlockPointer", "TensorDescriptor", "advance", "load_tensor_descriptor",
           "make_block_ptr", "make_tensor_descriptor", "store_tensor_descriptor"]
