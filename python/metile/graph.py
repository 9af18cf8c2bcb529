"""Running a graph: ``plan.compile()`` turns a FusionPlan into a callable.

    run = metile.plan_graph_fusion(graph).compile()
    summed, normalized = run(values=v, residual=r, weight=w)

Arguments are the graph inputs, by position (the order of ``builder.input`` calls) or by name:
numpy arrays (copied to the device; numpy arrays come back), ``metile.Buffer`` (Buffers come
back) or, on the cuda device, torch CUDA tensors (used in place; the outputs are new torch
tensors and every kernel is queued on torch's current stream). A missing, unknown or
mismatched input is a ``CompilationError`` naming it. A cache that an in-place
``cache_update`` writes is updated where it lives: the Buffer or tensor itself, and a numpy
array by copying the new contents back into it after the run.
"""

import numpy as np

from . import _core, dtypes
from .buffer import Buffer, GpuArray, describe

_TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32"}


def _wrap_buffer(device_buffer, shape, dtype):
    buffer = Buffer.__new__(Buffer)
    buffer.device_buffer = device_buffer
    buffer.shape = tuple(shape)
    buffer._np_dtype = np.dtype(dtypes.to_numpy(dtype))
    return buffer


def bind_inputs(input_names, args, kwargs):
    """A compiled graph's call arguments by input name: positional ones in the graph's input
    order, then keywords; TypeError for too many positional ones or a name given twice."""
    if len(args) > len(input_names):
        raise TypeError(f"the graph takes {len(input_names)} inputs "
                        f"({', '.join(input_names)}), got {len(args)} positional")
    bound = dict(zip(input_names, args))
    for name, value in kwargs.items():
        if name in bound:
            raise TypeError(f"graph input '{name}' given twice")
        bound[name] = value
    return bound

class GraphExecutable:
    """A compiled graph: call it with the graph inputs; ``explain()`` reports its kernels."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.input_names = list(compiled.input_names)

    @property
    def kernel_count(self):
        """How many kernels one call launches."""
        return self.compiled.kernel_count

    def explain(self):
        """JSON: the fusion plan, each kernel with how its region was lowered, and the
        intermediate buffers and their reuse."""
        return self.compiled.explain()

    def _copy_back(self, host_arrays, buffers):
        """The caches an in-place cache_update wrote, into the host arrays they came from
        (Buffers and device tensors were written where they live)."""
        specs = dict(zip(self.input_names, self.compiled.input_specs))
        for name in self.compiled.in_place_inputs:
            if name not in host_arrays:
                continue
            target = host_arrays[name]
            if not isinstance(target, np.ndarray):
                raise TypeError(f"graph input '{name}' is updated in place (cache_update with "
                                f"in_place=True): pass a numpy array, a metile.Buffer or a torch "
                                f"tensor, not {type(target).__name__}")
            spec = specs[name]
            np.copyto(target, _wrap_buffer(buffers[name], spec.shape, spec.dtype).numpy())

    def __call__(self, *args, **kwargs):
        bound = bind_inputs(self.input_names, args, kwargs)
        device = self.compiled.device
        buffers, kind, stream, gpu, host_arrays = {}, None, 0, None, {}
        for name, value in bound.items():
            described = describe(value, name)
            if described[0] != "buffer":
                raise TypeError(f"graph input '{name}': expected an array, got {type(value).__name__}")
            arg = described[2]
            if isinstance(arg, Buffer):
                buffers[name], kind = arg.device_buffer, kind or "buffer"
            elif isinstance(arg, GpuArray):
                buffers[name] = _core.DeviceBuffer.wrap(device, arg.address, arg.nbytes, arg.dtype,
                                                        list(arg.shape))
                kind = "torch" if arg.origin.startswith("torch") else kind or "gpu"
                stream = (arg.stream() if callable(arg.stream) else arg.stream) or stream
                gpu = arg.gpu if gpu is None else gpu
            else:
                array = np.ascontiguousarray(arg)
                buffers[name] = Buffer.from_numpy(array).device_buffer
                host_arrays[name] = value
                kind = kind or "numpy"
        specs = self.compiled.output_specs
        if kind == "torch":
            import torch
            # The inputs' GPU current: the outputs and the intermediates go there too.
            with torch.cuda.device(gpu):
                outputs = [torch.empty(tuple(s.shape), device="cuda",
                                       dtype=getattr(torch, _TORCH_DTYPES[s.dtype])) for s in specs]
                wrapped = [_core.DeviceBuffer.wrap(device, t.data_ptr(),
                                                   t.numel() * t.element_size(), s.dtype,
                                                   list(s.shape))
                           for t, s in zip(outputs, specs)]
                self.compiled.run(buffers, wrapped, stream=stream, wait=False)
            return tuple(outputs)
        results = self.compiled.run(buffers)
        self._copy_back(host_arrays, buffers)
        out = [_wrap_buffer(b, s.shape, s.dtype) for b, s in zip(results, specs)]
        if kind == "buffer":
            return tuple(out)
        return tuple(b.numpy() for b in out)


def compile_plan(plan, device="", dispatch="fused", schedule="", views=True):
    """``plan.compile(device="", dispatch="fused", schedule="", views=True)``: every region
    lowered to kernels and compiled for the device (empty: the default device), as a callable
    GraphExecutable. ``schedule`` sets the SwiGLU regions' schedule: "register-fused" or
    "scratch-spilled" (gate result in threadgroup scratch, one accumulator); empty: the plan's.
    ``views=False`` copies every transpose, reshape and slice with a kernel of its own instead
    of reading it in place (to compare the two).
    ``dispatch="measured"``: each region's fused kernels (both schedules for a SwiGLU region)
    compete with the framework's unfused ops through metile.select (graph_dispatch.py), region
    by region."""
    if dispatch == "measured":
        from .graph_dispatch import MeasuredGraph
        if schedule or not views:
            raise ValueError("plan.compile: schedule= and views= are for dispatch='fused'; "
                             "dispatch='measured' measures both schedules")
        return MeasuredGraph(plan, device)
    if dispatch != "fused":
        raise ValueError(f"plan.compile: dispatch must be 'fused' or 'measured', got {dispatch!r}")
    return GraphExecutable(plan._compile(device, schedule, views))
