"""Python ``if``/``elif``/``else``, conditional expressions, ``and``/``or``/``not`` and early
``return`` on traced values, as Triton compiles them (see source_rewrite.py).

The source rewrite turns each ``if`` into two nested functions, one per branch, of the names
either branch assigns; one call, ``run_if``, runs them and the names are assigned back. A
condition that is a Python value (a constexpr, ``x is None``) runs the branch it selects while
tracing, as Python does. A traced scalar condition (i1, or a number compared with ``!= 0``,
as Python's truthiness) traces both branches into one Tile IR ``if``:

- a name bound before the ``if`` and assigned in a branch, or assigned in both branches,
  becomes a result of the ``if``; both branches must give it one type (a Python number takes
  the other branch's type); a name assigned in one branch only and not bound before is not
  visible after the ``if`` (Triton's rule);
- tuples and lists of such values, and records carried as parts (block pointers), are
  results element by element;
- a Python number the then-branch leaves is first taken as its own type (an i32, f32 or i1
  scalar); when the else-branch gives another (``y = 0.0`` against ``y = tl.load(f16_ptr)``),
  the ``if`` is emptied (dead-code elimination drops it) and both branches are traced again
  with the types known. Both branches leaving the same number keep it a Python number.

``a and b`` / ``a or b`` on a traced ``a`` compute both sides and combine them as i1 values
(``a & b``), as Triton does; a Python ``a`` short-circuits as in Python. ``not x`` is
``x == 0`` on a traced ``x``.
"""

from .errors import NotSupportedError, user_error
from .frames import user_location
from .tracing import current
from .values import Value, as_value, binary, compare, constant, is_number, number_dtype, wrap

_MAX_TRACES = 3
RETURN_NAME = "_metile_return"  # the variable the rewrite assigns a value `return` to


def _record(value):
    """Whether ``value`` is a record carried as its parts (a block pointer; loops.py)."""
    return hasattr(value, "loop_parts")


def _display(name):
    if name == RETURN_NAME:
        return "the return value"
    return name if name.startswith("the ") else f"variable '{name}'"


def _type_name(x):
    if isinstance(x, Value):
        return str(x.type)
    if is_number(x):
        return f"the Python {type(x).__name__} {x!r}"
    return f"{type(x).__name__} {x!r}" if x is None or isinstance(x, str) else type(x).__name__


# ---- conditions ---------------------------------------------------------------------------


def truth(x, what):
    """``x`` (a traced value) as i1 values: itself when i1, else ``x != 0`` (Python's
    truthiness, as Triton reads an `if`'s, a `while`'s or `where`'s condition)."""
    if x.pointer:
        raise user_error(f"{what}: a pointer ({x.type}) has no truth value; compare it",
                         user_location())
    return x if x.dtype == "i1" else compare("ne", x, 0)


def scalar_condition(cond, test, construct):
    """The i1 scalar a traced condition of an `if` or a `while` decides with."""
    trace = current(construct)
    trace.check(cond, construct)
    if cond.shape:
        choose = "" if construct == "while" else " or select elementwise with metile.where"
        raise user_error(
            f"{construct}: the condition `{test}` is a {cond.type}, not a scalar; a "
            f"`{construct}` on a traced value needs one value for the whole program (Triton's "
            f"rule): reduce it (metile.max(c, 0), metile.sum(c, 0) > 0){choose}",
            user_location())
    return truth(cond, construct)


def python_condition(cond, line, exit_kind):
    """The condition of an ``if`` whose branch has ``exit_kind`` (break, continue, return
    inside a loop, global): it stays a Python ``if``, so it must be a Python value."""
    if isinstance(cond, Value):
        raise user_error(
            f"a Python `if` on a traced value with `{exit_kind}` in a branch: a traced `if` "
            f"becomes a device `if` whose branches both run while tracing, so `{exit_kind}` "
            "cannot leave a loop (or a `with` or `try`) from it; as in Triton, a `return` under "
            "a traced `if` is allowed only outside loops. Compute a mask and use metile.where, "
            "or make the condition a constexpr", user_location())
    return cond


def while_condition(cond, line, exit_kind):
    """The condition of a ``while`` that stays a Python loop (its body has ``exit_kind``:
    break, continue, return, global; or it has an else or assigns in its condition): a
    Python value only."""
    if isinstance(cond, Value):
        what = {"else": "an `else` clause", "walrus": "an assignment (`:=`) in its condition"}
        raise user_error(
            f"a `while` loop on a traced condition (line {line}) with "
            f"{what.get(exit_kind, f'`{exit_kind}` in its body')} is not supported: a traced "
            "`while` is a device loop whose body runs whole each iteration (Triton rejects "
            "`break` and `continue` in it too); fold the exit into the loop condition "
            "(`while go and i < n:`, setting `go = False` in the body)",
            user_location(), NotSupportedError)
    return cond


def _operand(value, op):
    """The right side of ``and``/``or`` after a traced left side: a traced value, or a Python
    number as an i1 of its truth."""
    if isinstance(value, Value):
        return value
    if is_number(value):
        return as_value(bool(value), op, "i1")
    raise user_error(
        f"{op}: `{op}` of a traced value needs traced values or numbers on both sides, got "
        f"{_type_name(value)} on the right", user_location())


def logical_and(left, right):
    """``left and right`` (``right`` a function giving the right operand)."""
    if not isinstance(left, Value):
        return right() if left else left
    value = _operand(right(), "and")
    return binary("and", truth(left, "and"), truth(value, "and"))


def logical_or(left, right):
    """``left or right`` (``right`` a function giving the right operand)."""
    if not isinstance(left, Value):
        return left if left else right()
    value = _operand(right(), "or")
    return binary("or", truth(left, "or"), truth(value, "or"))


def logical_not(x):
    """``not x``: Python's on Python values, ``x == 0`` (i1) on a traced value."""
    if not isinstance(x, Value):
        return not x
    return binary("xor", truth(x, "not"), True)


def run_ifexp(cond, then_value, else_value, line, test, plain=False):
    """``then_value() if cond else else_value()``: a traced scalar condition gives a Tile IR
    ``if`` with one result, the two sides of one type (a Python number takes the other's).
    When both sides are ``plain`` (names or numbers: nothing to run, nothing that can fault)
    and traced values or numbers, it is ``where(cond, a, b)``, which is also what a combine
    function of metile.reduce (pure scalar code, no ``if``) can hold."""
    if not isinstance(cond, Value):
        return then_value() if cond else else_value()
    from .loops import UNBOUND

    if plain:
        a, b = then_value(), else_value()
        if all(isinstance(v, Value) or is_number(v) for v in (a, b)):
            from .language import where

            return where(scalar_condition(cond, test, "conditional expression"), a, b)
        then_value, else_value = (lambda: a), (lambda: b)

    name = "the value of the conditional expression"
    return run_if(cond, lambda _: (then_value(),), lambda _: (else_value(),), (name,),
                  (UNBOUND,), ((True, True),), line, test, "conditional expression")[0]


# ---- values as leaves ---------------------------------------------------------------------


def _skeleton(x):
    """The structure of ``x`` whose leaves are traced values, numbers and other objects."""
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_skeleton(v) for v in x))
    if _record(x):
        return ("record", x.loop_kind(), _skeleton(tuple(x.loop_parts())))
    return "leaf"


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in _leaves(v)]
    if _record(x):
        return _leaves(tuple(x.loop_parts()))
    return [x]


def _rebuild(template, leaves):
    """``template`` with its leaves replaced, in order, by ``leaves`` (consumed)."""
    if isinstance(template, (tuple, list)):
        items = [_rebuild(v, leaves) for v in template]
        if isinstance(template, list):
            return items
        return type(template)(*items) if hasattr(template, "_fields") else tuple(items)
    if _record(template):
        parts = _rebuild(tuple(template.loop_parts()), leaves)
        return template.with_loop_parts(list(parts))
    return leaves.pop(0)


def _same_python(a, b):
    if a is b:
        return True
    if isinstance(a, Value) or isinstance(b, Value):
        return False
    if is_number(a) and is_number(b):
        return number_dtype(a) == number_dtype(b) and a == b
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 -- objects without a usable ==
        return False


def _numbers_dtype(*numbers):
    kinds = {number_dtype(n) for n in numbers}
    if "f32" in kinds:
        return "f32"
    if kinds == {"i1"}:
        return "i1"
    if any(not -2**31 <= int(n) < 2**31 for n in numbers):
        return "i64"
    return "i32"


class _Slot:
    """A result of the Tile IR ``if``: the type of a traced value. A provisional slot is a
    Python number's own type (i32, f32, i1 scalar) that the then-branch left: the else-branch
    may confirm it, or ask for another (the ``if`` is then traced again), or give the same
    number (the variable stays that Python number)."""

    def __init__(self, value=None, dtype=None, provisional=False):
        if value is not None:
            self.dtype, self.shape, self.pointer = str(value.dtype), value.shape, value.pointer
            self.text = str(value.type)
        else:
            self.dtype, self.shape, self.pointer, self.text = str(dtype), (), False, str(dtype)
        self.provisional = provisional

    def accepts(self, value):
        return isinstance(value, Value) and str(value.type) == self.text


def _as_slot(trace, x, slot, name, branch):
    """``x`` (a leaf the ``branch`` gives) as a value of the slot's type."""
    if isinstance(x, Value):
        if slot.accepts(x):
            return trace.check(x, "if")
    elif is_number(x) and not slot.pointer:
        value = constant(trace, x, slot.dtype, "if")
        if slot.shape:
            value = wrap(trace, trace.at().splat(value.id, list(slot.shape)))
        return value.id
    raise _mismatch(name, branch, x, slot.text, "branches")


def _mismatch(name, branch, x, other, kind):
    """The error for ``x``, what ``branch`` gives ``name``, against ``other`` (a type's text):
    the value before the ``if`` (kind "before") or the other branch's."""
    if kind == "before":
        return user_error(
            f"if: the initial value of {_display(name)} is {other}, but the {branch}-branch "
            f"redefines it as {_type_name(x)}; a value keeps one type through an `if` on a "
            "traced value (cast it with .to(dtype), or start it with metile.full(shape, value, "
            "dtype))", user_location())
    first, second = (_type_name(x), other) if branch == "then" else (other, _type_name(x))
    what = "structure and type" if kind == "structure" else "type"
    return user_error(
        f"if: mismatched type for {_display(name)} between the then-branch ({first}) and the "
        f"else-branch ({second}); both branches of an `if` on a traced value must give it one "
        f"{what} (cast with .to(dtype), or broadcast with metile.broadcast_to; only traced "
        "values and numbers may differ between the branches)", user_location())


# ---- the traced if ------------------------------------------------------------------------


def run_if(cond, then_fn, else_fn, names, inits, assigned, line, test, construct="if"):
    """``if cond: then_fn else: else_fn`` over the variables ``names`` (their values before
    the ``if`` are ``inits``, UNBOUND when unbound; ``assigned[k]`` says whether each branch
    assigns name k in its text). Returns the variables' values after the ``if`` (UNBOUND:
    not visible)."""
    if not isinstance(cond, Value):
        return tuple((then_fn if cond else else_fn)(*inits))
    from .loops import UNBOUND, _stale

    c = scalar_condition(cond, test, construct)
    trace = current(construct)
    inits = [UNBOUND if _stale(trace, v) else v for v in inits]
    # Per name: hidden (not visible after the if), or per leaf a _Slot (a result of the if)
    # or "python" (an object both branches leave the same). `decided` keeps what a trace
    # learned for the next one.
    hidden = {k for k, v in enumerate(inits) if v is UNBOUND and not all(assigned[k])}
    decided = {}  # (k, leaf index) -> _Slot
    for _ in range(_MAX_TRACES):
        trace.at().begin_if(c.id, f"the then-branch of the `{construct}` at line {line}")
        # A value of a loop body that has ended (a body-local variable) is not visible.
        then_out = [UNBOUND if _stale(trace, v) else v for v in then_fn(*inits)]
        plan, then_yields = {}, []  # plan: k -> one decision per leaf
        for k, a in enumerate(then_out):
            if k in hidden or a is UNBOUND:
                continue
            befores = _leaves_like(inits[k], a, UNBOUND)
            plan[k] = []
            for i, (leaf, before) in enumerate(zip(_leaves(a), befores)):
                d = decided.get((k, i)) or _then_decision(names[k], leaf, before)
                plan[k].append(d)
                if isinstance(d, _Slot):
                    then_yields.append(_as_slot(trace, leaf, d, names[k], "then"))
        trace.at().begin_else(then_yields, f"the else-branch of the `{construct}` at line {line}")
        else_out = [UNBOUND if _stale(trace, v) else v for v in else_fn(*inits)]
        retrace, else_yields, keep = False, [], set()  # keep: provisional slots left numbers
        for k, b in enumerate(else_out):
            if k in hidden:
                continue
            a = then_out[k]
            if a is UNBOUND or b is UNBOUND:
                hidden.add(k)  # assigned in one branch only (or in neither)
                retrace = retrace or any(isinstance(d, _Slot) for d in plan.get(k, ()))
                continue
            if _skeleton(a) != _skeleton(b):
                raise _mismatch(names[k], "else", b, _type_name(a), "structure")
            befores = _leaves_like(inits[k], b, UNBOUND)
            for i, (x, y, d, before) in enumerate(zip(_leaves(a), _leaves(b), plan[k], befores)):
                if isinstance(before, Value) and isinstance(y, Value) and y.id != before.id:
                    if not _Slot(before).accepts(y):
                        raise _mismatch(names[k], "else", y, str(before.type), "before")
                if d == "python":
                    if _same_python(x, y):
                        continue
                    if not (is_number(x) and (is_number(y) or isinstance(y, Value))):
                        raise _mismatch(names[k], "else", y, _type_name(x), "branches")
                    decided[(k, i)] = _Slot(y) if isinstance(y, Value) else _Slot(
                        dtype=_numbers_dtype(x, y))
                    retrace = True
                    continue
                if d.provisional:  # the then-branch left the number x
                    if is_number(y) and _same_python(x, y):
                        keep.add((k, i))
                    elif is_number(y) and _numbers_dtype(x, y) != d.dtype:
                        decided[(k, i)] = _Slot(dtype=_numbers_dtype(x, y))
                        retrace = True
                        continue
                    elif isinstance(y, Value) and not d.accepts(y):
                        if y.pointer:
                            raise _mismatch(names[k], "else", y, _type_name(x), "branches")
                        decided[(k, i)] = _Slot(y)
                        retrace = True
                        continue
                if not retrace:
                    else_yields.append(_as_slot(trace, y, d, names[k], "else"))
        if retrace:
            # Close the if with yields of the right types (it is emptied at once) and trace
            # both branches again with every result's type known.
            trace.at().end_if(then_yields)
            trace.core.abandon_if()
            continue
        results = list(trace.at().end_if(else_yields))
        outputs = []
        for k, a in enumerate(then_out):
            if k in hidden:
                outputs.append(UNBOUND)
                continue
            leaves = []
            for i, (leaf, d) in enumerate(zip(_leaves(a), plan[k])):
                result = results.pop(0) if isinstance(d, _Slot) else None
                leaves.append(leaf if result is None or (k, i) in keep else wrap(trace, result))
            outputs.append(_rebuild(a, leaves))
        return tuple(outputs)
    raise user_error(f"if: the result types of the `{construct}` did not settle after "
                     f"{_MAX_TRACES} traces of its branches", user_location())


def _leaves_like(before, after, unbound):
    """The leaves of ``before`` when it has the structure of ``after``, else ``unbound``s."""
    if before is not unbound and _skeleton(before) == _skeleton(after):
        return _leaves(before)
    return [unbound] * len(_leaves(after))


def _then_decision(name, leaf, before):
    """What the then-branch's ``leaf`` of a variable (``before`` it: a Value, a number, or
    neither) makes of it, before the else-branch is traced."""
    if isinstance(before, Value) and not (isinstance(leaf, Value) and leaf.id == before.id):
        slot = _Slot(before)  # a value bound before the if keeps its type
        if isinstance(leaf, Value) and not slot.accepts(leaf):
            raise _mismatch(name, "then", leaf, slot.text, "before")
        return slot
    if isinstance(leaf, Value):
        return _Slot(leaf)
    if is_number(leaf):
        return _Slot(dtype=_numbers_dtype(leaf), provisional=True)
    return "python"
