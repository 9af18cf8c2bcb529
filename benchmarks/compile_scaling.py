"""Compile time per op of straight-line kernels (issue 10, item 6): a kernel of N dependent
adds on a 256-element tile, prepared in a fresh process state with empty caches, split into
tracing, the compiler pipeline (the ExecutionReport's pass times) and the system C++
compiler building the host object (the rest of prepare). Outputs are checked first.

    python benchmarks/compile_scaling.py [--ops 1000 5000 20000] [--out FILE.json]

Wall times on a shared machine vary with its load; the per-op figures across sizes show
whether a step grows faster than the kernel.
"""

import argparse
import json
import os
import socket
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--out", help="JSON path (default benchmarks/results/<host>-compile_scaling.json)")
    args = parser.parse_args()
    os.environ["METILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="metile-scaling-")
    os.environ["METILE_TRACE_CACHE"] = "off"

    import numpy as np

    import metile

    def chain_kernel():
        @metile.kernel
        def chain(x, out, N_ADDS: metile.constexpr):
            i = metile.arange(0, 256)
            acc = metile.load(x + i)
            for _ in range(N_ADDS):
                acc = acc + 1.0
            metile.store(out + i, acc)

        return chain

    x = np.arange(256, dtype=np.float32)
    rows = []
    for n in args.ops:
        kernel = chain_kernel()
        start = time.perf_counter()
        kernel.trace(x, np.zeros(256, np.float32), N_ADDS=n)
        trace_s = time.perf_counter() - start
        kernel = chain_kernel()  # prepare traces again: a first call from scratch
        out = np.zeros(256, np.float32)
        start = time.perf_counter()
        dispatch = kernel[(1,)].prepare(x, out, N_ADDS=n)
        prepare_s = time.perf_counter() - start
        dispatch()
        np.testing.assert_allclose(out, x + n, rtol=1e-6)
        pipeline_s = sum(p["ms"] for p in dispatch.execution_report["passes"]) / 1000
        host_s = max(0.0, prepare_s - trace_s - pipeline_s)
        row = {"ops": n, "trace_s": trace_s, "pipeline_s": pipeline_s, "host_compile_s": host_s,
               "prepare_s": prepare_s, "us_per_op": 1e6 * prepare_s / n,
               "pipeline_us_per_op": 1e6 * pipeline_s / n,
               "host_compile_us_per_op": 1e6 * host_s / n}
        rows.append(row)
        print(f"{n:6d} ops: prepare {prepare_s:7.2f} s ({row['us_per_op']:7.1f} us/op): trace "
              f"{trace_s:.2f} s, pipeline {pipeline_s:.2f} s, host C++ compile {host_s:.2f} s",
              flush=True)
    result = {"machine": socket.gethostname(), "device": metile.device(),
              "load_average": os.getloadavg(), "rows": rows}
    out_path = args.out or os.path.join(os.path.dirname(__file__), "results",
                                        f"{socket.gethostname()}-compile_scaling.json")
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)
    print("wrote", out_path)


if __name__ == "__main__":
    main()
