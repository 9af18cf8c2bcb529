"""The meTile language: the functions a @metile.kernel calls while it is traced.

Each records Tile IR through the C++ TileBuilder, which checks every rule and reports a
broken one at the user's line. Python numbers adopt the dtype of the traced operand next
to them; with numbers only, the result is computed in Python.
"""

import builtins
import math

import numpy as np

from . import dtypes, layouts
from .branches import truth
from .errors import NotSupportedError, user_error
from .frames import user_location
from .shapes import shape_arg
from .tracing import current
from .values import Value, as_value, as_values, binary, cast, is_number, unary, wrap

# Every meTile target runs 32-wide SIMD groups (Apple SIMD groups, CUDA warps).
SIMD_WIDTH = 32


def _not_built(name, why=""):
    raise user_error(f"{name} is not built yet{why}", user_location(), NotSupportedError)


def _dims(shape, op):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(d, int) for d in shape):
        raise user_error(f"{op}: a tile shape is Python integers (constexprs), got {shape!r}",
                         user_location())
    return list(shape)


# ---- geometry ---------------------------------------------------------------------------
def program_id(axis=0):
    """This program's index in the launch grid along ``axis`` (an i32 scalar)."""
    trace = current("program_id")
    return wrap(trace, trace.at().program_id(axis))


def num_programs(axis=0):
    """The number of programs along ``axis`` (an i32 scalar)."""
    trace = current("num_programs")
    return wrap(trace, trace.at().num_programs(axis))


def thread_id(axis=0):
    """The calling thread's index in its threadgroup (an i32 scalar, per thread)."""
    trace = current("thread_id")
    return wrap(trace, trace.at().thread_id(axis))


def simd_lane_id():
    """The calling thread's lane in its SIMD group (an i32 scalar, per thread)."""
    return thread_id() % SIMD_WIDTH


# ---- tiles ----------------------------------------------------------------------------------
def arange(start, end, layout=None):
    """The 1-D i32 tile start, ..., end - 1; end - start is a power of two. With a
    ``metile.ThreadLayout``, the tile is owned as it says (see metile.layouts)."""
    if not (isinstance(start, int) and isinstance(end, int)):
        raise user_error("arange: start and end are Python integers (constexprs), got "
                         f"{type(start).__name__} and {type(end).__name__}", user_location())
    if layout is not None:
        return layouts.owned_arange(start, end, layout)
    trace = current("arange")
    return wrap(trace, trace.at().arange(start, end))


def full(shape, value, dtype="f32"):
    """A tile of ``shape`` whose every element is ``value``."""
    trace = current("full")
    if isinstance(value, Value):
        return broadcast_to(value.to(dtype), shape)
    return wrap(trace, trace.at().full(_dims(shape, "full"), float(value), dtypes.dtype_name(dtype)))


def zeros(shape, dtype="f32"):
    """A tile of ``shape`` filled with zeros of ``dtype``."""
    return full(shape, 0, dtype)


def zeros_like(input):
    """A tile of ``input``'s shape and dtype filled with zeros."""
    input = as_value(input, "zeros_like")
    return zeros(input.shape, input.dtype)


def full_like(input, value):
    """A tile of ``input``'s shape and dtype whose every element is ``value``."""
    input = as_value(input, "full_like")
    return full(input.shape, value, input.dtype)


def broadcast_to(input, *shape):
    """``input`` (a scalar or a tile) repeated to ``shape`` (numpy broadcasting rules); the
    shape is a tuple or, as in Triton, the dimensions as arguments."""
    value = as_value(input, "broadcast_to")
    shape = list(shape_arg(shape, "broadcast_to"))
    return wrap(value.trace, value.trace.at().broadcast_to(value.id, shape))


def expand_dims(input, axis):
    """``input`` with a dimension of size 1 inserted at ``axis`` (an int, or a sequence of
    them as in Triton)."""
    value = as_value(input, "expand_dims")
    axes = [axis] if isinstance(axis, int) else list(axis)
    rank = len(value.shape) + len(axes)
    for a in sorted(a % rank if isinstance(a, int) else a for a in axes):
        if not isinstance(a, int):
            raise user_error(f"expand_dims: an axis is a Python int, got {a!r}", user_location())
        value = wrap(value.trace, value.trace.at().expand_dims(value.id, a))
    return value


# ---- elementwise -------------------------------------------------------------------------------
def where(condition, x, y):
    """``x`` where ``condition`` is true, else ``y``. A condition that is not i1 (an integer
    or float mask loaded from memory) is true where it is not zero, as Triton reads it."""
    if is_number(condition):
        return x if condition else y
    condition = truth(as_value(condition, "where"), "where")
    x, y = as_values(x, y, "where")
    trace = condition.trace
    return wrap(trace, trace.at().select(condition.id, x.id, y.id))


def maximum(a, b):
    """The elementwise larger of ``a`` and ``b``."""
    if is_number(a) and is_number(b):
        return builtins.max(a, b)
    return binary("max", a, b)


def minimum(a, b):
    """The elementwise smaller of ``a`` and ``b``."""
    if is_number(a) and is_number(b):
        return builtins.min(a, b)
    return binary("min", a, b)


def _math(op, python_fn, fast=False):
    def apply(x):
        if is_number(x):
            return python_fn(x)
        return unary(op, x, fast)

    apply.__name__ = ("fast_" if fast else "") + op
    apply.__doc__ = f"Elementwise {op}" + (" (the target's fast approximation is allowed)."
                                           if fast else ".")
    return apply


exp = _math("exp", math.exp)
exp2 = _math("exp2", lambda x: 2.0 ** x)
log = _math("log", math.log)
sqrt = _math("sqrt", math.sqrt)
rsqrt = _math("rsqrt", lambda x: 1.0 / math.sqrt(x))
tanh = _math("tanh", math.tanh)
sin = _math("sin", math.sin)
cos = _math("cos", math.cos)
abs = _math("abs", builtins.abs)
fast_exp = _math("exp", math.exp, fast=True)
fast_exp2 = _math("exp2", lambda x: 2.0 ** x, fast=True)
fast_log = _math("log", math.log, fast=True)
fast_sqrt = _math("sqrt", math.sqrt, fast=True)
fast_rsqrt = _math("rsqrt", lambda x: 1.0 / math.sqrt(x), fast=True)
fast_tanh = _math("tanh", math.tanh, fast=True)
fast_sin = _math("sin", math.sin, fast=True)
fast_cos = _math("cos", math.cos, fast=True)


# ---- memory --------------------------------------------------------------------------------
def _stored_value(value, dtype, op):
    """``value`` converted to the pointee dtype, as Triton's stores do."""
    value = as_value(value, op, dtype)
    return cast(value, dtype) if value.dtype != dtype else value


# Triton's cache modifiers of loads and of stores.
_CACHE_MODIFIERS = {"load": ("", ".ca", ".cg", ".cv"), "store": ("", ".wb", ".cg", ".cs", ".wt")}


def _memory_options(op, boundary_check=(), padding_option="", cache_modifier="",
                    eviction_policy="", volatile=False):
    """Triton's load/store keywords; returns the eviction policy, which the CUDA target
    honours (the builder checks it). A cache modifier is checked and has no effect;
    volatile is not supported; boundary_check and padding_option are block pointers'
    (block_pointers.py)."""
    if boundary_check or padding_option:
        raise user_error(f"{op}: boundary_check and padding_option apply to block pointers "
                         "(made by make_block_ptr), not to a pointer or a tile of pointers, "
                         "whose bounds the compiler does not know; use a mask, or a block "
                         "pointer", user_location())
    if volatile:
        raise user_error(f"{op}: volatile accesses are not supported", user_location(),
                         NotSupportedError)
    if cache_modifier not in _CACHE_MODIFIERS[op]:
        choices = ", ".join(repr(c) for c in _CACHE_MODIFIERS[op])
        raise user_error(f"{op}: cache_modifier must be one of {choices}, got "
                         f"{cache_modifier!r}", user_location())
    if not isinstance(eviction_policy, str):
        raise user_error(f"{op}: eviction_policy is a string, got {eviction_policy!r}",
                         user_location())
    return eviction_policy


def _broadcast_mask(mask, pointer, op):
    """The mask broadcast to the pointer's shape, as Triton's loads and stores do; a mask that
    does not broadcast is left for the builder to reject."""
    mask = as_value(mask, op)
    if mask.shape == pointer.shape or not pointer.shape:
        return mask
    try:
        shape = np.broadcast_shapes(mask.shape, pointer.shape)
    except ValueError:
        return mask
    return broadcast_to(mask, shape) if shape == pointer.shape else mask


def load(pointer, mask=None, other=None, **options):
    """``*pointer``; where ``mask`` is false the element is ``other`` (default 0, converted
    to the pointee dtype) and memory is not touched. Triton's eviction_policy
    ("evict_first", "evict_last") sets the cache priority of the lines read on CUDA (Metal has
    no such control); cache_modifier is accepted and has no effect. Through a block pointer
    (make_block_ptr), Triton's boundary_check and padding_option instead of mask and other."""
    if hasattr(pointer, "block_load"):  # a block pointer (block_pointers.py)
        return pointer.block_load(mask, other, **options)
    eviction = _memory_options("load", **options)
    pointer = as_value(pointer, "load")
    trace = pointer.trace
    mask_id = other_id = -1
    if mask is not None:
        mask_id = _broadcast_mask(mask, pointer, "load").id
        if other is not None:
            other_id = _stored_value(other, pointer.dtype, "load").id
    elif other is not None:
        raise user_error("load: 'other' is only meaningful with a mask", user_location())
    return wrap(trace, trace.at().load(pointer.id, mask_id, other_id, eviction))


def store(pointer, value, mask=None, **options):
    """``*pointer = value`` where ``mask`` is true; the value is converted to the pointee
    dtype. Triton's eviction_policy and cache_modifier as load's; boundary_check through a
    block pointer, which takes a value of its block's shape and element dtype."""
    if hasattr(pointer, "block_store"):  # a block pointer (block_pointers.py)
        return pointer.block_store(value, mask, **options)
    eviction = _memory_options("store", **options)
    pointer = as_value(pointer, "store")
    trace = pointer.trace
    value = _stored_value(value, pointer.dtype, "store")
    mask_id = -1 if mask is None else _broadcast_mask(mask, pointer, "store").id
    trace.at().store(pointer.id, value.id, mask_id, eviction)


# ---- atomics ------------------------------------------------------------------------------
_ATOMIC_SEMS = ("acq_rel", "acquire", "release", "relaxed")
_ATOMIC_SCOPES = ("gpu", "cta", "sys")


def _atomic_target(op, pointer, sem, scope, kinds_of_floats=("add", "xchg", "max", "min")):
    """The checked pointer and Triton's sem and scope (defaults acq_rel and gpu)."""
    sem = "acq_rel" if sem is None else sem
    scope = "gpu" if scope is None else scope
    if sem not in _ATOMIC_SEMS:
        raise user_error(f"{op}: sem must be one of {', '.join(_ATOMIC_SEMS)}, got {sem!r}",
                         user_location())
    if scope not in _ATOMIC_SCOPES:
        raise user_error(f"{op}: scope must be one of {', '.join(_ATOMIC_SCOPES)}, got "
                         f"{scope!r}", user_location())
    pointer = as_value(pointer, op)
    if not pointer.pointer:
        raise user_error(f"{op}: the address must be a pointer or a tile of pointers",
                         user_location())
    kind = op[len("atomic_"):]
    floats = pointer.dtype == "f32" and kind in kinds_of_floats
    if pointer.dtype not in ("i32", "u32") and not floats:
        raise user_error(f"{op}: atomics take int32 or uint32 elements, and float32 ones add, "
                         f"exchange and take maxima and minima; {pointer.dtype} is not supported",
                         user_location(),
                         NotSupportedError)
    return pointer, sem, scope


def _atomic(kind, pointer, val, mask, sem, scope):
    op = "atomic_" + kind
    pointer, sem, scope = _atomic_target(op, pointer, sem, scope)
    value = _stored_value(val, pointer.dtype, op)
    mask_id = -1 if mask is None else _broadcast_mask(mask, pointer, op).id
    trace = pointer.trace
    return wrap(trace, trace.at().atomic_rmw(kind, pointer.id, value.id, mask_id, sem, scope))


def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer += val`` where ``mask`` is true (Triton's tl.atomic_add); returns
    the old values (0 where the mask is false). ``sem``: "acq_rel" (default), "acquire",
    "release" or "relaxed"; ``scope``: "gpu" (default), "cta" or "sys"."""
    return _atomic("add", pointer, val, mask, sem, scope)


def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer = max(*pointer, val)`` (integers); returns the old values."""
    return _atomic("max", pointer, val, mask, sem, scope)


def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer = min(*pointer, val)`` (integers); returns the old values."""
    return _atomic("min", pointer, val, mask, sem, scope)


def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer &= val`` (integers); returns the old values."""
    return _atomic("and", pointer, val, mask, sem, scope)


def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer |= val`` (integers); returns the old values."""
    return _atomic("or", pointer, val, mask, sem, scope)


def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer ^= val`` (integers); returns the old values."""
    return _atomic("xor", pointer, val, mask, sem, scope)


def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer = val``; returns the old values."""
    return _atomic("xchg", pointer, val, mask, sem, scope)


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Atomically ``*pointer = val`` where ``*pointer == cmp`` (integers; Triton's
    tl.atomic_cas); returns the old values."""
    pointer, sem, scope = _atomic_target("atomic_cas", pointer, sem, scope, kinds_of_floats=())
    cmp = _stored_value(cmp, pointer.dtype, "atomic_cas")
    val = _stored_value(val, pointer.dtype, "atomic_cas")
    trace = pointer.trace
    return wrap(trace, trace.at().atomic_cas(pointer.id, cmp.id, val.id, sem, scope))


def shared(size, dtype="f32"):
    """A threadgroup-memory allocation of ``size`` elements; returns its pointer."""
    trace = current("shared")
    if not isinstance(size, int):
        raise user_error("shared: the size is a Python integer (a constexpr)", user_location())
    return wrap(trace, trace.at().shared_alloc(size, dtypes.dtype_name(dtype)))


# ---- collectives, synchronisation (reductions: reductions.py) -------------------------------
def _simd(op, x, lane=None):
    x = as_value(x, op)
    lane_id = -1 if lane is None else as_value(lane, op, "i32").id
    return wrap(x.trace, x.trace.at().simd(op, x.id, lane_id))


def simd_sum(x):
    """The sum of a per-thread scalar over the SIMD group."""
    return _simd("simd_sum", x)


def simd_max(x):
    """The maximum of a per-thread scalar over the SIMD group."""
    return _simd("simd_max", x)


def simd_min(x):
    """The minimum of a per-thread scalar over the SIMD group."""
    return _simd("simd_min", x)


def simd_shuffle(x, lane):
    """``x`` of the given lane of this SIMD group."""
    return _simd("simd_shuffle", x, lane)


def simd_shuffle_xor(x, mask):
    """``x`` of lane (this lane ^ mask)."""
    return _simd("simd_shuffle_xor", x, mask)


def simd_shuffle_down(x, delta):
    """``x`` of lane (this lane + delta); lanes past the end of the SIMD group keep their own
    ``x``. ``delta`` must be the same for every thread of the SIMD group."""
    return _simd("simd_shuffle_down", x, delta)


def simd_broadcast(x, lane):
    """``x`` of one lane, the same for every thread of the SIMD group."""
    return _simd("simd_broadcast", x, lane)


def barrier():
    """Every thread of the threadgroup waits here; threadgroup memory writes become visible."""
    trace = current("barrier")
    trace.at().barrier()


debug_barrier = barrier  # Triton's name of the same barrier


# ---- matrix product -------------------------------------------------------------------------
def _dot_precision(input_precision, allow_tf32):
    """Triton's input_precision / allow_tf32 as the dot's precision attribute: "" leaves it to
    the kernel's math mode (tf32 for f32 under RELAXED_PRECISION, else ieee)."""
    if input_precision is not None and allow_tf32 is not None:
        raise user_error("dot: give input_precision or allow_tf32, not both", user_location())
    if allow_tf32 is not None:
        return "tf32" if allow_tf32 else "ieee"
    if input_precision is None:
        return ""
    if input_precision in ("ieee", "tf32"):
        return input_precision
    if input_precision in ("tf32x3", "bf16x3", "bf16x6", "bf16", "hf32"):
        raise user_error(f"dot: input_precision='{input_precision}' is not supported; use "
                         "'ieee' or 'tf32'", user_location(), NotSupportedError)
    raise user_error(f"dot: input_precision must be 'ieee' or 'tf32', got {input_precision!r}",
                     user_location())


def dot(input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype="f32"):
    """``acc + input @ other`` for 2-D tiles ``input`` [M, K] and ``other`` [K, N] of one
    float dtype (f16, bf16, f32), accumulated in f32 (``acc`` [M, N], zeros when None).
    M, N, K are powers of two of at least 8. ``out_dtype`` f16 or bf16 rounds the f32 result
    once at the end (``acc`` is then of that dtype too, as in Triton). Two fp8 operands (of
    either format) multiply as f16, to which every fp8 value widens exactly: the products
    and the f32 sums are those of an fp8 matrix product.
    ``input_precision="tf32"`` (or RELAXED_PRECISION=True) allows TF32 products for f32
    inputs; the default is exact f32."""
    out_dtype = dtypes.dtype_name(out_dtype)
    if out_dtype not in ("f32", "f16", "bf16"):
        raise user_error(f"dot: out_dtype={out_dtype} is not supported: the result is f32, "
                         "or f16/bf16 rounded from it", user_location(), NotSupportedError)
    precision = _dot_precision(input_precision, allow_tf32)
    a, b = as_value(input, "dot"), as_value(other, "dot")
    fp8 = [not v.pointer and dtypes.is_fp8(v.dtype) for v in (a, b)]
    if max_num_imprecise_acc is not None and not all(fp8):
        raise user_error(f"dot: max_num_imprecise_acc applies to fp8 products; these operands "
                         f"are {a.dtype} and {b.dtype}", user_location(), NotSupportedError)
    if all(fp8):
        # Exact widening; every product accumulates in f32, so max_num_imprecise_acc (which
        # allows less) has nothing to relax.
        a, b = cast(a, "f16"), cast(b, "f16")
    elif any(fp8):
        raise user_error(f"dot: an fp8 operand multiplies an fp8 operand, as in Triton; got "
                         f"{a.dtype} and {b.dtype}: convert both to one dtype first",
                         user_location())
    for operand in (a, b):
        if not operand.pointer and dtypes.is_integer(operand.dtype):
            raise user_error(f"dot: {operand.dtype} operands are not supported (Triton's integer "
                             "dot accumulating in i32 is not built): dot multiplies f16, bf16 or "
                             "f32; convert them first (.to(metile.float16))", user_location(),
                             NotSupportedError)
        if not operand.pointer and operand.dtype == "f64":
            raise user_error("dot: f64 operands are not supported (no double matrix product "
                             "is built): dot multiplies fp8, f16, bf16 or f32; convert them "
                             "first (.to(tl.float32))", user_location(), NotSupportedError)
    if a.type.kind != "matrix" and (len(a.shape) != 2 or len(b.shape) != 2):
        raise user_error(f"dot: input and other must be 2-D tiles, got shapes {a.shape} and "
                         f"{b.shape}", user_location())
    if acc is None:
        acc = zeros((8, 8) if a.type.kind == "matrix" else (a.shape[0], b.shape[1]))
    else:
        acc = as_value(acc, "dot")
        if out_dtype != "f32":
            if acc.dtype != out_dtype:
                raise user_error(f"dot: with out_dtype={out_dtype} the accumulator is "
                                 f"{out_dtype}, got {acc.dtype}", user_location())
            acc = cast(acc, "f32")
    trace = a.trace
    result = wrap(trace, trace.at().dot(a.id, b.id, acc.id, precision))
    return result if out_dtype == "f32" else cast(result, out_dtype)


# ---- specified, not built yet ----------------------------------------------------------------
def tile_load(*args, **kwargs):
    """Loads a tile through a descriptor (not built yet; use tensor(...).load)."""
    _not_built("metile.tile_load", "; use metile.tensor(...).load(coords)")


def tile_store(*args, **kwargs):
    """Stores a tile through a descriptor (not built yet; use tensor(...).store)."""
    _not_built("metile.tile_store", "; use metile.tensor(...).store(coords, value)")


def loop_state(value):
    """A matrix fragment that a tile_range loop carries: ``acc = metile.loop_state(
    metile.zeros((8, 8)))`` before the loop, ``acc = metile.dot(a, b, acc)`` in it. A fragment
    is returned as it is; a uniform float 8x8 tile becomes the fragment of its value. Other
    values need no marking: tile_range carries every reassigned variable."""
    v = as_value(value, "loop_state")
    return wrap(v.trace, v.trace.at().fragment_of(v.id, "loop_state"))


def scalar(*args, **kwargs):
    """A uniform scalar (not built yet)."""
    _not_built("metile.scalar")


def convert_layout(value, layout):
    """The same logical tile, owned as the ThreadLayout ``layout`` says (see metile.layouts)."""
    return layouts.convert_layout(value, layout)


def tile_swizzle(*args, **kwargs):
    """Program-id swizzling for tile traversal (not built yet)."""
    _not_built("metile.tile_swizzle")


def simdgroup_role(*args, **kwargs):
    """Producer/consumer SIMD-group roles (not built yet)."""
    _not_built("metile.simdgroup_role")
