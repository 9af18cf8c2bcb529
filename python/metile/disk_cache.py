"""The on-disk cache of traced kernels: Tile IR text keyed by the kernel's source, the
values it reads from its globals and closure, the argument signature, the compiler
build and the tracer's own sources. A new process that launches the same kernel with the
same signature parses the IR instead of tracing (compiled objects are cached on disk by the
C++ core). Each entry carries its key and an HMAC-SHA256 of its text keyed by a per-user
secret, verified on load (see checked_body).

The cache lives in <cache root>/python-ir, beside the C++ core's compiled objects: the root
is METILE_CACHE_DIR, else $XDG_CACHE_HOME/metile, else ~/.cache/metile. METILE_TRACE_CACHE=off
turns it off.

Trust: metile creates the root and python-ir owner-only (0700), entries and the secret
(<cache root>/secret.key, 32 random bytes) owner-only (0600). A root or python-ir that is
not the user's own or that group or others may write, a secret others may read, or an entry
that is not the user's own, is writable by others or is a symbolic link is refused with an
UntrustedCacheWarning naming the path and the reason: the kernel is traced again (and an
untrusted folder is not written to). The C++ core's compiled objects (<cache root>/host
and /cuda, metile/runtime/disk_cache.h) are signed with the same secret and checked the
same way; what it refuses is raised here as an UntrustedCacheWarning too (core_warning).
"""

import errno
import functools
import hashlib
import hmac
import inspect
import os
import stat
import threading
import types
import warnings

from . import _core, captured
from .frames import user_location

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


class UntrustedCacheWarning(UserWarning):
    """A cache folder or entry that someone else could have written was not used."""


class _Untrusted(Exception):
    def __init__(self, path, reason):
        super().__init__(path, reason)
        self.path, self.reason = path, reason


_warned = set()  # (path, reason): each warned about once per process


def _warn_untrusted(untrusted, message=None):
    if (untrusted.path, untrusted.reason) in _warned:
        return
    _warned.add((untrusted.path, untrusted.reason))
    if message is None:
        message = (f"metile: the trace cache does not trust {untrusted.path}: "
                   f"{untrusted.reason}; the kernel is traced instead")
    file, line = user_location()  # the user's launch
    if file is None:
        warnings.warn(message, UntrustedCacheWarning, stacklevel=2)
    else:
        warnings.warn_explicit(message, UntrustedCacheWarning, file, line)


def core_warning(category, subject, reason, message):
    """A warning the C++ core reported while compiling (metile/support/warnings.h), raised
    here at the user's launch: "untrusted-cache" (the compiled-object cache under
    <cache root>/host or /cuda refused a folder or an entry, metile/runtime/disk_cache.h) is
    an UntrustedCacheWarning, once per path and reason in a process as the trace cache's
    own."""
    if category == "untrusted-cache":
        _warn_untrusted(_Untrusted(subject, reason), message)
    else:
        warnings.warn(message, RuntimeWarning, stacklevel=2)


_SECRET_NAME = "secret.key"
_SECRET_BYTES = 32
_secrets = {}  # path -> key, read once per process


def _check_owned(path, status, forbidden=0o022, allowed="write to"):
    """Raises _Untrusted unless ``status`` is the user's own and group and others have none
    of the ``forbidden`` permission bits."""
    user = os.geteuid()
    if status.st_uid != user:
        raise _Untrusted(path, f"it is owned by uid {status.st_uid}, not by this user (uid "
                               f"{user})")
    if status.st_mode & forbidden:
        raise _Untrusted(path, f"group or others may {allowed} it (mode "
                               f"{stat.S_IMODE(status.st_mode):o})")


def _private_directory(path):
    """``path``, created owner-only when missing; raises _Untrusted when it is not the
    user's own or others may write into it (then the user is told how to fix their own:
    metile does not change the permissions of a folder it did not make)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    status = os.stat(path)
    try:
        _check_owned(path, status)
    except _Untrusted as untrusted:
        if status.st_uid != os.geteuid():
            raise
        raise _Untrusted(path, f"{untrusted.reason}; make it owner-only (chmod 700 {path}) "
                               "to use the cache") from None
    return path


def trusted_directory():
    """The trace cache's folder, made and checked; None when the cache is off or its folder
    cannot be made. Raises _Untrusted for a folder someone else could write."""
    folder = directory()
    if folder is None:
        return None
    folder = os.path.abspath(folder)
    root = os.path.dirname(folder)
    try:
        os.makedirs(os.path.dirname(root), exist_ok=True)
        _private_directory(root)
        return _private_directory(folder)
    except OSError:
        return None  # cannot be made: no disk cache


def _read_private(path, status_check):
    """The bytes of a regular file at ``path`` (not through a symbolic link), after
    status_check(path, its status); None when it does not exist."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _Untrusted(path, "it is a symbolic link") from None
        raise
    with os.fdopen(descriptor, "rb") as f:
        status = os.fstat(f.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise _Untrusted(path, "it is not a regular file")
        status_check(path, status)
        return f.read()


def _check_secret(path, status):
    _check_owned(path, status, forbidden=0o077, allowed="read or write")


def _make_secret(path):
    """Writes a new secret, unless another process made one first."""
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    _remove(temporary)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as f:
        f.write(os.urandom(_SECRET_BYTES))
    try:
        os.link(temporary, path)  # atomic, and never replaces another process's secret
    except FileExistsError:
        pass
    except OSError:  # no hard links here: a racing process's entries are traced again
        os.replace(temporary, path)
    finally:
        _remove(temporary)


def secret(root):
    """The per-user key that signs cache entries: <root>/secret.key, made on first use.
    Raises _Untrusted when it is not the user's own, others may read it or it is no key."""
    path = os.path.join(root, _SECRET_NAME)
    key = _secrets.get(path)
    if key is None:
        key = _read_private(path, _check_secret)
        if key is None:
            _make_secret(path)
            key = _read_private(path, _check_secret)
        if key is None or len(key) != _SECRET_BYTES:
            raise _Untrusted(path, f"it is not a key of {_SECRET_BYTES} bytes (remove it to "
                                   "make a new one)")
        _secrets[path] = key
    return key


def _core_stamp():
    status = os.stat(_core.__file__)
    return f"{status.st_size}:{status.st_mtime_ns}"


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
    values = {name: fn.__globals__[name] for name in sorted(_code_names(fn.__code__))
              if name in fn.__globals__}
    values.update((name, cell.cell_contents)
                  for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    values.update(_module_attributes(fn.__code__, values))
    for name, value in values.items():
        printed = _value_print(value, seen)
        if printed is None:
            return None
        parts.append(f"{name}={printed}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _module_attributes(code, values):
    """{"module.name": value} for the attributes ``code`` reads off the user's own modules
    among ``values`` (a helper in another file of the program)."""
    _, attributes = captured.code_reads(code)
    found = {}
    for base, attribute in sorted(attributes):
        module = values.get(base)
        if isinstance(module, types.ModuleType) and not captured.is_library(module):
            found[f"{base}.{attribute}"] = getattr(module, attribute, None)
    return found


def source_stamp(root):
    """A hash of the path, size and modification time of every Python file under ``root``."""
    parts = []
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            status = os.stat(os.path.join(folder, name))
            parts.append(f"{os.path.relpath(os.path.join(folder, name), root)}:"
                         f"{status.st_size}:{status.st_mtime_ns}")
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


def _digest(body, key):
    """The body's SHA-256, or its HMAC-SHA256 under ``key``."""
    if key is None:
        return hashlib.sha256(body).hexdigest()
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def checked_body(data, magic, entry, key=None):
    """The text of an entry's bytes ("<magic> <entry> <digest of the body>", a newline, the
    body), or None when they are not that entry intact (the digest: see _digest)."""
    header, newline, body = data.partition(b"\n")
    words = header.split(b" ")
    if not newline or len(words) != 3 or words[0] != magic.encode():
        return None
    if words[1] != entry.encode() or not hmac.compare_digest(
            words[2], _digest(body, key).encode()):
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def checked_bytes(magic, entry, text, key=None):
    """What checked_body reads back: the header line with the digest, then the text."""
    body = text.encode("utf-8")
    return f"{magic} {entry} {_digest(body, key)}\n".encode() + body


def write_atomic(path, data):
    """Writes through a temporary file of this process and thread, owner-only, then renames
    it: readers (other processes too) see the old file or the new one, never half of one."""
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    _remove(temporary)  # a leftover of a dead process with this pid, or a planted link
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as f:
        f.write(data)
    os.replace(temporary, path)


def _read_entry(folder, entry):
    """The Tile IR kernel stored as ``entry``, or None: missing, damaged or forged (then
    removed). Raises _Untrusted for an entry someone else could have written."""
    path = _path(folder, entry)
    data = _read_private(path, _check_owned)
    if data is None:
        return None
    text = checked_body(data, _MAGIC, entry, secret(os.path.dirname(folder)))
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


def load(entry):
    """The cached Tile IR kernel for ``entry``, or None (then the caller traces again); an
    untrusted folder or entry is warned about, and the entry removed."""
    try:
        folder = trusted_directory()
        return None if folder is None else _read_entry(folder, entry)
    except _Untrusted as untrusted:
        _warn_untrusted(untrusted)
        if untrusted.path.endswith(".tir"):
            _remove(untrusted.path)
        return None
    except OSError:
        return None  # unreadable


def store(entry, kernel):
    try:
        folder = trusted_directory()
        if folder is None:
            return
        key = secret(os.path.dirname(folder))
        write_atomic(_path(folder, entry), checked_bytes(_MAGIC, entry, kernel.print(), key))
    except _Untrusted as untrusted:
        _warn_untrusted(untrusted)
    except OSError:
        pass  # a read-only cache only costs the next process a trace
