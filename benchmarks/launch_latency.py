"""Measures a small kernel's first-call cost (trace + compile) and its cached launch time
on the default device, after checking the first call's output against numpy:

    python benchmarks/launch_latency.py [--launches N] [--out FILE.json]

It prints the figures; with --out it also writes them as JSON to FILE.json (the tracked
files in benchmarks/results/ are only rewritten when named there).

The first call starts with empty caches (a temporary METILE_CACHE_DIR), so it includes
tracing, the compiler pipeline and the system C++ compiler building the host object.
"""

import argparse
import json
import os
import socket
import statistics
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--out", help="also write the raw figures as JSON to this path "
                        "(e.g. benchmarks/results/<machine>-launch_latency.json)")
    args = parser.parse_args()
    os.environ["METILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="metile-latency-")

    import numpy as np

    import metile

    @metile.kernel
    def add(x, y, out, n, BLOCK: metile.constexpr):
        offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
        mask = offsets < n
        metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask),
                     mask)

    n = 1024
    rng = np.random.default_rng(0)
    x = metile.Buffer(data=rng.standard_normal(n).astype(np.float32))
    y = metile.Buffer(data=rng.standard_normal(n).astype(np.float32))
    out = metile.Buffer.zeros(n)
    start = time.perf_counter()
    add.trace(x, y, out, n, BLOCK=256)
    trace_only = time.perf_counter() - start
    add.stats.traces = 0
    start = time.perf_counter()
    add[(metile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    first = time.perf_counter() - start
    error = float(np.max(np.abs(out.numpy() - (x.numpy() + y.numpy()))))
    if error != 0.0:
        raise SystemExit(f"launch_latency: wrong result (max error {error}); not timing")

    # The two launch paths alternate, so drift on the machine affects both alike.
    dispatch = add[(metile.cdiv(n, 256),)].prepare(x, y, out, n, BLOCK=256)
    samples, prepared = [], []
    for _ in range(args.launches):
        start = time.perf_counter()
        add[(metile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        samples.append(time.perf_counter() - start)
        start = time.perf_counter()
        dispatch()
        prepared.append(time.perf_counter() - start)
    assert add.stats.traces == 1 and add.stats.compiles == 1, add.stats
    print(f"trace only:                            {trace_only * 1e3:.2f} ms")
    print(f"first call (trace + compile + launch): {first * 1e3:.1f} ms")
    print(f"cached launch, kernel[grid](...):      median {statistics.median(samples) * 1e6:.1f} us")
    print(f"prepared dispatch():                   median {statistics.median(prepared) * 1e6:.1f} us")
    print(f"stats: {add.stats}")
    result = {
        "machine": socket.gethostname(),
        "kernel": "vector_add f32, n = 1024, BLOCK = 256",
        "trace_only_ms": trace_only * 1e3,
        "first_call_ms": first * 1e3,
        "cached_launch_us": {"median": statistics.median(samples) * 1e6, "samples": len(samples)},
        "prepared_dispatch_us": {"median": statistics.median(prepared) * 1e6, "samples": len(prepared)},
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
        print(f"raw figures: {args.out}")


if __name__ == "__main__":
    main()
