"""Triton's ``tl.gather(src, index, axis)``: element i of the result takes ``src`` at
``index[i]`` along ``axis`` and at i's own coordinates along the other dimension.

Which thread holds which element of ``src`` is the lowering's choice, and any thread may
need any element, so the tile goes through threadgroup memory: every thread stores its
elements of ``src`` (row-major), a barrier, every thread loads the elements its ``index``
names, a barrier (so that a gather in a loop does not overwrite elements another thread has
yet to read). That is one store and one load per element, whatever the tile sizes (a one-hot
select would cost ``src.shape[axis]`` operations per element).

An index outside ``[0, src.shape[axis])`` is undefined behaviour in Triton; here its element
reads 0 (the load is masked), on every target.
"""

from .errors import user_error
from .frames import user_location
from . import dtypes
from .language import arange, barrier, broadcast_to, expand_dims, load, shared, store
from .values import as_value, cast


def _fail(rule):
    raise user_error(f"gather: {rule}", user_location())


def _coordinate(shape, dim):
    """The index along ``dim`` of each element of a tile of ``shape`` (an i32 tile)."""
    index = arange(0, shape[dim])
    if len(shape) == 2:
        index = expand_dims(index, 1 - dim)
    return broadcast_to(index, shape)


def gather(src, index, axis):
    """The tile of ``index``'s shape whose element at (i, j) is ``src[index[i, j], j]``
    (``axis=0``) or ``src[i, index[i, j]]`` (``axis=1``); 1-D: ``src[index[i]]``. ``src`` and
    ``index`` have one rank, and equal sizes along the dimension that is not ``axis``;
    ``index`` is an integer tile. Indices outside ``src``'s extent along ``axis`` read 0."""
    src, index = as_value(src, "gather"), as_value(index, "gather")
    if src.pointer or index.pointer:
        _fail("src and index are tiles of numbers, not of pointers")
    rank = len(src.shape)
    if rank not in (1, 2):
        _fail(f"src is a 1-D or 2-D tile, got {src.type}")
    if len(index.shape) != rank:
        _fail(f"src and index must have the same rank, got shapes {src.shape} and "
              f"{index.shape}")
    if not dtypes.is_integer(index.dtype):
        _fail(f"index is an integer tile, got {index.dtype}")
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
        _fail(f"axis must be a Python int in [{-rank}, {rank}), got {axis!r}")
    axis %= rank
    for d in range(rank):
        if d != axis and index.shape[d] != src.shape[d]:
            _fail(f"index and src must have equal sizes along dimension {d} (not the gather "
                  f"axis {axis}), got shapes {index.shape} and {src.shape}")

    # Booleans travel as bytes: threadgroup memory holds numbers.
    stored = cast(src, "i8") if src.dtype == "i1" else src
    size = 1
    for d in src.shape:
        size *= d
    scratch = shared(size, stored.dtype)
    row_major = _coordinate(src.shape, 0)
    if rank == 2:
        row_major = row_major * src.shape[1] + _coordinate(src.shape, 1)
    store(scratch + row_major, stored)
    barrier()

    extent = src.shape[axis]
    if index.dtype in ("i8", "u8"):
        index = cast(index, "i32")  # so that the extent (up to 2^k) is an operand of its dtype
    inside = (index >= 0) & (index < extent)
    at = cast(index, "i32") if index.dtype != "i32" else index
    at = at & (extent - 1)  # an index outside reads nothing; keep its address inside too
    if rank == 2:
        other = _coordinate(index.shape, 1 - axis)
        at = at * src.shape[1] + other if axis == 0 else other * src.shape[1] + at
    result = load(scratch + at, mask=inside, other=0)
    barrier()
    return result != 0 if src.dtype == "i1" else result
