"""The plain globals and closure variables a kernel reads, as they were when it was first
compiled: a later launch raises when one of them changed (as Triton does), instead of using
the old value silently."""

import inspect

from .errors import user_error

_MISSING = object()


def _simple_value(value):
    """Whether a captured value is a plain value whose change the kernel must notice."""
    if isinstance(value, (bool, int, float, str, bytes, type(None))):
        return True
    return isinstance(value, tuple) and all(_simple_value(v) for v in value)


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def _reader(fn, name, cells):
    """read() -> the value ``name`` has for ``fn`` now (its closure cell, else its global),
    with the cell or the globals dict found once: both are fixed for fn."""
    cell = cells.get(name)
    if cell is None:
        return lambda: fn.__globals__.get(name, _MISSING)

    def read():
        try:
            return cell.cell_contents
        except ValueError:  # an empty cell
            return _MISSING

    return read


class CapturedValues:
    """Records fn's plain captured values now; check() compares them with their values then."""

    def __init__(self, fn):
        self._where = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        names = sorted(_code_names(fn.__code__) | set(fn.__code__.co_freevars))
        self._readers = []  # (name, read its value now, its value when recorded)
        for name in names:
            read = _reader(fn, name, cells)
            value = read()
            if value is not _MISSING and _simple_value(value):
                self._readers.append((name, read, value))

    def check(self, kernel_name):
        for name, read, before in self._readers:
            now = read()
            if now is before or (type(now) is type(before) and now == before):
                continue
            now = "nothing (deleted)" if now is _MISSING else repr(now)
            raise user_error(
                f"{kernel_name}: the global '{name}' changed from {before!r} to {now} since the "
                "kernel was compiled; a kernel reads its globals once, when it is traced. Pass "
                "the value as an argument (a constexpr for a compile-time constant), or define "
                "a new kernel", self._where)
