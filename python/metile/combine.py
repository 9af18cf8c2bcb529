"""Scans and reductions with a user-defined combine, as Triton's ``tl.associative_scan`` and
``tl.reduce``: ``combine_fn`` (a @metile.jit helper or a plain Python function) takes two
groups of values, and inputs may be one tile or a tuple of tiles of one shape
(``combine_fn(a0, a1, ..., b0, b1, ...)`` returns one value or a tuple of as many). Operands
are always combined in index order (earlier first), so ``combine_fn`` need only be
associative, as in Triton; it must return the dtypes it was given.

* ``reduce`` traces ``combine_fn`` once on scalars (one element of each input) into the region
  of a Tile IR ``reduce_combine``, which lowers as the built-in reductions do: per-thread
  slots, SIMD shuffles, threadgroup partials between SIMD groups (docs/lowering.md, "Reduce
  with a combine function").
* ``associative_scan`` traces it on whole tiles and is built from Tile IR ``xor_permute``
  (element i ^ mask, moved by register renaming, SIMD shuffles or threadgroup scratch as the
  layout requires), one step per bit of the axis (log2 of its length, lowest bit first). At
  step b every element meets the element whose index differs in bit b, the last element of
  its partner block of 2^b elements along the axis: each element keeps its prefix within its
  block and the block's total; the partner block's total combines into both when that block
  comes earlier in scan order (lower indices, or higher ones with ``reverse``), into the total
  alone otherwise.
"""

from . import dtypes
from .errors import user_error
from .frames import user_location
from .values import Value, as_value, cast, wrap


def _fail(rule):
    raise user_error(rule, user_location())


def _inputs(input, op):
    """The input tiles as a tuple, checked: 1-D or 2-D, one shape."""
    values = tuple(input) if isinstance(input, (tuple, list)) else (input,)
    if not values:
        _fail(f"metile.{op}: needs at least one input tile")
    values = tuple(as_value(v, op) for v in values)
    shape = values[0].shape
    for v in values:
        if not v.shape or len(v.shape) > 2:
            _fail(f"metile.{op}: the inputs are 1-D or 2-D tiles, got {v.type}")
        if v.pointer:
            _fail(f"metile.{op}: the inputs are tiles of numbers, got the pointer tile {v.type}")
        if v.shape != shape:
            _fail(f"metile.{op}: the input tiles must have one shape, got {shape} and {v.shape}")
    return values


def _axis(values, axis, op):
    rank = len(values[0].shape)
    if isinstance(axis, Value) or not isinstance(axis, int) or isinstance(axis, bool):
        _fail(f"metile.{op}: axis is a Python int, got {axis!r}")
    if not -rank <= axis < rank:
        _fail(f"metile.{op}: axis {axis} is out of range for a {rank}-D tile of shape "
              f"{values[0].shape}")
    return axis % rank


def _axis_index(x, axis):
    """The index along ``axis`` of each element of the tile ``x`` (an i32 tile of its shape)."""
    from .language import arange, broadcast_to, expand_dims

    index = arange(0, x.shape[axis])
    if len(x.shape) == 2:
        index = expand_dims(index, 1 - axis)
    return broadcast_to(index, x.shape)


def _permute(x, mask):
    """The tile whose element i is element i ^ mask of x (booleans move as i32)."""
    if x.dtype == "i1":
        moved = wrap(x.trace, x.trace.at().xor_permute(cast(x, "i32").id, mask))
        return moved != 0
    return wrap(x.trace, x.trace.at().xor_permute(x.id, mask))


def _select(condition, a, b):
    return tuple(wrap(c.trace, c.trace.at().select(condition.id, c.id, d.id))
                 for c, d in zip(a, b))


def _combine(combine_fn, a, b, op):
    """combine_fn(*a, *b) as a tuple, of a's dtypes and shape."""
    result = combine_fn(*a, *b)
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(result) != len(a):
        _fail(f"metile.{op}: combine_fn must return {len(a)} value(s), one per input, got "
              f"{len(result)}")
    out = []
    for r, x in zip(result, a):
        r = as_value(r, op, x.dtype)
        if r.dtype != x.dtype:
            _fail(f"metile.{op}: combine_fn must return the dtypes of its inputs: got {r.dtype} "
                  f"where the input is {x.dtype}")
        if r.shape and not x.shape:
            _fail(f"metile.{op}: combine_fn combines scalars (one element of each input), but "
                  f"it returned the tile {r.type}; it may not use tiles from outside it")
        if r.shape != x.shape:
            from .language import broadcast_to

            r = broadcast_to(r, x.shape)
        out.append(r)
    return tuple(out)


def _steps(values, axis):
    """(bit, xor mask) for each bit of the index along ``axis``, lowest first."""
    shape = values[0].shape
    stride = shape[1] if len(shape) == 2 and axis == 0 else 1
    n = shape[axis]
    return [(1 << b, (1 << b) * stride) for b in range(n.bit_length() - 1)]


def _single(values, input):
    return values if isinstance(input, (tuple, list)) else values[0]


def associative_scan(input, axis, combine_fn, reverse=False):
    """The inclusive scan of ``input`` (a tile or a tuple of tiles of one shape) along
    ``axis`` with the associative ``combine_fn``: element i is combine_fn applied in index
    order to the elements 0..i of its line (i..n-1 with ``reverse``, the later ones first),
    as Triton's tl.associative_scan."""
    values = _inputs(input, "associative_scan")
    axis = _axis(values, axis, "associative_scan")
    steps = _steps(values, axis)
    if not steps:
        return _single(values, input)
    index = _axis_index(values[0], axis)
    prefix = total = values
    for bit, mask in steps:
        partner = tuple(_permute(t, mask) for t in total)
        # The partner block comes earlier in scan order when bit b of the index is 1 (forward)
        # or 0 (reverse).
        earlier = (index & bit) == 0 if reverse else (index & bit) != 0
        first = _select(earlier, partner, total)
        second = _select(earlier, total, partner)
        total = _combine(combine_fn, first, second, "associative_scan")
        prefix = _select(earlier, _combine(combine_fn, partner, prefix, "associative_scan"),
                         prefix)
    return _single(prefix, input)


def take(x, axis, k):
    """Element k along ``axis`` of the tile x: a scalar for a 1-D tile, else the 1-D tile of
    the other dimension. An exact sum where every other element is a zero (-0.0 for floats,
    which adds exactly), through meTile's sum reductions; a whole-tile sum on more threads
    than elements adds +0.0 for the idle ones, so a -0.0 scalar may come back +0.0."""
    from .language import full

    trace = x.trace
    dtype = x.dtype
    if dtype == "i1":
        return take(cast(x, "i32"), axis, k) != 0
    if dtypes.is_fp8(dtype):  # fp8 values do not add: picked in f32, exactly
        return cast(take(cast(x, "f32"), axis, k), dtype)
    zero = full(x.shape, -0.0 if dtype in ("f16", "bf16", "f32") else 0, dtype)
    (picked,) = _select(_axis_index(x, axis) == k, (x,), (zero,))
    if len(x.shape) == 1:
        return wrap(trace, trace.at().reduce("sum", picked.id))
    return wrap(trace, trace.at().reduce_axis("sum", picked.id, axis))


def reduce(input, axis, combine_fn, keep_dims=False):
    """``input`` (a tile or a tuple of tiles of one shape) combined along ``axis`` (None:
    every element, in row-major order) with the associative ``combine_fn``, as Triton's
    tl.reduce: a scalar for a 1-D tile or axis None, else the 1-D tile of the other
    dimension; ``keep_dims`` keeps the reduced dimensions as size 1."""
    values = _inputs(input, "reduce")
    shape = values[0].shape
    if axis is None:
        from .shapes import reshape

        size = 1
        for d in shape:
            size *= d
        flat = tuple(reshape(v, size) for v in values)
        result = _reduce_line(flat, 0, combine_fn)
        if keep_dims:
            result = tuple(_splat(r, [1] * len(shape)) for r in result)
        return _single(result, input)
    axis = _axis(values, axis, "reduce")
    result = _reduce_line(values, axis, combine_fn)
    if keep_dims:
        if len(shape) == 1:
            result = tuple(_splat(r, [1]) for r in result)
        else:
            result = tuple(wrap(r.trace, r.trace.at().expand_dims(r.id, axis)) for r in result)
    return _single(result, input)


def _splat(scalar, shape):
    return wrap(scalar.trace, scalar.trace.at().splat(scalar.id, shape))


def _reduce_line(values, axis, combine_fn):
    """One Tile IR reduce_combine whose region is combine_fn traced on scalars (one element of
    each input, the earlier ones first); booleans travel as i32."""
    trace = values[0].trace
    booleans = [v.dtype == "i1" for v in values]
    tiles = [cast(v, "i32") if b else v for v, b in zip(values, booleans)]
    args = [wrap(trace, a) for a in trace.at().begin_reduce_combine(
        [t.id for t in tiles], axis, "the combine_fn of metile.reduce")]
    args = [a != 0 if b else a for a, b in zip(args, booleans * 2)]
    k = len(values)
    result = _combine(combine_fn, tuple(args[:k]), tuple(args[k:]), "reduce")
    yields = [cast(r, "i32").id if b else r.id for r, b in zip(result, booleans)]
    results = [wrap(trace, r) for r in trace.at().end_reduce_combine(yields)]
    return tuple(r != 0 if b else r for r, b in zip(results, booleans))


def _along(x, dim, op, what):
    """The tile, its dimension ``dim`` (None: the last) and the distance in elements between
    neighbours along it, for an op (``what`` it does) that permutes along one dimension."""
    x = as_value(x, op)
    if not x.shape:
        raise user_error(f"{op}: the input is a scalar; {op} {what} a tile", user_location())
    dim = len(x.shape) - 1 if dim is None else _axis([x], dim, op)
    stride = 1
    for d in x.shape[dim + 1:]:
        stride *= d
    return x, dim, stride


def flip(x, dim=None):
    """``x`` reversed along ``dim`` (Triton's tl.flip; None: the last dimension). Along a
    power-of-two dimension of n elements, index i takes element n - 1 - i = i ^ (n - 1): one
    xor permutation of the tile."""
    x, dim, stride = _along(x, dim, "flip", "reverses")
    return _permute(x, (x.shape[dim] - 1) * stride)


def xor_sum(input, axis=None, keep_dims=False):
    """The bitwise xor of ``input``'s integers along ``axis`` (Triton's tl.xor_sum)."""
    x = as_value(input, "xor_sum")
    if not dtypes.is_integer(x.dtype):
        raise user_error(f"xor_sum: the input's elements must be integers, got {x.dtype}",
                         user_location())
    return reduce(x, axis, lambda a, b: a ^ b, keep_dims=keep_dims)


def sort(x, dim=None, descending=False):
    """``x`` sorted along ``dim`` (Triton's tl.sort; None: the last dimension), ascending
    unless ``descending``: a bitonic network of xor permutations, log2(n) (log2(n) + 1) / 2
    compare-exchange steps along a power-of-two dimension of n elements."""
    from .language import maximum, minimum, where

    x, dim, stride = _along(x, dim, "sort", "orders")
    index = _axis_index(x, dim)
    k = 2
    while k <= x.shape[dim]:
        ascending = (index & k) == 0
        if descending:
            ascending = ~ascending
        j = k // 2
        while j >= 1:
            partner = _permute(x, j * stride)
            lower = (index & j) == 0  # the first of its pair
            keep_min = (lower & ascending) | (~lower & ~ascending)
            x = where(keep_min, minimum(x, partner), maximum(x, partner))
            j //= 2
        k *= 2
    return x
