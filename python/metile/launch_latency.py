"""Measures a small kernel's first-call cost (trace + compile) and its cached launch time
on the default device:

    python -m metile.launch_latency

The first call starts with empty caches (a temporary METILE_CACHE_DIR), so it includes
tracing, the compiler pipeline and the system C++ compiler building the host object.
"""

import argparse
import os
import statistics
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=2000)
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
    x, y, out = (metile.Buffer.zeros(n) for _ in range(3))
    start = time.perf_counter()
    add.trace(x, y, out, n, BLOCK=256)
    trace_only = time.perf_counter() - start
    add.stats.traces = 0
    start = time.perf_counter()
    add[(metile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    first = time.perf_counter() - start

    samples = []
    for _ in range(args.launches):
        start = time.perf_counter()
        add[(metile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        samples.append(time.perf_counter() - start)
    dispatch = add[(metile.cdiv(n, 256),)].prepare(x, y, out, n, BLOCK=256)
    prepared = []
    for _ in range(args.launches):
        start = time.perf_counter()
        dispatch()
        prepared.append(time.perf_counter() - start)
    assert add.stats.traces == 1 and add.stats.compiles == 1, add.stats
    print(f"trace only:                            {trace_only * 1e3:.2f} ms")
    print(f"first call (trace + compile + launch): {first * 1e3:.1f} ms")
    print(f"cached launch, kernel[grid](...):      median {statistics.median(samples) * 1e6:.1f} us")
    print(f"prepared dispatch():                   median {statistics.median(prepared) * 1e6:.1f} us")
    print(f"stats: {add.stats}")


if __name__ == "__main__":
    main()
