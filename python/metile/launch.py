"""Launching: ``kernel[grid](*args, **constexprs)`` and ``kernel[grid].prepare(...)``.

grid is a tuple of up to three program counts (or one int), or a callable receiving the
arguments by name (constexprs included) and returning one. prepare() returns a Dispatch
bound to its arguments: call it to launch, explain() for the execution report.
"""

import json

import numpy as np

from . import _core
from .buffer import Buffer, GpuArray


def _grid(grid, kernel, values):
    if callable(grid):
        grid = grid({p.name: v for p, v in zip(kernel.params, values)})
    grid = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    if not 1 <= len(grid) <= 3 or not all(isinstance(g, (int, np.integer)) and g >= 0 for g in grid):
        raise ValueError(f"{kernel.name}: the grid is 1 to 3 non-negative program counts, got {grid!r}")
    return tuple(int(g) for g in grid) + (1,) * (3 - len(grid))


class _Staged:
    """A numpy view that is not C-contiguous, passed through a contiguous copy (the launch
    copies caller memory to the device and back, but needs it contiguous)."""

    __slots__ = ("original", "contiguous", "written")

    def __init__(self, original, written):
        self.original, self.written = original, written
        self.contiguous = np.ascontiguousarray(original)


class Dispatch:
    """A kernel bound to its grid and arguments. Call it to launch (again and again)."""

    def __init__(self, kernel, specialisation, grid, runtime):
        self.kernel_name = kernel.name
        self._specialisation = specialisation
        self.grid = grid
        self._args, self._staged, self._keep = [], [], []
        self._stream = None  # the GPU arguments' owner's current stream, read per launch
        device = specialisation.compiled.device
        names = [p.name for p in kernel.params if not p.constexpr]
        on_gpu, in_host_memory = [], []
        for name, (kind, dtype, value), written in zip(names, runtime, specialisation.writes):
            if kind == "scalar":
                self._args.append(float(value) if dtype == "f32" else int(value))
                continue
            if isinstance(value, Buffer):
                self._args.append(value.device_buffer)
                continue
            if isinstance(value, GpuArray):
                if device != "cuda":
                    raise TypeError(f"{kernel.name}: argument '{name}' is GPU memory (a "
                                    f"{value.origin}), but the kernel runs on the {device} "
                                    f"device (metile.device() == '{device}')")
                self._args.append(_core.DeviceBuffer.wrap(device, value.address, value.nbytes,
                                                          dtype, list(value.shape)))
                self._keep.append(value.owner)
                self._stream = self._stream or value.stream
                on_gpu.append(name)
                continue
            in_host_memory.append(name)
            if written and not value.flags.writeable:
                raise ValueError(f"{kernel.name}: a read-only numpy array is passed to a buffer "
                                 "the kernel writes")
            if not value.flags.c_contiguous:
                staged = _Staged(value, written)
                self._staged.append(staged)
                value = staged.contiguous
            self._args.append(_core.BufferView(value.ctypes.data, value.nbytes, dtype))
            self._keep.append(value)  # the memory must outlive the dispatch
        if on_gpu and in_host_memory:
            raise TypeError(f"{kernel.name}: arguments {', '.join(map(repr, in_host_memory))} "
                            f"are host memory and {', '.join(map(repr, on_gpu))} GPU memory; "
                            "pass all of them on the GPU (or metile.Buffer)")

    def __call__(self):
        """Launches the kernel and waits for it; staged views are copied in and back."""
        for staged in self._staged:
            np.copyto(staged.contiguous, staged.original)
        if all(self.grid):
            stream = self._stream() if self._stream else 0
            self._specialisation.compiled.launch(self.grid, self._args, stream)
        for staged in self._staged:
            if staged.written:
                np.copyto(staged.original, staged.contiguous)

    @property
    def execution_report(self):
        """What the compiler did: geometry, allocations, passes, loops (a dict)."""
        return json.loads(self._specialisation.compiled.report_json)

    @property
    def schedule_plan(self):
        """None: no explicit schedule was planned (metile.Schedule is not built yet); the
        compiler's automatic thread plan is in execution_report['thread_plan_reason']."""
        return None

    def explain(self):
        """The execution report as formatted JSON text."""
        return json.dumps(self.execution_report, indent=2)

    @property
    def source(self):
        """The emitted source (MSL; CUDA C++ on the cuda device)."""
        return self._specialisation.compiled.source

    @property
    def abi(self):
        return self._specialisation.compiled.abi

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
        self.prepare(*args, **kwargs)()
