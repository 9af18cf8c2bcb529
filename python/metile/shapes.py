"""Shape functions with Triton's signatures: reshape/view where it only inserts a dimension
of size 1, and trans, permute, join, split, interleave, which are not built yet."""

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
    """``input`` with a new shape of the same size. Built where that inserts a dimension of
    size 1 (a 1-D tile of N to (1, N) or (N, 1)) or keeps the shape."""
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
    raise user_error(
        f"reshape of a {x.shape} tile to {shape} is not built yet: Tile IR has no reshape op "
        "(the lowering would keep the row-major order, but that rewrite is in progress); "
        "build the tile in its final shape (arange and [:, None] / [None, :] indexing)",
        user_location(), NotSupportedError)


def view(input, *shape):
    """Triton's deprecated tl.view: reshape."""
    return reshape(input, *shape)


def _not_built(op, instead):
    raise user_error(f"metile.{op} is not built yet: {_MOVES}; {instead}", user_location(),
                     NotSupportedError)


def trans(input, *dims):
    """Triton's tl.trans (not built yet)."""
    _not_built("trans", "load or store through transposed indices instead, e.g. "
               "metile.load(src + (offs_n[None, :] * stride + offs_m[:, None]))")


def permute(input, *dims):
    """Triton's tl.permute (not built yet)."""
    _not_built("permute", "load or store through permuted indices instead")


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
