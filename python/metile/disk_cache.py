"""The on-disk cache of traced kernels: Tile IR text keyed by the kernel's source, the
values it reads from its globals and closure, the argument signature, the compiler
build and the tracer's own sources. A new process that launches the same kernel with the same signature parses the IR
instead of tracing (compiled objects are cached on disk by the C++ core). Each entry
carries its key and a checksum of its text, verified on load (see checked_body).

The cache lives in <cache root>/python-ir, beside the C++ core's compiled objects: the root
is METILE_CACHE_DIR, else $XDG_CACHE_HOME/metile, else ~/.cache/metile. METILE_TRACE_CACHE=off
turns it off.
"""

import functools
import hashlib
import inspect
import os
import threading
import types

from . import _core

_SIMPLE = (int, float, str, bool, bytes, type(None))


def cache_root():
    """METILE_CACHE_DIR, else $XDG_CACHE_HOME/metile, else ~/.cache/metile."""
    root = os.environ.get("METILE_CACHE_DIR")
    if root:
        return root
    xdg = os.environ.get("XDG_CACHE_HOME")
    return os.path.join(xdg, "metile") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "metile")


def directory():
    if os.environ.get("METILE_TRACE_CACHE") == "off":
        return None
    return os.path.join(cache_root(), "python-ir")


def _core_stamp():
    stat = os.stat(_core.__file__)
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _value_print(value, seen):
    """A stable text for a value the kernel reads, or None when it has none."""
    if isinstance(value, _SIMPLE):
        return repr(value)
    if isinstance(value, tuple):
        parts = [_value_print(v, seen) for v in value]
        return None if None in parts else "(" + ",".join(parts) + ")"
    if isinstance(value, _core.ThreadLayout):  # its repr names every field
        return repr(value)
    if isinstance(value, types.ModuleType):
        return "module:" + value.__name__
    if getattr(value, "__module__", "").split(".")[0] == "metile":
        return "metile:" + getattr(value, "__qualname__", type(value).__name__)
    if isinstance(value, types.FunctionType):
        return function_fingerprint(value, seen)
    if hasattr(value, "fn") and isinstance(value.fn, types.FunctionType):  # a @metile.kernel
        return function_fingerprint(value.fn, seen)
    return None


def function_fingerprint(fn, seen=None):
    """A hash of fn's source and of every global or closure value it reads; None when one
    of them cannot be printed stably (then the disk cache is not used)."""
    seen = set() if seen is None else seen
    if fn in seen:
        return "recursive:" + fn.__qualname__
    seen.add(fn)
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    # The file and line too: the cached IR records the user's lines for error messages.
    parts = [source, fn.__code__.co_filename, str(fn.__code__.co_firstlineno)]
    for name in sorted(_code_names(fn.__code__)):
        if name in fn.__globals__:
            printed = _value_print(fn.__globals__[name], seen)
            if printed is None:
                return None
            parts.append(f"{name}={printed}")
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        printed = _value_print(cell.cell_contents, seen)
        if printed is None:
            return None
        parts.append(f"{name}={printed}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def source_stamp(root):
    """A hash of the path, size and modification time of every Python file under ``root``."""
    parts = []
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            stat = os.stat(os.path.join(folder, name))
            parts.append(f"{os.path.relpath(os.path.join(folder, name), root)}:{stat.st_size}:"
                         f"{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@functools.cache
def _package_stamp():
    # The tracer's own Python code decides what IR a kernel traces to: a checkout whose
    # python/metile was edited must not read IR an older tracer wrote (__version__ only
    # changes with a release).
    return source_stamp(os.path.dirname(os.path.abspath(__file__)))


def key(fingerprint, signature):
    from . import __version__

    text = (f"{fingerprint}\n{signature!r}\n{__version__}\n{_core_stamp()}\n"
            f"{_package_stamp()}")
    return hashlib.sha256(text.encode()).hexdigest()


# An entry is one header line, "metile-tir <key> <sha256 of the body>", then the IR text.
# The key and the checksum are verified on load: a damaged entry (bytes that are not UTF-8,
# a flipped digit, a truncation) or another kernel's entry under this name is a miss, is
# removed, and the kernel is traced again.
_MAGIC = "metile-tir"


def _path(folder, entry):
    return os.path.join(folder, entry + ".tir")


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def checked_body(data, magic, entry):
    """The text of an entry's bytes ("<magic> <entry> <sha256 of the body>", a newline, the
    body), or None when they are not that entry intact."""
    header, newline, body = data.partition(b"\n")
    words = header.split(b" ")
    if not newline or len(words) != 3 or words[0] != magic.encode():
        return None
    if words[1] != entry.encode() or words[2] != hashlib.sha256(body).hexdigest().encode():
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def checked_bytes(magic, entry, text):
    """What checked_body reads back: the header line with the checksum, then the text."""
    body = text.encode("utf-8")
    return f"{magic} {entry} {hashlib.sha256(body).hexdigest()}\n".encode() + body


def write_atomic(path, data):
    """Writes through a temporary file of this process and thread, then renames it: readers
    (other processes too) see the old file or the new one, never half of one."""
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, path)


def load(entry):
    """The cached Tile IR kernel for ``entry``, or None (then the caller traces again)."""
    folder = directory()
    if folder is None:
        return None
    path = _path(folder, entry)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None  # missing or unreadable
    text = checked_body(data, _MAGIC, entry)
    kernel = None
    if text is not None:
        try:
            kernel = _core.Kernel.parse(text, path)
        except _core.CompilationError:
            kernel = None
    if kernel is None or kernel.verify():
        _remove(path)
        return None
    return kernel


def store(entry, kernel):
    folder = directory()
    if folder is None:
        return
    try:
        os.makedirs(folder, exist_ok=True)
        write_atomic(_path(folder, entry), checked_bytes(_MAGIC, entry, kernel.print()))
    except OSError:
        pass  # a read-only cache directory only costs the next process a trace
