"""Shape functions with Triton's signatures: reshape/view (the row-major order is kept, so
nothing moves), trans and permute of 2-D tiles, and join, split, interleave (a last
dimension of 2: selects of broadcast tiles, and exact sums that take one element of each
pair)."""

import numpy as np

from .errors import NotSupportedError, user_error
from .frames import user_location
from .values import as_value, wrap

def shape_arg(shape, op):
    """A shape given as Triton allows: f(x, (a, b)), f(x, [a, b]) or f(x, a, b)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise user_error(f"{op}: a tile shape is Python integers (constexprs), got {shape!r}",
                         user_location())
    return tuple(shape)


def reshape(input, *shape, can_reorder=False):
    """``input`` with a new shape of the same size, its elements in the same row-major order
    (so no element moves between threads)."""
    x = as_value(input, "reshape")
    shape = shape_arg(shape, "reshape")
    if shape == x.shape:
        return x
    if len(x.shape) == 1 and len(shape) == 2 and 1 in shape and x.shape[0] in shape:
        axis = 0 if shape[0] == 1 else 1
        return wrap(x.trace, x.trace.at().expand_dims(x.id, axis))
    size = 1
    for d in x.shape:
        size *= d
    new_size = 1
    for d in shape:
        new_size *= d
    if size != new_size:
        raise user_error(f"reshape: a {x.shape} tile has {size} elements, {shape} has "
                         f"{new_size}", user_location())
    return wrap(x.trace, x.trace.at().reshape(x.id, list(shape)))


def view(input, *shape):
    """Triton's deprecated tl.view: reshape."""
    return reshape(input, *shape)


def permute(input, *dims):
    """``input`` with its dimensions reordered: ``dims`` is a permutation of the axes (a
    tuple or the axes as arguments). Tiles are 1-D or 2-D, so this is the identity or the
    transpose."""
    x = as_value(input, "permute")
    dims = shape_arg(dims, "permute")
    rank = len(x.shape)
    if sorted(dims) != list(range(rank)):
        raise user_error(f"permute: dims {dims} are not a permutation of the axes of a "
                         f"{rank}-D tile of shape {x.shape}", user_location())
    if list(dims) == list(range(rank)):
        return x
    return wrap(x.trace, x.trace.at().trans(x.id))


def trans(input, *dims):
    """The transpose of a 2-D tile; with ``dims``, ``permute(input, dims)``, as in Triton."""
    x = as_value(input, "trans")
    if dims:
        return permute(x, *dims)
    if len(x.shape) != 2:
        raise user_error(f"trans: without dims it transposes a 2-D tile, got shape {x.shape}",
                         user_location())
    return wrap(x.trace, x.trace.at().trans(x.id))


def join(a, b):
    """Triton's tl.join: the tile whose last dimension (size 2, new) holds ``a`` at 0 and
    ``b`` at 1, after broadcasting them to one shape: scalars give a [2] tile, [N] tiles an
    [N, 2] one. Tiles are 1-D or 2-D, so 2-D inputs (a 3-D result) are rejected; their
    interleave(a, b) is the same elements as an [M, 2N] tile."""
    from .language import arange, broadcast_to, expand_dims, where
    from .values import as_values

    a, b = as_values(a, b, "join")
    shape = np.broadcast_shapes(a.shape, b.shape)
    if len(shape) > 1:
        raise user_error(f"join: joining {shape} tiles makes a 3-D tile, and meTile's tiles are "
                         "1-D or 2-D; interleave(a, b) gives the same elements as a "
                         f"[{shape[0]}, {2 * shape[1]}] tile", user_location(), NotSupportedError)
    if not shape:
        return where(arange(0, 2) == 0, broadcast_to(a, 2), broadcast_to(b, 2))
    pair = [shape[0], 2]
    first = broadcast_to(expand_dims(arange(0, 2), 0) == 0, pair)
    a, b = (broadcast_to(expand_dims(broadcast_to(v, shape), 1), pair) for v in (a, b))
    return where(first, a, b)


def split(a):
    """Triton's tl.split: the two halves of a tile whose last dimension is 2, that
    dimension removed: an [N, 2] tile gives two [N] tiles, a [2] tile two scalars."""
    from .combine import take

    x = as_value(a, "split")
    if not x.shape or x.shape[-1] != 2:
        raise user_error(f"split: the last dimension must be 2, got shape {x.shape}",
                         user_location())
    axis = len(x.shape) - 1
    return take(x, axis, 0), take(x, axis, 1)


def interleave(a, b):
    """Triton's tl.interleave: ``a`` and ``b`` interleaved along the last dimension
    (a[0], b[0], a[1], b[1], ...): [N] tiles give a [2N] tile, [M, N] tiles an [M, 2N] one."""
    from .values import as_values

    a, b = as_values(a, b, "interleave")
    shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    if not shape:
        raise user_error("interleave: the operands are scalars; join(a, b) makes their [2] "
                         "tile", user_location())
    size = 1
    for d in shape:
        size *= d
    from .language import broadcast_to

    flat = [reshape(broadcast_to(v, shape), size) for v in (a, b)]
    return reshape(join(*flat), *shape[:-1], 2 * shape[-1])


def ravel(x, can_reorder=False):
    """``x`` as a 1-D tile in row-major order (Triton's tl.ravel)."""
    x = as_value(x, "ravel")
    size = 1
    for d in x.shape:
        size *= d
    return reshape(x, size, can_reorder=can_reorder)


def cat(input, other, can_reorder=False):
    """Triton's tl.cat of two 1-D tiles of one size: ``input`` then ``other``, in order (Triton
    may reorder the elements, and asks for can_reorder=True; meTile keeps the order, one
    valid answer)."""
    from .values import as_values

    a, b = as_values(input, other, "cat")
    if len(a.shape) != 1 or a.shape != b.shape:
        raise user_error(f"cat: concatenates two 1-D tiles of one size, got {a.shape} and "
                         f"{b.shape}", user_location(), NotSupportedError)
    return reshape(trans(join(a, b)), 2 * a.shape[0])
