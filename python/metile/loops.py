"""Traced loops: ``for i in metile.tile_range(start, end, step)`` (see source_rewrite.py).

Every variable the body assigns that is bound before the loop is loop-carried. A carried
variable keeps one type; one that starts as a Python number adopts the type the body gives
it (``m = -1e38`` followed by ``m = metile.maximum(m, x)`` carries a tile of x's shape and
dtype starting at -1e38), and a traced scalar the body turns into a tile starts as that
scalar splat to the tile. Either case re-traces the body once with the promoted start.

A record of traced values (a block pointer: ``loop_parts()``, ``with_loop_parts(parts)``,
``loop_varying()``, ``loop_kind()``) is carried as the parts its body changes, so that
``a_ptr = tl.advance(a_ptr, (0, BLOCK_K))`` carries scalar offsets.
"""

from .errors import NotSupportedError, user_error
from .frames import user_location
from .tracing import active_trace, current
from .values import (Value, binary, constant, dtype_for_numbers, is_number, number_dtype,
                     wrap)

_MAX_TRACES = 4  # each re-trace promotes at least one carried value, which then stays fixed


class _Unbound:
    def __repr__(self):
        return "<unbound>"


UNBOUND = _Unbound()


def builtin_extreme(op, *values):
    """The builtins ``min`` and ``max`` as the kernel source calls them (source_rewrite.py):
    Python's own over Python values, else the elementwise minimum or maximum of every
    argument, folded left to right (Triton maps them onto tensors the same way)."""
    if not any(isinstance(v, Value) for v in values):
        return (min if op == "min" else max)(*values)
    result = values[0]
    for v in values[1:]:
        result = binary(op, result, v)
    return result


def peek(getter):
    """The value of a variable read through ``getter``, or UNBOUND before its first assignment."""
    try:
        return getter()
    except NameError:
        return UNBOUND


class TileRange:
    """The iteration space of a traced loop: start, start + step, ... below end."""

    def __init__(self, start, end, step=1, num_stages=None):
        if is_number(step) and step <= 0:
            raise user_error(f"tile_range: the step must be positive, got {step}", user_location())
        if num_stages is not None and (not isinstance(num_stages, int) or num_stages < 1):
            raise user_error(f"range: num_stages must be a positive int, got {num_stages!r}",
                             user_location())
        self.start, self.end, self.step = start, end, step
        self.num_stages = num_stages

    def __iter__(self):
        file, line = user_location()
        if file is not None and not _has_source(file):
            raise user_error(
                "tile_range: a device loop needs the kernel's source text, which Python does "
                "not keep for code typed into a REPL or passed to `python -c`; put the kernel "
                "in a file (or exec it with compile(source, filename, 'exec') after writing "
                "the file)", (file, line))
        raise user_error(
            "tile_range: use it directly as the iterable of a for statement in the body of a "
            "@metile.kernel function (`for i in metile.tile_range(0, n, BLOCK):`); a helper "
            "function with such a loop must be decorated with @metile.kernel (as Triton "
            "helpers are with @triton.jit) so that its loops are traced too", (file, line))


def _has_source(filename):
    import linecache

    return bool(linecache.getlines(filename))


def tile_range(start, end, step=1):
    """A loop over [start, end) by step that runs on the device (bounds: integer scalars)."""
    return TileRange(start, end, step)


def range_(arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
           disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False):
    """Triton's ``tl.range``: ``range(end)`` or ``range(start, end, step)`` as a device loop.
    ``num_stages`` sets the depth of this loop's software pipeline where it gets one (1: none;
    docs/gemm.md); the other hints (loop_unroll_factor, disallow_acc_multi_buffer, flatten,
    warp_specialize) are accepted and have no effect: meTile's lowering chooses them."""
    start, end = (0, arg1) if arg2 is None else (arg1, arg2)
    return TileRange(start, end, 1 if step is None else step, num_stages)


def run_range_loop(bounds, body, names, inits, line):
    """``for i in range(*bounds)``: unrolled while tracing over Python numbers, a device
    loop (as tile_range) when a bound is a traced value."""
    if all(is_number(b) for b in bounds):
        values = tuple(inits)
        for i in range(*bounds):
            values = tuple(body(i, *values))
        return values
    if len(bounds) == 1:
        bounds = (0, bounds[0])
    return run_tile_loop(TileRange(*bounds), body, names, inits, line)


def _bounds(trace, rng):
    dtype = "i32"
    for bound in (rng.step, rng.end, rng.start):
        if isinstance(bound, Value):
            dtype = dtype_for_numbers(bound)
    ids = []
    for bound in (rng.start, rng.end, rng.step):
        if isinstance(bound, Value):
            ids.append(trace.check(bound, "tile_range"))
        elif is_number(bound):
            ids.append(constant(trace, bound, dtype, "tile_range").id)
        else:
            raise user_error(f"tile_range: bounds must be integers or traced integer scalars, "
                             f"got {type(bound).__name__}", user_location())
    return ids


def _start_like(trace, start, out):
    """``start`` (a number or a scalar Value) as a value of out's type."""
    if is_number(start):
        start = constant(trace, start, out.dtype, "tile_range")
    if out.shape and not start.shape:
        start = wrap(trace, trace.at().splat(start.id, list(out.shape)))
    return start


def _type_change(op, name, before, after):
    return user_error(
        f"{op}: loop-carried variable '{name}' changes type from {before} to {after} in the "
        "loop body; a carried value keeps one type (start it as metile.full(shape, value, "
        "dtype) or a value of the right dtype, or cast with .to(dtype))", user_location())


def _carried_outputs(trace, op, names, inits, outputs, numbers):
    """Reconciles a loop body's ``outputs`` with the carried variables' values before it
    (``inits``; ``numbers``: the carried numbers' Python starts), in place: each output of a
    carried value gets its type. Returns the starts to trace the loop again with, {k: (start,
    dtype, shape)}, where a carried type must change (a number that becomes a traced value, a
    scalar that becomes a tile); {} when the types settled. ``op`` names the loop in errors."""
    promoted = {}
    for k, out in enumerate(outputs):
        init = inits[k]
        if isinstance(init, Value):
            if is_number(out):
                out = _start_like(trace, out, init)
            elif not isinstance(out, Value):
                raise _type_change(op, names[k], init.type, type(out).__name__)
            trace.check(out, op)
            if out.type == init.type:
                outputs[k] = out
            elif not init.pointer and not init.shape and out.dtype == init.dtype:
                promoted[k] = (init, out.dtype, out.shape)  # a traced scalar that becomes a tile
            elif k in numbers and not out.pointer:
                promoted[k] = (numbers[k], out.dtype, out.shape)
            else:
                raise _type_change(op, names[k], init.type, out.type)
        elif is_number(init) and out is not init and not (is_number(out) and out == init):
            if isinstance(out, Value):
                promoted[k] = (init, out.dtype, out.shape)
            elif is_number(out):  # Python arithmetic on the number: carry it as a scalar
                floats = "f32" in (number_dtype(init), number_dtype(out))
                promoted[k] = (init, "f32" if floats else number_dtype(init), ())
            else:
                raise _type_change(op, names[k], type(init).__name__, type(out).__name__)
        elif init is not UNBOUND and not is_number(init) and out is not init:
            raise user_error(
                f"{op}: variable '{names[k]}' holds a {type(init).__name__} and is reassigned "
                "in the loop body; only traced values and numbers can be loop-carried",
                user_location())
    return promoted


def _promote(trace, op, inits, promoted):
    """The carried variables' starts for the next trace: each promoted one as a value of its
    new type."""
    for k, (start, dtype, shape) in promoted.items():
        if is_number(start):
            start = constant(trace, start, dtype, op)
        if shape:
            start = wrap(trace, trace.at().splat(start.id, list(shape)))
        inits[k] = start


def _stale(trace, value):
    """Whether ``value`` holds a traced value of a loop body that has ended."""
    if isinstance(value, Value):
        return not trace.usable(value)
    if _record(value):
        return _stale(trace, value.loop_parts())
    if isinstance(value, (tuple, list)):
        return any(_stale(trace, v) for v in value)
    return False


def run_tile_loop(rng, body, names, inits, line):
    """Traces ``body(i, *values)`` as a loop over ``rng``; returns the variables' values after it."""
    if not isinstance(rng, TileRange):
        raise user_error("tile_range: internal rewrite mismatch, the iterable is not a tile_range",
                         user_location())
    trace = current("tile_range")
    # A variable still holding a value of an earlier loop body (alone or inside a tuple or list,
    # such as coordinates) is body-local here, not carried.
    inits = [UNBOUND if _stale(trace, v) else v for v in inits]
    if any(_record(v) for v in inits):
        return _run_record_loop(trace, rng, body, names, inits, line)
    numbers = {k: v for k, v in enumerate(inits) if is_number(v)}  # carried numbers' Python start
    for _ in range(_MAX_TRACES):
        bounds = _bounds(trace, rng)
        carried = [k for k, v in enumerate(inits) if isinstance(v, Value)]
        induction, region_args = trace.at().begin_for(*bounds, [inits[k].id for k in carried],
                                                      f"the tile_range body at line {line}")
        args = list(inits)
        for k, arg in zip(carried, region_args):
            args[k] = wrap(trace, arg)
        outputs = list(body(wrap(trace, induction), *args))
        promoted = _carried_outputs(trace, "tile_range", names, inits, outputs, numbers)
        if promoted:
            trace.core.abandon_for()
            _promote(trace, "tile_range", inits, promoted)
            continue

        results = trace.at().end_for([outputs[k].id for k in carried], rng.num_stages or 0)
        for k, result in zip(carried, results):
            outputs[k] = wrap(trace, result)
        for k, init in enumerate(inits):
            if is_number(init):
                outputs[k] = init
        return tuple(outputs)
    raise user_error("tile_range: the loop-carried types did not settle after "
                     f"{_MAX_TRACES} traces of the body", user_location())


def run_while(cond_fn, body_fn, names, inits, line, test):
    """``while cond_fn(*values): values = body_fn(*values)`` over the variables ``names`` the
    body assigns (``inits``: their values before the loop, UNBOUND when unbound). While the
    condition is a Python value the loop runs as Python runs it; once it is traced, the rest
    of the loop is a Tile IR ``while`` whose carried values are the variables bound before it
    (the others are local to the body and not visible after it, as in Triton). Returns the
    variables' values after the loop."""
    values = tuple(inits)
    trace = active_trace()
    while True:
        if trace is None:
            cond = cond_fn(*values)
        else:
            # The condition is traced inside a while region, so that the ops of a traced one
            # (an atomic taking a lock) belong to the loop; a Python one drops the region.
            traced, cond = _run_device_while(trace, cond_fn, body_fn, names, values, line, test)
            if traced:
                return cond
        if not cond:
            return values
        values = tuple(body_fn(*values))


def _run_device_while(trace, cond_fn, body_fn, names, inits, line, test):
    """Traces the loop as a Tile IR while: (True, the variables' values after it), or (False,
    the condition) when the condition is a Python value."""
    inits = [UNBOUND if _stale(trace, v) else v for v in inits]
    for k, v in enumerate(inits):
        if _record(v) or isinstance(v, (tuple, list)) and any(isinstance(x, Value) for x in v):
            raise user_error(
                f"while: variable '{names[k]}' holds a {type(v).__name__} of traced values and is "
                "assigned in the loop body; a traced `while` carries traced scalars and tiles "
                "(carry the parts as separate variables)", user_location(), NotSupportedError)
    numbers = {k: v for k, v in enumerate(inits) if is_number(v)}
    for _ in range(_MAX_TRACES):
        carried = [k for k, v in enumerate(inits) if isinstance(v, Value)]
        region_args = trace.at().begin_while(
            [inits[k].id for k in carried], f"the condition of the `while` at line {line}")
        args = list(inits)
        for k, arg in zip(carried, region_args):
            args[k] = wrap(trace, arg)
        cond = cond_fn(*args)
        if not isinstance(cond, Value):
            trace.core.abandon_while()
            return False, cond
        c = scalar_condition(cond, test, "while")
        body_args = trace.at().begin_while_body(
            c.id, [args[k].id for k in carried], f"the body of the `while` at line {line}")
        args = list(inits)
        for k, arg in zip(carried, body_args):
            args[k] = wrap(trace, arg)
        outputs = list(body_fn(*args))
        promoted = _carried_outputs(trace, "while", names, inits, outputs, numbers)
        if promoted:
            trace.core.abandon_while()
            _promote(trace, "while", inits, promoted)
            continue

        results = trace.at().end_while([outputs[k].id for k in carried])
        values = list(inits)
        for k, result in zip(carried, results):
            values[k] = wrap(trace, result)
        return True, tuple(values)
    raise user_error("while: the loop-carried types did not settle after "
                     f"{_MAX_TRACES} traces of the body", user_location())


def _same(a, b):
    if isinstance(a, Value) or isinstance(b, Value):
        return isinstance(a, Value) and isinstance(b, Value) and a.id == b.id
    return type(a) is type(b) and a == b


class _MoreParts(Exception):
    """A loop body changed a part of a record that the trace did not carry."""


def _run_record_loop(trace, rng, body, names, inits, line):
    """run_tile_loop over variables holding records: each record is carried as the parts it
    expects its body to change (``loop_varying``); a trace that finds another part changed is
    abandoned and the body traced again carrying that part too."""
    records = {k: v for k, v in enumerate(inits) if _record(v)}
    carried = {k: set(v.loop_varying()) for k, v in records.items()}
    while True:
        try:
            return _trace_record_loop(rng, body, names, inits, line, records, carried)
        except _MoreParts:
            trace.core.abandon_for()


def _trace_record_loop(rng, body, names, inits, line, records, carried):
    slots, flat_names, flat_inits = [], [], []
    for k, (name, value) in enumerate(zip(names, inits)):
        picked = sorted(carried[k]) if k in records else None
        slots.append((k, picked))
        if picked is None:
            flat_names.append(name)
            flat_inits.append(value)
        else:
            parts = value.loop_parts()
            flat_names += [f"{name}[{i}]" for i in picked]
            flat_inits += [parts[i] for i in picked]

    def rebuild(flat):
        values, position = [], 0
        for k, picked in slots:
            if picked is None:
                values.append(flat[position])
                position += 1
                continue
            parts = records[k].loop_parts()
            for i in picked:
                parts[i] = flat[position]
                position += 1
            values.append(records[k].with_loop_parts(parts))
        return values

    def flat_body(induction, *flat):
        args = rebuild(flat)
        outputs = body(induction, *args)
        flat_outputs = []
        for (k, picked), arg, out in zip(slots, args, outputs):
            if picked is None:
                flat_outputs.append(out)
                continue
            if not _record(out) or out.loop_kind() != arg.loop_kind():
                raise user_error(f"tile_range: loop-carried variable '{names[k]}' holds {arg!r} "
                                 f"before the loop body and {out!r} after it; a carried value "
                                 "keeps one type", user_location())
            before, after = arg.loop_parts(), out.loop_parts()
            changed = {i for i in range(len(after))
                       if i not in carried[k] and not _same(before[i], after[i])}
            if changed:
                carried[k] |= changed
                raise _MoreParts()
            flat_outputs += [after[i] for i in picked]
        return flat_outputs

    return tuple(rebuild(run_tile_loop(rng, flat_body, flat_names, flat_inits, line)))


# The runtime of the rewritten `if`, conditional expressions, and/or/not and the conditions of
# `while` loops that stay Python loops
# (source_rewrite.py passes this module to the rewritten kernel): branches.py.
from .branches import (_record, logical_and, logical_not, logical_or,  # noqa: E402,F401
                       python_condition, run_if, run_ifexp, scalar_condition, while_condition)
