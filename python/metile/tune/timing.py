"""Synchronised timing of one call of an entrant: CUDA events on the caller's torch stream
when an argument is a torch CUDA tensor (meTile launches on that stream too, so both sides
time the same thing: the work between two events); otherwise the wall clock between two
synchronisations (metile.synchronize, MLX's eval)."""

import sys
import time


def _torch_cuda(args):
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_cuda:
            return torch
    return None


def _wait(outputs):
    from ..launch import synchronize

    mx = sys.modules.get("mlx.core")
    if mx is not None:
        values = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        arrays = [v for v in values if type(v).__module__.split(".")[0] == "mlx"]
        if arrays:
            mx.eval(*arrays)
    synchronize()


def time_call(fn, args):
    """Seconds of one call fn(*args), synchronised."""
    torch = _torch_cuda(args)
    if torch is not None:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3
    _wait(None)
    started = time.perf_counter()
    _wait(fn(*args))
    return time.perf_counter() - started
