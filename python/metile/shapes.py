"""Shape functions with Triton's signatures: reshape/view (the row-major order is kept, so
nothing moves), trans and permute of 2-D tiles, and join, split, interleave, which are not
built yet."""

from .errors import NotSupportedError, user_error
from .frames import user_location
from .values import as_value, wrap

_MOVES = ("it moves elements between threads, which waits for the thread-ownership rewrite "
          "of the lowering")


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


def _not_built(op, instead):
    raise user_error(f"metile.{op} is not built yet: {_MOVES}; {instead}", user_location(),
                     NotSupportedError)


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
    """Triton's tl.join (not built yet)."""
    _not_built("join", "keep the two tiles apart, or store them to interleaved addresses "
               "(ptr + 2 * offs and ptr + 2 * offs + 1)")


def split(a):
    """Triton's tl.split (not built yet)."""
    _not_built("split", "load the two halves separately (ptr + 2 * offs and ptr + 2 * offs + 1)")


def interleave(a, b):
    """Triton's tl.interleave (not built yet)."""
    _not_built("interleave", "store the tiles to interleaved addresses "
               "(ptr + 2 * offs and ptr + 2 * offs + 1)")
