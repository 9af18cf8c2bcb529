"""Measures the Python side of a launch, apart from the kernel's execution: the host path of
``kernel[grid](...)`` up to the call into the runtime (binding the arguments, the captured
globals' check, the specialisation key, the cache lookup, argument marshalling, the grid),
for a tiny kernel of six parameters (three buffers, an int, a float and a constexpr):

    python benchmarks/launch_overhead_host.py [--calls N] [--rounds R] [--label L] [--out FILE]

Figures, in microseconds per call (the median of R rounds of N calls, the measurements of a
round in alternating order):

- numpy arguments on the default device: ``call`` (kernel[grid](...), everything),
  ``prepare`` (the host path up to the runtime: kernel[grid].prepare(...)), ``dispatch`` (a
  prepared dispatch's launch: the runtime's part, which on the host device runs the kernel),
  and the parts of prepare: ``bind``, ``specialise`` (captured globals, signature, cache
  lookup) and ``marshal`` (Dispatch: the runtime's argument list);
- GPU arguments, which a machine without a GPU cannot launch: ``bind`` + ``specialise`` of
  objects with ``__cuda_array_interface__`` and of stand-in torch CUDA tensors (a fake
  ``torch`` module when torch is not installed, cheaper per attribute than torch's tensors).

A cProfile of the plain call lists the functions that dominate. With --out the figures go
into FILE, appended to the list runs[LABEL] (other labels kept): runs before and after a
change, alternated on a busy machine. Times on a
GPU machine, torch's tensors and Triton's launch: benchmarks/h200_memory_bound.py.
"""

import argparse
import cProfile
import importlib.util
import json
import os
import platform
import pstats
import socket
import statistics
import sys
import tempfile
import time
import types


class FakeCudaArray:
    """GPU memory as __cuda_array_interface__ describes it (never dereferenced)."""

    def __init__(self, n, address):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "strides": None,
                                         "data": (address, False), "version": 3}


def fake_torch():
    """A stand-in `torch` module and CUDA tensor type, only where torch is not installed:
    meTile recognises torch tensors by their type's module and reads the attributes below."""
    if importlib.util.find_spec("torch") is not None:
        return None
    torch = types.ModuleType("torch")
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: 0)

    class dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return self.name

    float32 = dtype("torch.float32")

    class Tensor:
        is_cuda = True

        def __init__(self, n, address):
            self.n, self.address, self.dtype, self.shape = n, address, float32, (n,)

        def is_contiguous(self):
            return True

        def get_device(self):
            return 0

        def data_ptr(self):
            return self.address

        def numel(self):
            return self.n

        def element_size(self):
            return 4

    Tensor.__module__ = "torch"
    torch.Tensor = Tensor
    sys.modules["torch"] = torch
    return Tensor


def per_call_us(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--label", default="current", help="the key of this run in --out")
    parser.add_argument("--out", help="append the figures as JSON to this file's runs[LABEL] "
                        "(e.g. benchmarks/results/vm-launch_overhead_host.json)")
    args = parser.parse_args()
    os.environ.setdefault("METILE_CACHE_DIR", tempfile.mkdtemp(prefix="metile-overhead-"))
    tensor_type = fake_torch()

    import numpy as np

    import metile
    from metile.launch import Dispatch

    @metile.kernel
    def scaled_add(x, y, out, n, scale, BLOCK: metile.constexpr):
        offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
        mask = offsets < n
        total = metile.load(x + offsets, mask) + metile.load(y + offsets, mask)
        metile.store(out + offsets, total * scale, mask)

    n = 256
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.zeros(n, np.float32)
    launch = scaled_add[(1,)]
    launch(x, y, out, n, 2.0, BLOCK=256)
    if not np.allclose(out, (x + y) * 2.0):
        raise SystemExit("launch_overhead_host: wrong result; not timing")
    dispatch = launch.prepare(x, y, out, n, 2.0, BLOCK=256)
    values, options = scaled_add.bind((x, y, out, n, 2.0), {"BLOCK": 256})
    specialisation, runtime = scaled_add.specialise(values, options)

    gpu_arguments = {"cuda_array_interface": [FakeCudaArray(n, 0x7000_0000 + 4096 * i)
                                              for i in range(3)]}
    if tensor_type is not None:
        gpu_arguments["torch_stand_in"] = [tensor_type(n, 0x7100_0000 + 4096 * i)
                                           for i in range(3)]

    measurements = {
        "numpy.call": lambda: scaled_add[(1,)](x, y, out, n, 2.0, BLOCK=256),
        "numpy.prepare": lambda: scaled_add[(1,)].prepare(x, y, out, n, 2.0, BLOCK=256),
        "numpy.dispatch": dispatch,
        "numpy.bind": lambda: scaled_add.bind((x, y, out, n, 2.0), {"BLOCK": 256}),
        "numpy.specialise": lambda: scaled_add.specialise(values, options),
        "numpy.marshal": lambda: Dispatch(scaled_add, specialisation, (1, 1, 1), runtime),
    }
    for kind, (gx, gy, gout) in gpu_arguments.items():
        def key_path(gx=gx, gy=gy, gout=gout):
            scaled_add.specialise(*scaled_add.bind((gx, gy, gout, n, 2.0), {"BLOCK": 256}))
        key_path()  # traces and compiles this signature once (host code: never launched)
        measurements[f"{kind}.bind_specialise"] = key_path

    for fn in measurements.values():  # warm-up
        per_call_us(fn, 200)
    samples = {name: [] for name in measurements}
    names = list(measurements)
    for r in range(args.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            samples[name].append(per_call_us(measurements[name], args.calls))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    medians["numpy.host_path"] = medians["numpy.call"] - medians["numpy.dispatch"]

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.calls):
        scaled_add[(1,)](x, y, out, n, 2.0, BLOCK=256)
    profiler.disable()
    stats = pstats.Stats(profiler)
    top = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:12]
    profile = [{"function": f"{os.path.basename(file)}:{line}({fn})", "calls": entry[1],
                "own_us_per_launch": entry[2] / args.calls * 1e6}
               for (file, line, fn), entry in top]

    print(f"device {metile.device()}; median of {args.rounds} rounds of {args.calls} calls, "
          "microseconds per call")
    for name, value in medians.items():
        print(f"  {name:40s} {value:7.2f}")
    print("cProfile of the plain call (own time per launch, profiler overhead included):")
    for row in profile:
        print(f"  {row['own_us_per_launch']:6.2f} us  {row['calls'] // args.calls:3d}x  "
              f"{row['function']}")
    result = {
        "device": metile.device(),
        "kernel": "scaled_add(x, y, out, n, scale, BLOCK: constexpr), 256 f32, grid (1,)",
        "calls_per_round": args.calls, "rounds": args.rounds,
        "median_us_per_call": medians,
        "samples_us_per_call": samples,
        "profile_top_own_time": profile,
        "torch": "stand-in (torch not installed)" if tensor_type is not None else "installed",
    }
    if args.out:
        document = {}
        if os.path.exists(args.out):
            with open(args.out) as f:
                document = json.load(f)
        document.update({"machine": socket.gethostname(), "python": platform.python_version(),
                         "numpy": np.__version__})
        document.setdefault("runs", {}).setdefault(args.label, []).append(result)
        with open(args.out, "w") as f:
            json.dump(document, f, indent=2)
        print(f"raw figures: {args.out} (runs['{args.label}'][-1])")


if __name__ == "__main__":
    main()
