"""@metile.kernel: a Python function traced into Tile IR, specialised per signature.

A specialisation is keyed by the runtime arguments' kinds and dtypes, the constexpr values
and the compile options (under a SCHEDULE, integer scalar values too); each is traced and
compiled once per process (and its traced IR is reused across processes through
disk_cache). ``stats`` counts traces, compiles and cache hits.
"""

import atexit
import functools
import inspect
import os
import weakref
from dataclasses import dataclass

import numpy as np

from . import _core, disk_cache, loops, source_rewrite
from .buffer import GpuArray, array_address, describe
from .captured import CapturedValues
from .dtypes import _FROM_NUMPY, NAMES
from .errors import CompilationError, user_error
from .launch import BoundKernel
from .schedule import Schedule
from .tracing import Trace, activate, active_trace, body_failure
from .values import Value

OPTIONS = ("STRICT_MATH", "RELAXED_PRECISION", "SCHEDULE", "num_warps", "num_stages")
# Kernel attributes the compiler reads: num_warps becomes num_threads, num_stages
# pipeline_stages (prefetch_dot_operands reads it).
_RESERVED_CONSTEXPRS = ("num_threads", "pipeline_stages")
_UNSUPPORTED_OPTIONS = {
    "num_ctas": "thread-block clusters are not supported",
    "maxnreg": "register limits are not supported",
}
# Triton's launch options at the value that asks for nothing: accepted and dropped.
_DEFAULT_OPTIONS = {"num_ctas": 1}
SIMD_WIDTH = 32  # threads per warp (SIMD group) on every meTile target
_MISSING = object()


class constexpr:
    """Annotation of a kernel parameter whose value is known when the kernel is compiled
    (``BLOCK: metile.constexpr``). Each value gives its own specialisation; Python control
    flow may depend on it. Called with a value, as Triton's module constants are written
    (``_MODE_SUM = tl.constexpr(1)``), it is that value: a kernel reads it as a Python
    constant."""

    def __new__(cls, *value):
        if len(value) > 1:
            raise TypeError(f"constexpr takes one value, got {len(value)}")
        return value[0] if value else super().__new__(cls)


def _is_constexpr(annotation):
    if annotation is constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


@dataclass
class CacheStats:
    traces: int = 0  # Python bodies run by the tracer
    disk_hits: int = 0  # traced IR read from the disk cache instead
    compiles: int = 0  # calls of the C++ compile()
    hits: int = 0  # launches served by the in-process cache


@dataclass
class Param:
    name: str
    constexpr: bool
    keyword_only: bool
    default: object


class BufferArg:
    """A buffer argument as a num_threads callable sees it: its element dtype only (the
    specialisation's; addresses and sizes are runtime values)."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"BufferArg(dtype={self.dtype!r})"


@dataclass
class Specialisation:
    tile_ir: object  # _core.Kernel, as traced
    compiled: object  # _core.CompiledKernel
    writes: tuple  # per runtime argument: whether the kernel writes it


def _math_mode(options):
    strict = bool(options.get("STRICT_MATH", False))
    relaxed = bool(options.get("RELAXED_PRECISION", False))
    if strict and relaxed:
        raise ValueError("STRICT_MATH and RELAXED_PRECISION cannot both be True")
    return "strict" if strict else ("relaxed" if relaxed else "default")


def _schedule(options):
    """The launch's SCHEDULE (a metile.Schedule), or None when it is omitted."""
    schedule = (options or {}).get("SCHEDULE")
    if schedule is not None and not isinstance(schedule, Schedule):
        raise TypeError(f"SCHEDULE must be a metile.Schedule or None, got {type(schedule).__name__}")
    return schedule


# Triton's divisibility specialisation: the power of two an integer argument, or a GPU
# buffer's address, is checked to be a multiple of.
DIVISIBILITY = 16
_NONE = ("none",)
# The signature entries of the common scalars, built once.
_I32, _F32 = ("scalar", "i32"), ("scalar", "f32")
_I32_ONE = ("scalar", "i32", "specialised", 1)
_I32_DIVISIBLE = ("scalar", "i32", "divisibility", DIVISIBILITY)


def _scalar_entry(dtype, value, specialise):
    """The signature entry of a scalar argument: any Schedule specialises an integer to its
    value; without one, an integer equal to 1 is specialised, as Triton does (a unit stride
    makes neighbouring addresses provably consecutive), and so is whether an integer (not a
    bool) is a multiple of 16 (Triton's divisibility)."""
    if dtype[0] not in "iu":
        return ("scalar", dtype)
    if specialise or int(value) == 1:
        return ("scalar", dtype, "specialised", int(value))
    if dtype != "i1" and int(value) % DIVISIBILITY == 0:
        return ("scalar", dtype, "divisibility", DIVISIBILITY)
    return ("scalar", dtype)


def _buffer_entry(dtype, address):
    """The signature entry of a buffer at `address` (None: not known to the launch, as for a
    metile.Buffer or a numpy view copied to the device): whether it is a multiple of 16, as
    Triton's divisibility records for GPU buffers (vector accesses of rows a multiple of 16
    apart are aligned without a test at run time)."""
    if address is not None and address % DIVISIBILITY == 0:
        return ("buffer", dtype, "divisibility", DIVISIBILITY)
    return ("buffer", dtype)


# dtype -> (its buffer entry, its entry at an address that is a multiple of 16).
_BUFFER_ENTRIES = {dtype: (_buffer_entry(dtype, None), _buffer_entry(dtype, 0))
                   for dtype in NAMES}


def _divisibility(spec):
    """The divisibility a signature entry records for its parameter (1: none)."""
    return spec[3] if spec[2:3] == ("divisibility",) else 1


def _constexpr_key(name, value):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"constexpr '{name}' must be hashable, got {type(value).__name__}") from None
    return ("constexpr", type(value).__name__, value)


def _threads_of_warps(name, num_warps):
    if not isinstance(num_warps, int) or isinstance(num_warps, bool) or num_warps <= 0 or (
            num_warps & (num_warps - 1)):
        raise ValueError(f"{name}: num_warps must be a positive power of two (it maps to "
                         f"num_warps * {SIMD_WIDTH} threads per threadgroup), got {num_warps!r}")
    return num_warps * SIMD_WIDTH


# Every KernelFunction, so that their caches of _core objects are dropped at exit: a kernel
# that something outside meTile keeps alive through interpreter shutdown (torch.compile's
# guards, an extension's static storage) would otherwise hold its compiled kernels past
# the bindings' teardown, which nanobind reports as leaked instances, types and functions.
_LIVE_KERNELS = weakref.WeakSet()


@atexit.register
def _release_caches():
    for kernel in list(_LIVE_KERNELS):
        kernel._cache.clear()
        kernel._traced.clear()


class KernelFunction:
    """A kernel: launch it with ``kernel[grid](*args, **constexprs_and_options)``. Called
    from another kernel while it is traced, it runs inline as a helper (like a Triton
    @jit function called from a kernel)."""

    def __init__(self, fn, num_threads=None, num_warps=None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        if num_warps is not None:
            if num_threads is not None:
                raise TypeError(f"@metile.kernel {fn.__name__}: give num_threads or num_warps, "
                                "not both")
            num_threads = _threads_of_warps(fn.__name__, num_warps)
        self.num_threads = num_threads
        self.name = fn.__name__
        self._captured = None  # CapturedValues, recorded when first compiled
        self.params = []
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"@metile.kernel {self.name}: *args and **kwargs are not supported")
            # A parameter may share Triton's launch option's name (the softmax tutorial's
            # num_stages constexpr): the argument then binds it.
            if (p.name in OPTIONS and p.name != "num_stages") or p.name in _RESERVED_CONSTEXPRS:
                raise TypeError(f"@metile.kernel {self.name}: parameter name '{p.name}' is reserved")
            self.params.append(Param(p.name, _is_constexpr(p.annotation),
                                     p.kind == p.KEYWORD_ONLY,
                                     _MISSING if p.default is p.empty else p.default))
        self._index = {p.name: i for i, p in enumerate(self.params)}
        self.runtime_names = tuple(p.name for p in self.params if not p.constexpr)
        self._positional = sum(not p.keyword_only for p in self.params)
        self._heuristics = {}  # parameter -> fn(named arguments), in order (heuristics())
        self._rewritten = None
        self._fingerprint = _MISSING
        # (signature, math mode, Schedule or None, bounds checks) -> Specialisation
        self._cache = {}
        self._traced = {}  # signature -> traced Tile IR (shared by the math modes)
        self.stats = CacheStats()
        _LIVE_KERNELS.add(self)

    def __getitem__(self, grid):
        return BoundKernel(self, grid)

    def __call__(self, *args, **kwargs):
        if active_trace() is None:
            raise TypeError(f"launch the kernel with {self.name}[grid](...); called directly, "
                            "a kernel runs only as a helper inside another kernel being traced")
        if self._rewritten is None:
            self._rewritten = source_rewrite.rewrite(self.fn, loops)
        return self._rewritten(*args, **kwargs)

    def __repr__(self):
        return f"<metile.kernel {self.name}>"

    # ---- arguments --------------------------------------------------------------------
    def bind(self, args, kwargs):
        """(one value per parameter, the options) from a call's arguments."""
        if len(args) > self._positional:
            raise TypeError(f"{self.name}() takes {self._positional} positional arguments but "
                            f"{len(args)} were given")
        values = list(args)
        missing = len(self.params) - len(values)
        if missing:
            values += [_MISSING] * missing
        options = {}
        for name, value in kwargs.items():
            # A parameter named like a Triton launch option (the softmax tutorial's constexpr
            # num_stages) is the kernel's argument.
            index = self._index.get(name)
            if index is None:
                self._bind_option(name, value, options)
                continue
            if values[index] is not _MISSING:
                raise TypeError(f"{self.name}() got multiple values for argument '{name}'")
            values[index] = value
            missing -= 1
        if not missing:  # every parameter given: no default and no heuristic to apply
            return values, options
        for i, p in enumerate(self.params):
            if values[i] is _MISSING and p.name not in self._heuristics:
                if p.default is _MISSING:
                    raise TypeError(f"{self.name}() missing argument '{p.name}'")
                values[i] = p.default
        for name, rule in self._heuristics.items():  # Triton's order: each sees the ones before
            index = self._index[name]
            if values[index] is _MISSING:
                named = {p.name: v for p, v in zip(self.params, values) if v is not _MISSING}
                values[index] = rule(named)
        return values, options

    def _bind_option(self, name, value, options):
        """A keyword that names no parameter: a launch option into `options`, Triton's option
        at its default dropped, anything else a TypeError."""
        if name in _DEFAULT_OPTIONS and _DEFAULT_OPTIONS[name] == value:
            return
        if name in _UNSUPPORTED_OPTIONS:
            raise TypeError(f"{self.name}(): the Triton launch option '{name}' is not "
                            f"supported ({_UNSUPPORTED_OPTIONS[name]}); omit it")
        if name not in OPTIONS:
            raise TypeError(f"{self.name}() got an unexpected keyword argument '{name}' (not "
                            f"a parameter, nor one of the options {', '.join(OPTIONS)})")
        options[name] = value

    def signature(self, values, options=None):
        """The specialisation signature, and the runtime arguments as (name, kind, dtype,
        value, address): address is a C-contiguous numpy array's, else None."""
        signature, runtime = [], []
        # Any Schedule specialises integer scalars to their values (the shape proofs' inputs).
        specialise = bool(options) and _schedule(options) is not None
        for p, value in zip(self.params, values):
            if p.constexpr:
                signature.append(_constexpr_key(p.name, value))
                continue
            if value is None:
                # As in Triton, None is a constexpr: the kernel sees None (an optional bias
                # pointer tested with `is not None` or a heuristic) and takes no argument.
                signature.append(_NONE)
                continue
            # The common arguments by one type test each, with describe()'s results and the
            # entries _buffer_entry and _scalar_entry would make.
            cls = type(value)
            if cls is np.ndarray:
                dtype = _FROM_NUMPY.get(value.dtype)
                if dtype is not None and value.flags.c_contiguous:
                    address = array_address(value)
                    signature.append(_BUFFER_ENTRIES[dtype][address % DIVISIBILITY == 0])
                    runtime.append((p.name, "buffer", dtype, value, address))
                    continue
            elif cls is int and not specialise:
                signature.append(_I32_ONE if value == 1 else
                                 _I32_DIVISIBLE if value % DIVISIBILITY == 0 else _I32)
                runtime.append((p.name, "scalar", "i32", value, None))
                continue
            elif cls is float:
                signature.append(_F32)
                runtime.append((p.name, "scalar", "f32", value, None))
                continue
            kind, dtype, value = describe(value, p.name)
            address = None
            if kind == "scalar":
                spec = _scalar_entry(dtype, value, specialise)
            elif isinstance(value, GpuArray):
                spec = _BUFFER_ENTRIES[dtype][value.address % DIVISIBILITY == 0]
            elif isinstance(value, np.ndarray) and value.flags.c_contiguous:
                # In place on the host device, copied into an aligned allocation on the GPU.
                address = array_address(value)
                spec = _buffer_entry(dtype, address)
            else:
                spec = _buffer_entry(dtype, None)
            signature.append(spec)
            runtime.append((p.name, kind, dtype, value, address))
        if not options:
            return tuple(signature), runtime
        stages = options.get("num_stages")
        if stages is not None:  # after the parameters' entries, which _trace zips with them
            if not isinstance(stages, int) or isinstance(stages, bool) or stages < 1:
                raise ValueError(f"{self.name}: num_stages must be a positive int, got "
                                 f"{stages!r}")
            signature.append(("num_stages", stages))
        warps = options.get("num_warps")
        if warps is not None:  # after the parameters' entries, which _trace zips with them
            threads = _threads_of_warps(self.name, warps)
            if self.num_threads is not None and not callable(self.num_threads) and (
                    threads != self.num_threads):
                raise ValueError(f"{self.name}: num_warps={warps} asks for {threads} threads, "
                                 f"but the kernel is declared with {self.num_threads}")
            signature.append(("num_threads", threads))
        return tuple(signature), runtime

    # ---- tracing ------------------------------------------------------------------------
    def trace(self, *args, **kwargs):
        """The Tile IR this kernel traces to for these arguments (no compilation)."""
        values, options = self.bind(args, kwargs)
        signature, _ = self.signature(values, options)
        return self._trace(signature, values)

    def _trace(self, signature, values):
        if self._rewritten is None:
            self._rewritten = source_rewrite.rewrite(self.fn, loops)
        self.stats.traces += 1
        trace = Trace(self.name)
        code = self.fn.__code__
        args, kwargs = [], {}
        with activate(trace):
            trace.core.set_location(code.co_filename, code.co_firstlineno)
            threads = self.num_threads
            for key in signature:
                if key[0] == "num_threads":
                    threads = key[1]
                if key[0] == "num_stages":
                    trace.core.set_attr_int("pipeline_stages", key[1])
            if callable(threads):
                threads = self._threads_of_callable(threads, signature, values)
            if threads is not None:
                trace.core.set_num_threads(int(threads))
            # Every argument's divisibility is checked below: a parameter without the fact is
            # known not to have it (plan_schedule's TMA rule reads this).
            trace.core.set_attr_int("divisibility_checked", 1)
            runtime_index = 0
            for p, spec, value in zip(self.params, signature, values):
                if spec == ("none",):
                    proxy = None
                elif p.constexpr:
                    proxy = value
                    if isinstance(value, (bool, int)):
                        trace.core.set_attr_int(p.name, int(value))
                    elif isinstance(value, float):
                        trace.core.set_attr_float(p.name, value)
                    elif isinstance(value, _core.ThreadLayout):
                        trace.core.set_attr_layout(p.name, value)
                elif spec[0] == "buffer":
                    proxy = Value(trace, trace.core.add_buffer(p.name, spec[1], _divisibility(spec)))
                    runtime_index += 1
                else:
                    proxy = Value(trace, trace.core.add_scalar(p.name, spec[1], _divisibility(spec)))
                    if spec[2:3] == ("specialised",):  # ("scalar", dtype, "specialised", value)
                        proxy = Value(trace, trace.core.constant_int(spec[3], spec[1]))
                    runtime_index += 1
                if p.keyword_only:
                    kwargs[p.name] = proxy
                else:
                    args.append(proxy)
            try:
                result = self._rewritten(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 -- body_failure picks the user's failures
                failure = body_failure(e, self.name)
                if failure is None:
                    raise
                raise failure from None
            if result is not None:
                raise user_error(f"{self.name}: a kernel returns nothing; store its results "
                                 "into buffers", (code.co_filename, code.co_firstlineno))
            return trace.finish()

    def _threads_of_callable(self, rule, signature, values):
        """num_threads=callable: called with the constexprs by name and each buffer as a
        BufferArg (its dtype); an int fixes the threads, None leaves them to the compiler."""
        arguments = {}
        for p, spec, value in zip(self.params, signature, values):
            if p.constexpr:
                arguments[p.name] = value
            elif spec[0] == "buffer":
                arguments[p.name] = BufferArg(spec[1])
        threads = rule(arguments)
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool)
                                    or threads <= 0):
            raise TypeError(f"{self.name}: its num_threads callable returned {threads!r}; it "
                            "must return a positive int, or None for the compiler's plan")
        return threads

    def compile(self, *args, **kwargs):
        """Compiles (or finds in the cache) the specialisation for these arguments, as a
        launch would, without launching: a metile.CompiledKernel with source, abi,
        schedule_plan, execution_report and explain()."""
        from .reports import CompiledKernel

        values, options = self.bind(args, kwargs)
        specialisation, _ = self.specialise(values, options)
        return CompiledKernel(specialisation.compiled)

    # ---- specialisations ------------------------------------------------------------------
    def _check_captured(self):
        """Raises when a global, closure value or helper the kernel read has changed since
        it was traced (captured.py)."""
        if self._captured is not None:
            self._captured.check(self.name)

    def _traced_ir(self, signature, values):
        """The Tile IR for a signature: already traced, from the disk cache, or traced now."""
        if signature in self._traced:
            return self._traced[signature]
        self._traced[signature] = kernel = self._load_or_trace(signature, values)
        # Recorded as the trace left them: tracing may fill a helper's memo.
        self._captured = CapturedValues(self.fn)
        return kernel

    def _disk_fingerprint(self):
        """The function's fingerprint with the declared thread count, which the traced IR
        records (two kernels of one function with different num_warps are different IR);
        None when either cannot be printed stably."""
        body = disk_cache.function_fingerprint(self.fn)
        threads = self.num_threads
        if callable(threads):
            threads = disk_cache.function_fingerprint(threads)
            if threads is None:
                return None
        return None if body is None else f"{body}\nnum_threads={threads}"

    def _load_or_trace(self, signature, values):
        if self._fingerprint is _MISSING:
            self._fingerprint = self._disk_fingerprint()
        entry = None
        if self._fingerprint is not None:
            entry = disk_cache.key(self._fingerprint, signature)
            kernel = disk_cache.load(entry)
            if kernel is not None:
                self.stats.disk_hits += 1
                return kernel
        kernel = self._trace(signature, values)
        if entry is not None:
            disk_cache.store(entry, kernel)
        return kernel

    def specialise(self, values, options):
        """The compiled specialisation for bound values, and the runtime arguments."""
        self._check_captured()
        signature, runtime = self.signature(values, options)
        if options:
            math, schedule = _math_mode(options), _schedule(options)
        else:
            math, schedule = "default", None
        bounds = bounds_checks_requested()
        key = (signature, math, schedule, bounds)
        found = self._cache.get(key)
        if found is not None:
            self.stats.hits += 1
            return found, runtime
        tile_ir = self._traced_ir(signature, values)
        self.stats.compiles += 1
        try:
            compiled = _core.compile(tile_ir, _core.default_device(), math,
                                     schedule._checked if schedule else None, bounds)
        except CompilationError as e:
            warps = options.get("num_warps")
            if warps is None or "num_threads =" not in str(e):
                raise
            raise type(e)(f"num_warps={warps} ({warps} x {SIMD_WIDTH} threads) cannot be "
                          f"met: {e}") from None
        writes = tuple("write" in p["access"] for p in compiled.abi["params"])
        found = Specialisation(tile_ir, compiled, writes)
        self._cache[key] = found
        return found, runtime


def bounds_checks_requested():
    """Whether METILE_DEBUG names ``bounds``: kernels compiled for CUDA then check every device
    access against its buffer's extent (docs/reliability.md). Read at each launch, so that a
    bounds-checked build and a normal one are separate specialisations."""
    value = os.environ.get("METILE_DEBUG")
    return bool(value) and "bounds" in value.split(",")


def heuristics(values):
    """Triton's ``@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})``,
    above @metile.kernel (and below @metile.autotune, whose configuration's values it sees):
    at each launch, each named parameter the call does not give is the value of its function
    of the arguments by name, computed in order (a later one sees the earlier ones)."""
    values = dict(values)

    def decorate(kernel):
        if not isinstance(kernel, KernelFunction):
            raise TypeError("metile.heuristics wraps a @metile.kernel (put @metile.heuristics "
                            "above @metile.kernel)")
        for name, rule in values.items():
            if name not in kernel._index:
                raise ValueError(f"metile.heuristics: '{name}' is not a parameter of "
                                 f"{kernel.name}")
            if not callable(rule):
                raise TypeError(f"metile.heuristics: the rule for '{name}' is not callable")
        kernel._heuristics.update(values)
        return kernel

    return decorate


def kernel(fn=None, *, num_threads=None, num_warps=None):
    """Decorator: ``@metile.kernel`` makes a Python function a meTile kernel (Triton's
    ``@triton.jit``, also spelled ``metile.jit``).

    ``@metile.kernel(num_threads=N)`` fixes the threads per threadgroup for kernels that
    index threads with thread_id() or that know better than the compiler's plan. N is an
    int, or a callable of one dict: the constexprs by name and each buffer argument as a
    BufferArg with its dtype (Triton's heuristics see the arguments so), returning an int
    or None (the compiler's plan). ``num_warps=W`` is the same as ``num_threads=32 * W``
    (also a launch option); otherwise the compiler derives it from the kernel's tiles."""
    if fn is None:
        return lambda f: KernelFunction(f, num_threads, num_warps)
    return KernelFunction(fn, num_threads, num_warps)


jit = kernel
