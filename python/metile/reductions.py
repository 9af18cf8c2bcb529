"""Reductions with Triton's signatures: ``sum(x, axis=None, keep_dims=False)``, ``max``,
``min``, ``argmax``, ``argmin``; the scans ``cumsum`` and ``cumprod`` (``reduce`` and
``associative_scan`` with a user-defined combine are in combine.py).

The second positional argument is the axis, as in Triton (``metile.max(x, 0)`` reduces a
1-D tile over axis 0, i.e. all of it); the elementwise forms are ``maximum``/``minimum``.
An argument that could mean either (a traced value, a float, an axis the tile does not
have) is an error naming both. What is built: reducing a whole tile (``axis=None``), a 1-D
tile over its axis, and a 2-D tile over either axis (Tile IR ``reduce_axis``, a 1-D tile of
the other dimension, or with ``keep_dims`` the 2-D tile with 1 at ``axis``).
"""

from . import dtypes
from .errors import NotSupportedError, user_error
from .frames import user_location
from .values import Value, as_value, cast, compare, is_number, wrap

_ELEMENTWISE = {"max": "maximum", "min": "minimum"}
# As Triton's _pick_sum_dtype: sum adds integers narrower than 32 bits in 32 bits of their
# signedness (i8 and i16 in i32, u8 and u16 in u32; booleans in i32, where Triton, counting
# int1 unsigned, picks u32), and floats narrower than 32 bits (f16, bf16, fp8) in (and to) f32.
_SUM_WIDENS = {"i1": "i32", "i8": "i32", "u8": "u32", "i16": "i32", "u16": "u32", "f16": "f32",
               "bf16": "f32", "f8e4m3": "f32", "f8e5m2": "f32"}
# As in Triton, max and min of integers narrower than 32 bits compare (and return) i32. fp8
# values compare in f32 (they are bytes to the target) and the result is theirs again.
_MAX_MIN_WIDENS = {"i8": "i32", "u8": "i32", "i16": "i32", "u16": "i32"}
# cumsum widens as sum does (Triton's cumsum picks the sum dtype); cumprod too, where
# Triton's keeps 8 bits and wraps; floats keep their dtype, but fp8 scans in f32.
_SCAN_WIDENS = {"i1": "i32", "i8": "i32", "u8": "u32", "i16": "i32", "u16": "u32",
                "f8e4m3": "f32", "f8e5m2": "f32"}


def _fail(rule):
    raise user_error(rule, user_location())


def _not_supported(rule):
    raise user_error(rule, user_location(), NotSupportedError)


def _hint(op):
    other = _ELEMENTWISE.get(op)
    return f"; for the elementwise {op} of two values write metile.{other}(x, y)" if other else ""


def _tile(x, op):
    if is_number(x):
        _fail(f"metile.{op}: reduces a tile, got the Python number {x!r}{_hint(op)}")
    x = as_value(x, op)
    if not x.shape:
        _fail(f"metile.{op}: reduces a tile, got the scalar {x.type}{_hint(op)}")
    return x


def _axis(x, axis, op):
    """None (reduce everything) or the normalised axis of a tile that has it."""
    if axis is None:
        return None
    if isinstance(axis, Value) or not isinstance(axis, int) or isinstance(axis, bool):
        what = "a traced value" if isinstance(axis, Value) else repr(axis)
        _fail(f"metile.{op}: the second argument is the axis to reduce, as in Triton's "
              f"tl.{op} (a Python int or None), got {what}{_hint(op)}")
    rank = len(x.shape)
    if not -rank <= axis < rank:
        _fail(f"metile.{op}: axis {axis} is out of range for a {rank}-D tile of shape "
              f"{x.shape}{_hint(op)}")
    return axis % rank


def _combines_all(x, axis):
    """Whether reducing over ``axis`` combines every element (None, a 1-D tile, or a 2-D
    tile whose other dimension is 1): one scalar, Tile IR ``reduce``."""
    return axis is None or all(d == 1 for i, d in enumerate(x.shape) if i != axis)


def _along(kind, x, axis, keep_dims):
    """``kind`` of a 2-D tile along ``axis``: the 1-D tile of the other dimension, or with
    ``keep_dims`` the 2-D tile with 1 at ``axis``."""
    result = wrap(x.trace, x.trace.at().reduce_axis(kind, x.id, axis))
    if keep_dims:
        result = wrap(x.trace, x.trace.at().expand_dims(result.id, axis))
    return result


def _kept(trace, scalar, x, axis, keep_dims):
    """The reduced scalar, or with keep_dims a tile of x's rank with 1 where it reduced."""
    if not keep_dims:
        if axis is not None and len(x.shape) == 2:  # a (1, N) tile over axis 1 gives (1,)
            shape = [d for i, d in enumerate(x.shape) if i != axis]
            return wrap(trace, trace.at().splat(scalar.id, shape))
        return scalar
    shape = [1 if axis is None or i == axis else d for i, d in enumerate(x.shape)]
    return wrap(trace, trace.at().splat(scalar.id, shape))


def _reduce(kind, x, axis, keep_dims, dtype=None):
    x = _tile(x, kind)
    axis = _axis(x, axis, kind)
    widens = _SUM_WIDENS if kind == "sum" else _MAX_MIN_WIDENS
    if dtype is not None:
        x = cast(x, dtype)
    elif x.dtype in widens:
        x = cast(x, widens[x.dtype])
    elif dtypes.is_fp8(x.dtype):  # max or min: compared in f32, an fp8 value again
        return cast(_reduce(kind, cast(x, "f32"), axis, keep_dims), x.dtype)
    if not _combines_all(x, axis):
        return _along(kind, x, axis, keep_dims)
    scalar = wrap(x.trace, x.trace.at().reduce(kind, x.id))
    return _kept(x.trace, scalar, x, axis, keep_dims)


def sum(x, axis=None, keep_dims=False, dtype=None):
    """The sum of a tile's elements over ``axis`` (None: all of them); ``dtype`` converts
    the elements first (default, as in Triton: f16 and bf16 sum in f32, i8 and booleans in
    i32, u8 in u32). A scalar unless ``keep_dims``."""
    return _reduce("sum", x, axis, keep_dims, dtype)


def _with_indices(kind, x, axis, return_indices, tie_break_left, keep_dims):
    if return_indices:
        index = (argmax if kind == "max" else argmin)(x, axis, tie_break_left, keep_dims)
        best = _reduce(kind, x, axis, keep_dims)
        # Triton's reduction with indices keeps an 8-bit dtype (its value fits).
        return (cast(best, x.dtype) if best.dtype != x.dtype else best), index
    return _reduce(kind, x, axis, keep_dims)


def max(x, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """The largest element of a tile over ``axis`` (None: all; i8 and u8 as i32, as in
    Triton); with ``return_indices`` also its index. Not the elementwise maximum of two
    values: that is ``maximum``."""
    return _with_indices("max", x, axis, return_indices, return_indices_tie_break_left, keep_dims)


def min(x, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """The smallest element of a tile over ``axis`` (None: all; i8 and u8 as i32, as in
    Triton); with ``return_indices`` also its index. Not the elementwise minimum of two
    values: that is ``minimum``."""
    return _with_indices("min", x, axis, return_indices, return_indices_tie_break_left, keep_dims)


def _flat_index(trace, shape):
    """The row-major index of each element of a tile of ``shape`` (an i32 tile)."""
    from .language import arange

    if len(shape) == 1:
        return arange(0, shape[0])
    rows = wrap(trace, trace.at().expand_dims(arange(0, shape[0]).id, 1))
    columns = wrap(trace, trace.at().expand_dims(arange(0, shape[1]).id, 0))
    return rows * shape[1] + columns


def _arg(kind, x, axis, tie_break_left, keep_dims):
    op = "arg" + kind
    x = _tile(x, op)
    if x.dtype in _MAX_MIN_WIDENS:  # the same order and indices, compared as max compares
        x = cast(x, _MAX_MIN_WIDENS[x.dtype])
    elif dtypes.is_fp8(x.dtype):
        x = cast(x, "f32")
    axis = _axis(x, axis, op)
    if not _combines_all(x, axis):
        return _arg_along(kind, x, axis, tie_break_left, keep_dims)
    best = wrap(x.trace, x.trace.at().reduce(kind, x.id))
    numel = 1
    for d in x.shape:
        numel *= d
    # With one dimension of size 1 the row-major index is the index along the other.
    index = _flat_index(x.trace, x.shape)
    from .language import where

    if tie_break_left:
        found = where(compare("eq", x, best), index, numel)
        result = wrap(x.trace, x.trace.at().reduce("min", found.id))
    else:
        found = where(compare("eq", x, best), index, -1)
        result = wrap(x.trace, x.trace.at().reduce("max", found.id))
    return _kept(x.trace, result, x, axis, keep_dims)


def _arg_along(kind, x, axis, tie_break_left, keep_dims):
    """The index along ``axis`` of each best element: the best of each line, broadcast back,
    picks the indices where it occurs, and their min (max without tie_break_left) wins."""
    from .language import arange, where

    best = _along(kind, x, axis, keep_dims=True)
    other = 1 - axis
    index = wrap(x.trace, x.trace.at().expand_dims(arange(0, x.shape[axis]).id, other))
    if tie_break_left:
        found = where(compare("eq", x, best), index, x.shape[axis])
        return _along("min", found, axis, keep_dims)
    found = where(compare("eq", x, best), index, -1)
    return _along("max", found, axis, keep_dims)


def argmax(x, axis, tie_break_left=True, keep_dims=False):
    """The index of the largest element over ``axis`` (None: the row-major index in the
    whole tile); ties go to the first index unless ``tie_break_left=False``."""
    return _arg("max", x, axis, tie_break_left, keep_dims)


def argmin(x, axis, tie_break_left=True, keep_dims=False):
    """The index of the smallest element over ``axis`` (None: the row-major index in the
    whole tile); ties go to the first index unless ``tie_break_left=False``."""
    return _arg("min", x, axis, tie_break_left, keep_dims)


def _scan(kind, x, axis, reverse, op):
    x = _tile(x, op)
    if axis is None:
        _fail(f"metile.{op}: axis must be a Python int, got None")
    axis = _axis(x, axis, op)
    if len(x.shape) > 2:
        _not_supported(f"metile.{op}: scans 1-D and 2-D tiles, got shape {x.shape}")
    if x.dtype in _SCAN_WIDENS:
        x = cast(x, _SCAN_WIDENS[x.dtype])
    return wrap(x.trace, x.trace.at().scan(kind, x.id, axis, bool(reverse)))


def cumsum(x, axis=0, reverse=False, dtype=None):
    """The inclusive running sum of a tile along ``axis``, from the last element when
    ``reverse``; ``dtype`` converts the elements first (default, as in Triton: the tile's
    dtype, booleans and i8 in i32, u8 in u32)."""
    if dtype is not None:
        x = cast(_tile(x, "cumsum"), dtype)
    return _scan("sum", x, axis, reverse, "cumsum")


def cumprod(x, axis=0, reverse=False):
    """The inclusive running product of a tile along ``axis``, from the last element when
    ``reverse`` (the tile's dtype; booleans and i8 in i32, u8 in u32)."""
    return _scan("prod", x, axis, reverse, "cumprod")


def histogram(input, num_bins, mask=None):
    """Triton's ``tl.histogram(x, num_bins, mask=None)``: the i32 counts of a 1-D integer
    tile's values in bins of width 1 from 0, ``num_bins`` of them (a power of two, as any
    ``arange``); values outside [0, num_bins), and elements where ``mask`` is false, are not
    counted. Each value is compared with every bin (an [N, num_bins] tile) and the matches
    summed per bin."""
    from .language import arange

    x = as_value(input, "histogram")
    if len(x.shape) != 1:
        _fail(f"histogram: the input must be a 1-D tile, got shape {list(x.shape)}")
    if x.dtype not in ("i8", "u8", "i32", "u32", "i64"):
        _fail(f"histogram: the input must hold integers, got {x.dtype}")
    if not isinstance(num_bins, int) or isinstance(num_bins, bool) or num_bins < 1:
        _fail(f"histogram: num_bins must be a positive Python int, got {num_bins!r}")
    bins = arange(0, num_bins)
    if x.dtype != "i32":
        bins = cast(bins, x.dtype)
    hits = x[:, None] == bins[None, :]
    if mask is not None:
        hits = hits & as_value(mask, "histogram")[:, None]
    return sum(cast(hits, "i32"), axis=0)
