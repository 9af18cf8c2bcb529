"""Times the host emulator against numpy on a three-pass softmax (1823x781 f32, BLOCK 256
and 1024) and a 4096x4096 f32 RMSNorm, after checking each output against numpy:

    python benchmarks/host_emulator.py [--runs N] [--out FILE.json]

Each case alternates the kernel and numpy, so drift on the machine affects both alike,
and reports the medians and their ratio. Prints only, unless --out names a file.
``--clock cpu`` times the process's CPU time (all its threads) instead of the wall clock:
steadier where other work shares the cores, and the work each side does.

Instruction counts are steadier than times on a shared machine: ``--launch-only BLOCK N``
launches the softmax N times and times nothing, for

    METILE_HOST_THREADS=1 valgrind --tool=callgrind python benchmarks/host_emulator.py --launch-only 256 3

where (Ir with N=3 - Ir with N=1) / 2 is the cost of one launch. METILE_HOST_EXECUTION=fibers
measures the fiber strategy (docs/host_emulator.md, "Execution strategies"); --out records
which ran.
"""

import argparse
import json
import os
import socket
import statistics
import time

import numpy as np

import metile


@metile.kernel
def three_pass_softmax(x_ptr, out_ptr, n_cols, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    m = -1e38
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=-1e38)
        m = metile.maximum(m, x)
    m = metile.max(m)
    s = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=-1e38)
        s = s + metile.exp(x - m)
    s = metile.sum(s)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols)
        metile.store(out_ptr + row * n_cols + cols, metile.exp(x - m) / s, mask=cols < n_cols)


@metile.kernel
def rmsnorm(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    squares = metile.zeros([BLOCK], dtype=metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=0.0)
        squares += x * x
    rstd = metile.rsqrt(metile.sum(squares) / n_cols.to(metile.float32) + eps)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        mask = cols < n_cols
        x = metile.load(x_row + cols, mask=mask)
        w = metile.load(w_ptr + cols, mask=mask)
        metile.store(out_ptr + row * n_cols + cols, x * rstd * w, mask=mask)


def numpy_softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def numpy_rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps) * w


def measure(name, run_kernel, run_numpy, out, runs, clock):
    reference = run_numpy()
    run_kernel()
    error = float(np.max(np.abs(out - reference)))
    if error > 1e-5:
        raise SystemExit(f"{name}: wrong result (max error {error}); not timing")
    kernel_s, numpy_s = [], []
    for _ in range(runs):
        start = clock()
        run_kernel()
        kernel_s.append(clock() - start)
        start = clock()
        run_numpy()
        numpy_s.append(clock() - start)
    kernel_ms = statistics.median(kernel_s) * 1e3
    numpy_ms = statistics.median(numpy_s) * 1e3
    print(f"{name:34s} metile {kernel_ms:8.2f} ms   numpy {numpy_ms:7.2f} ms   "
          f"ratio {kernel_ms / numpy_ms:6.2f}x")
    return {"case": name, "metile_ms": kernel_ms, "numpy_ms": numpy_ms,
            "ratio": kernel_ms / numpy_ms, "runs": runs}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--out", help="write the figures as JSON to this file")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time the wall clock (default) or the process's CPU time")
    parser.add_argument("--launch-only", nargs=2, type=int, metavar=("BLOCK", "N"),
                        help="launch the softmax N times with BLOCK, time nothing (for profilers)")
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    rng = np.random.default_rng(0)
    results = []

    x = rng.standard_normal((1823, 781)).astype(np.float32)
    out = np.zeros_like(x)
    if args.launch_only:
        block, launches = args.launch_only
        for _ in range(launches):
            three_pass_softmax[(x.shape[0],)](x, out, x.shape[1], BLOCK=block)
        return
    for block in (256, 1024):
        results.append(measure(
            f"softmax 1823x781 f32 BLOCK={block}",
            lambda: three_pass_softmax[(x.shape[0],)](x, out, x.shape[1], BLOCK=block),
            lambda: numpy_softmax(x), out, args.runs, clock))

    x = rng.standard_normal((4096, 4096)).astype(np.float32)
    w = rng.standard_normal(4096).astype(np.float32)
    out = np.zeros_like(x)
    eps = 1e-6
    results.append(measure(
        "rmsnorm 4096x4096 f32 BLOCK=1024",
        lambda: rmsnorm[(x.shape[0],)](x, w, out, x.shape[1], eps, BLOCK=1024),
        lambda: numpy_rmsnorm(x, w, eps), out, args.runs, clock))

    if args.out:
        with open(args.out, "w") as f:
            json.dump({"machine": socket.gethostname(),
                       "host_execution": os.environ.get("METILE_HOST_EXECUTION", "auto"),
                       "clock": args.clock,
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
