"""Launching: ``kernel[grid](*args, **constexprs)`` and ``kernel[grid].prepare(...)``.

grid is a tuple of up to three program counts (or one int), or a callable receiving the
arguments by name (constexprs included) and returning one. prepare() returns a Dispatch
bound to its arguments: call it to launch, time() for the device time of one launch,
explain() for the execution report.

A launch whose buffers are all GPU memory the caller owns (torch CUDA tensors,
__cuda_array_interface__ or CUDA DLPack objects) is asynchronous, as Triton's are: it is
queued on the caller's stream and returns. Any numpy array or metile.Buffer makes it wait:
caller memory is copied in and back, and a Buffer is read with host copies. synchronize()
waits for the device and raises the fault of a launch that did not wait.
"""

import atexit
import copy

import numpy as np

from . import _core
from .buffer import Buffer, GpuArray, launch_gpu
from .reports import Reports


def _grid(grid, kernel, values):
    if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and grid[0] >= 0:
        return (grid[0], 1, 1)  # the common 1-D grid, without the general checks below
    if callable(grid):
        grid = grid({p.name: v for p, v in zip(kernel.params, values)})
    grid = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    if not 1 <= len(grid) <= 3 or not all(isinstance(g, (int, np.integer)) and g >= 0 for g in grid):
        raise ValueError(f"{kernel.name}: the grid is 1 to 3 non-negative program counts, got {grid!r}")
    return tuple(int(g) for g in grid) + (1,) * (3 - len(grid))


# GPU memory the caller owns, wrapped for launches: (device, GPU, address, bytes, dtype,
# shape) -> _core.DeviceBuffer. A wrap only names memory (meTile never frees it), so one made
# for a tensor serves every later launch of memory with the same GPU, address and layout, as
# a decode loop's tensors have; the cache is emptied when it fills and at exit. Memory whose
# GPU its producer does not name is wrapped afresh: its address may be another GPU's later.
_WRAPPED = {}
_WRAPPED_LIMIT = 4096


def _wrapped(device, gpu, nbytes):
    if gpu.gpu is None:
        return _core.DeviceBuffer.wrap(device, gpu.address, nbytes, gpu.dtype, list(gpu.shape))
    key = (device, gpu.gpu, gpu.address, nbytes, gpu.dtype, gpu.shape)
    buffer = _WRAPPED.get(key)
    if buffer is None:
        if len(_WRAPPED) >= _WRAPPED_LIMIT:
            _WRAPPED.clear()
        buffer = _WRAPPED[key] = _core.DeviceBuffer.wrap(device, gpu.address, nbytes, gpu.dtype,
                                                         list(gpu.shape))
    return buffer


def storage_extent(gpu):
    """The bytes a bounds-checked kernel (METILE_DEBUG=bounds) may touch from a GPU argument's
    address: to the end of its storage for a torch tensor (a view's neighbours in the same
    storage are the caller's memory, as compute-sanitizer sees them), its own bytes for
    memory whose producer does not say where its allocation ends."""
    owner = gpu.owner
    storage = getattr(owner, "untyped_storage", None)
    if storage is None or not gpu.nbytes:
        return gpu.nbytes
    return storage().nbytes() - owner.storage_offset() * owner.element_size()


atexit.register(_WRAPPED.clear)


class _Staged:
    """A numpy view that is not C-contiguous, passed through a contiguous copy (the launch
    copies caller memory to the device and back, but needs it contiguous)."""

    __slots__ = ("original", "contiguous", "written")

    def __init__(self, original, written):
        self.original, self.written = original, written
        self.contiguous = np.ascontiguousarray(original)


class Dispatch(Reports):
    """A kernel bound to its grid and arguments. Call it to launch (again and again).
    schedule_plan, execution_report and explain() report what it runs (reports.py)."""

    def __init__(self, kernel, specialisation, grid, runtime):
        self.kernel_name = kernel.name
        self._specialisation = specialisation
        self.grid = grid
        self._compiled = specialisation.compiled  # what a launch runs
        self._reported = specialisation.compiled  # what the reports describe
        self._args, self._staged, self._keep = [], [], []
        self._stream = None  # the GPU arguments' owner's current stream, read per launch
        device = specialisation.compiled.device
        bounds_checks = specialisation.compiled.bounds_checks  # extents to storage ends
        owned_buffers = False
        on_gpu, in_host_memory = [], []  # (name, GPU ordinal or None, bytes); names
        for (name, kind, dtype, value, address), written in zip(runtime, specialisation.writes):
            if kind == "scalar":
                self._args.append(float(value) if dtype == "f32" else int(value))
                continue
            if isinstance(value, Buffer):
                self._args.append(value.device_buffer)
                owned_buffers = True
                continue
            if isinstance(value, GpuArray):
                if device != "cuda":
                    raise TypeError(f"{kernel.name}: argument '{name}' is GPU memory (a "
                                    f"{value.origin}), but the kernel runs on the {device} "
                                    f"device (metile.device() == '{device}')")
                nbytes = storage_extent(value) if bounds_checks else value.nbytes
                self._args.append(_wrapped(device, value, nbytes))
                self._keep.append(value.owner)
                self._stream = self._stream or value.stream
                on_gpu.append((name, value.gpu, value.nbytes))
                continue
            in_host_memory.append(name)
            if written and not value.flags.writeable:
                raise ValueError(f"{kernel.name}: a read-only numpy array is passed to a buffer "
                                 "the kernel writes")
            if address is None:  # a view that is not C-contiguous (kernel.signature)
                staged = _Staged(value, written)
                self._staged.append(staged)
                value = staged.contiguous
                address = value.ctypes.data
            self._args.append(_core.BufferView(address, value.nbytes, dtype))
            self._keep.append(value)  # the memory must outlive the dispatch
        if on_gpu and in_host_memory:
            places = ", ".join(f"{name!r} on " + (f"cuda:{gpu}" if gpu is not None else "a GPU")
                               for name, gpu, _ in on_gpu)
            raise TypeError(f"{kernel.name}: arguments {', '.join(map(repr, in_host_memory))} "
                            f"are host memory (on the CPU) and "
                            f"{', '.join(repr(name) for name, _, _ in on_gpu)} GPU memory "
                            f"({places}); pass all of them on the GPU (or metile.Buffer)")
        # The GPU that holds the arguments runs the launch, on torch's current stream there.
        self.gpu = launch_gpu(kernel.name, on_gpu)
        # Only GPU memory the caller owns: the launch is queued and returns at once.
        self.asynchronous = bool(on_gpu) and not owned_buffers

    def __call__(self):
        """Launches the kernel: queued on the caller's stream when every buffer is GPU
        memory the caller owns (asynchronous), else run to the end, staged views copied in
        and back."""
        if self._staged or not all(self.grid):
            self._launch(wait=not self.asynchronous)
            return
        # _launch's steps without the staged copies: the whole Python cost of a prepared
        # dispatch, as a decode loop makes it.
        self._compiled.launch(self.grid, self._args, self._stream() if self._stream else 0,
                              not self.asynchronous)

    def time(self):
        """Launches the kernel once and waits for it: the device's milliseconds from its
        start to its end (CUDA events around it on the cuda device, the wall clock on the
        host device); 0.0 for an empty grid, which launches nothing."""
        return self._launch(wait=True) or 0.0

    def _launch(self, wait):
        for staged in self._staged:
            np.copyto(staged.contiguous, staged.original)
        elapsed_ms = None
        if all(self.grid):
            stream = self._stream() if self._stream else 0
            elapsed_ms = self._compiled.launch(self.grid, self._args, stream, wait)
        for staged in self._staged:
            if staged.written:
                np.copyto(staged.original, staged.contiguous)
        return elapsed_ms

    def with_kernel(self, built):
        """This dispatch (its grid, arguments and stream) launching `built` instead: a
        _core.BuiltKernel of the same kernel from another source, e.g. another meTile
        tree's (benchmarks/regression). Its parameters must have the same names, kinds and
        dtypes in the same order, and it must be built on the same device."""
        if built.device != self._compiled.device:
            raise ValueError(f"{self.kernel_name}: the built kernel is on the '{built.device}' "
                             f"device; this dispatch's arguments are bound for "
                             f"'{self._compiled.device}'")

        def signature(abi):
            return [(p["name"], p["kind"], p["dtype"]) for p in abi["params"]]

        ours, theirs = signature(self._compiled.abi), signature(built.abi)
        if ours != theirs:
            raise ValueError(f"{self.kernel_name}: the built kernel '{built.name}' takes "
                             f"{theirs}, this dispatch binds {ours}")
        other = copy.copy(self)
        other._compiled = built
        return other

    @property
    def source(self):
        """The emitted source (MSL; CUDA C++ on the cuda device) that a launch runs."""
        return self._compiled.source

    @property
    def abi(self):
        """The KernelABI of what a launch runs, as a dict (params, threads_per_threadgroup,
        threadgroup_bytes, grid_rule, and sm90's tensor_maps and persistent tiles, docs/hopper.md),
        which _core.build_kernel takes back."""
        return self._compiled.abi

    @property
    def tile_ir(self):
        """The traced Tile IR, as text."""
        return self._specialisation.tile_ir.print()


class BoundKernel:
    """``kernel[grid]``: call it to launch, or prepare() a reusable Dispatch."""

    __slots__ = ("kernel", "grid")

    def __init__(self, kernel, grid):
        self.kernel, self.grid = kernel, grid

    def prepare(self, *args, **kwargs):
        """Traces and compiles (or finds in the cache) and binds the arguments."""
        values, options = self.kernel.bind(args, kwargs)
        specialisation, runtime = self.kernel.specialise(values, options)
        return Dispatch(self.kernel, specialisation, _grid(self.grid, self.kernel, values), runtime)

    def __call__(self, *args, **kwargs):
        kernel = self.kernel
        values, options = kernel.bind(args, kwargs)
        specialisation, runtime = kernel.specialise(values, options)
        Dispatch(kernel, specialisation, _grid(self.grid, kernel, values), runtime)()


def synchronize(device=None):
    """Waits until every kernel launched on the default device finished (cuCtxSynchronize
    of every GPU meTile used on the cuda device; nothing to wait for on the host device),
    or only those of one GPU: ``device`` an ordinal, ``"cuda:1"`` or a torch.device (a
    device name, ``"cuda"`` or ``"host"``, waits for that device). A kernel fault of an
    asynchronous launch is raised here (or at the next launch or copy that waits) as a
    metile.KernelFaultError naming the last kernel launched."""
    name, gpu = _device_and_gpu(device)
    _core.synchronize(name, gpu)


def _device_and_gpu(device):
    """(device name, GPU ordinal or -1 for all) of synchronize()'s ``device``."""
    if device is None:
        return "", -1
    if isinstance(device, bool) or not isinstance(device, (int, str)):
        kind, index = getattr(device, "type", None), getattr(device, "index", None)
        if kind is None:  # not a torch.device either
            raise TypeError(f"synchronize: device is an ordinal, a name such as 'cuda:1' or a "
                            f"torch.device, not {type(device).__name__}")
        return kind, -1 if index is None else int(index)
    if isinstance(device, int):
        return "cuda", device
    name, _, index = device.partition(":")
    if index and not index.isdigit():
        raise ValueError(f"synchronize: '{device}' is not a device name ('cuda', 'cuda:1')")
    return name, int(index) if index else -1
