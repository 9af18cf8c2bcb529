"""What a kernel captured when it was first compiled: the globals, closure variables and
module attributes its code reads and, recursively, those of the helper functions it calls
(plain Python functions and @metile.kernel helpers). A later launch raises
CompilationError when one of them changed (as Triton does for globals), instead of using
the old kernel silently:

- plain values (numbers, strings, tuples of them) by value;
- lists, dicts, sets, tuples holding them and numpy arrays by their contents, compared with
  a copy at each launch;
- helper functions by their code (bytecode, constants, names, defaults) and, recursively,
  by what they capture: a helper defined again with the same code is no change.

Other objects (classes and their instances, meTile's own functions and modules, library
functions) are not tracked.

The launch's check is cheap: each watched value is compared by identity (a container with
its copy too). Only when one differs is everything captured again and compared by
description, which tells a real change from a rebinding to an equal value or helper.
"""

import dis
import functools
import inspect
import sys
import sysconfig
import types

import numpy as np

from .errors import user_error

_MISSING = object()
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_CONTAINERS = (tuple, list, dict, set, frozenset, bytearray)
# Functions of these are not walked: their code does not change while a program runs.
_LIBRARY_PACKAGES = ("metile", "metile_kernels")
_LIBRARY_PATHS = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")})
_SHOWN_LENGTH = 80


def code_reads(code, names=None, attributes=None):
    """(names, (name, attribute) pairs) that ``code`` and the code nested in it load: the
    names of LOAD_GLOBAL and LOAD_DEREF, and attributes read straight off one of them."""
    names = set() if names is None else names
    attributes = set() if attributes is None else attributes
    base = None
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_DEREF"):
            names.add(instruction.argval)
            base = instruction.argval
            continue
        if base is not None and instruction.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            attributes.add((base, instruction.argval))
        base = None
    for const in code.co_consts:
        if inspect.iscode(const):
            code_reads(const, names, attributes)
    return names, attributes


def _local_cells(code):
    """The names of cells that ``code`` or code nested in it creates: locals, not captures."""
    cells = set(code.co_cellvars)
    for const in code.co_consts:
        if inspect.iscode(const):
            cells |= _local_cells(const)
    return cells


def _reader(fn, name, cells):
    """read() -> the value ``name`` has for ``fn`` now (its closure cell, else its global),
    with the cell or the globals dict found once: both are fixed for fn."""
    cell = cells.get(name)
    if cell is None:
        return functools.partial(fn.__globals__.get, name, _MISSING)

    def read():
        try:
            return cell.cell_contents
        except ValueError:  # an empty cell
            return _MISSING

    return read


def _attribute_reader(read_base, attribute):
    return lambda: getattr(read_base(), attribute, _MISSING)


def is_library(value):
    """Whether a function or module is meTile's, Python's or an installed package's: code
    that does not change while a program runs."""
    module = isinstance(value, types.ModuleType)
    name = value.__name__ if module else getattr(value, "__module__", None) or ""
    if name.split(".")[0] in _LIBRARY_PACKAGES or name in sys.builtin_module_names:
        return True
    code = getattr(value, "__code__", None)
    file = getattr(value, "__file__", None) if module else code and code.co_filename
    return bool(file) and file.startswith(_LIBRARY_PATHS)


def _helper_function(value):
    """The Python function a helper runs (a @metile.kernel's own), or None: not a helper."""
    from .kernel import KernelFunction

    fn = value.fn if isinstance(value, KernelFunction) else value
    if isinstance(fn, types.FunctionType) and not is_library(fn):
        return fn
    return None


def _tracked_container(value):
    """Whether a value is compared by content: a mutable container, or a tuple holding one."""
    if isinstance(value, np.ndarray):
        return True
    if not isinstance(value, _CONTAINERS):
        return False
    try:
        hash(value)  # a tuple of immutable values is immutable: compared by identity
    except TypeError:
        return True
    return not isinstance(value, (tuple, frozenset))


def _tracked_plain(value):
    if isinstance(value, _SCALARS):
        return True
    return isinstance(value, (tuple, frozenset)) and not _tracked_container(value) and all(
        _tracked_plain(v) or _helper_function(v) is not None for v in value)


def _describe(value):
    """A comparable description of a value by content (objects: by identity)."""
    if isinstance(value, _SCALARS):
        return (type(value), repr(value))  # repr tells 1 from 1.0 and True, nan from nan
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return (dict, tuple((_describe(k), _describe(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (type(value), frozenset(_describe(v) for v in value))
    if isinstance(value, _CONTAINERS):
        return (type(value), tuple(_describe(v) for v in value))
    return ("object", id(value))


def _code_description(code):
    consts = tuple(_code_description(c) if inspect.iscode(c) else _describe(c)
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars)


def _helper_description(fn):
    return ("helper", _code_description(fn.__code__), _describe(fn.__defaults__),
            _describe(fn.__kwdefaults__))


def _snapshot(value):
    """A copy of a container down to its immutable leaves, for the launch's comparison."""
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_snapshot(v) for v in value)
    if isinstance(value, (set, bytearray)):
        return type(value)(value)
    return value


def _holds_array(value):
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, dict):
        return any(_holds_array(v) for v in value.values())
    return isinstance(value, (list, tuple)) and any(_holds_array(v) for v in value)


def _same_contents(value):
    """unchanged(now) for a container: whether it still holds what it holds now."""
    if isinstance(value, np.ndarray):  # by bytes: a NaN is unchanged
        data, shape, dtype = value.tobytes(), value.shape, value.dtype
        return lambda now: now.tobytes() == data and now.shape == shape and now.dtype == dtype
    snapshot = _snapshot(value)
    if not _holds_array(value):
        return snapshot.__eq__  # compares in C; `now` is the same object, so the same type

    def unchanged(now):
        try:
            return bool(snapshot == now)
        except ValueError:  # an array's ambiguous truth: the slow check decides
            return False

    return unchanged


def _shown(value):
    if value is _MISSING:
        return "nothing (deleted)"
    text = repr(value)
    return text if len(text) <= _SHOWN_LENGTH else text[:_SHOWN_LENGTH - 3] + "..."


def _source(fn, name, cells):
    """Where ``name`` is read from for fn: one watch serves every reader of the same place."""
    cell = cells.get(name)
    return ("cell", id(cell)) if cell is not None else ("global", id(fn.__globals__), name)


class _Capture:
    """One walk over what a function reads: ``watches`` for the launch's fast check, as
    (read, recorded object, unchanged(now) or None), one per place read, and ``described``:
    for each name read, keyed by (reader's name, name), (description, shown value, whether
    a helper)."""

    def __init__(self, fn):
        self.watches = []
        self.described = {}
        self._watched = set()
        self._seen = set()
        self._function(fn, None)

    def _function(self, fn, helper_name):
        if id(fn) in self._seen:
            return
        self._seen.add(id(fn))
        code = fn.__code__
        cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
        names, attributes = code_reads(code)
        local = _local_cells(code)
        names = sorted(name for name in names if name in cells or name not in local)
        readers = {name: _reader(fn, name, cells) for name in names}
        for name in names:
            self._value(readers[name], _source(fn, name, cells), name, helper_name)
        for base, attribute in sorted(attributes):
            module = readers[base]() if base in readers else None
            if isinstance(module, types.ModuleType) and not is_library(module):
                self._value(_attribute_reader(readers[base], attribute),
                            (_source(fn, base, cells), attribute), f"{base}.{attribute}",
                            helper_name)

    def _value(self, read, source, name, helper_name):
        value = read()
        helper = _helper_function(value)
        if helper is not None:
            unchanged, described = None, (_helper_description(helper), None, True)
        elif _tracked_container(value):
            unchanged, described = _same_contents(value), (_describe(value), _shown(value), False)
        elif _tracked_plain(value):
            unchanged, described = None, (_describe(value), _shown(value), False)
        else:
            return
        self.described[(helper_name, name)] = described
        if source not in self._watched:
            self._watched.add(source)
            self.watches.append((read, value, unchanged))
        if helper is not None:
            self._function(helper, name)


class CapturedValues:
    """Records what fn captures now; check() raises when any of it has changed since."""

    def __init__(self, fn):
        self._fn = fn
        self._where = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        capture = _Capture(fn)
        self._watches, self._described = capture.watches, capture.described

    def check(self, kernel_name):
        for read, recorded, unchanged in self._watches:
            now = read()
            if now is not recorded or (unchanged is not None and not unchanged(now)):
                self._check_again(kernel_name)
                return

    def _check_again(self, kernel_name):
        """Captures again and compares by description: a real change raises; a rebinding to
        an equal value or helper is watched from now on."""
        capture = _Capture(self._fn)
        for key, (description, shown, helper) in self._described.items():
            now = capture.described.get(key)
            if now is None or now[0] != description:
                raise self._changed(kernel_name, key, shown, helper, now)
        self._watches = capture.watches

    def _changed(self, kernel_name, key, shown, helper, now):
        helper_name, name = key
        reader = f" (read by the helper '{helper_name}')" if helper_name else ""
        if helper or (now is not None and now[2]):
            return user_error(
                f"{kernel_name}: the helper '{name}'{reader} changed since the kernel was "
                "compiled (its code or what it reads is not what the kernel was traced "
                "with); a kernel inlines its helpers once, when it is traced. Define the "
                "kernel again after its helpers, or pass the helper as a constexpr argument",
                self._where)
        now_shown = _shown(_MISSING) if now is None else now[1]
        return user_error(
            f"{kernel_name}: the global '{name}'{reader} changed from {shown} to {now_shown} "
            "since the kernel was compiled; a kernel reads its globals once, when it is "
            "traced. Pass the value as an argument (a constexpr for a compile-time "
            "constant), or define a new kernel", self._where)
