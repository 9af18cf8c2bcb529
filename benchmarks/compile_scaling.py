"""Compile time per op of straight-line kernels (issue 10, item 6; issue 34, item 2): a
kernel of N dependent tile ops of one class on a 256-element tile, prepared in a fresh process
state with empty caches, split into tracing, the compiler pipeline (the ExecutionReport's pass
times) and the system C++ compiler building the host object (the rest of prepare). Outputs
are checked against numpy first. The classes:

    add        acc = acc + y                      (arithmetic)
    minmax     acc = maximum(acc, y), then minimum, alternating
    select     acc = where(acc > y, acc, y)       (a compare and a select)
    math       acc = exp(acc)
    cast       acc = acc.to(i32).to(f32)          (two casts)
    reduction  acc = acc + sum(acc)               (a reduction and a broadcast add)

    python benchmarks/compile_scaling.py [--ops 1000 5000] [--classes add minmax ...]
                                         [--out FILE.json]

Reductions publish their partials in two threadgroup slots taken in turn, so any number fits;
a size that does not fit (OutOfResources) is recorded with the message instead of times.
Each row says whether the kernel ran as a work-group function or on fibers ("execution"), as a
kernel of more than 16,384 ops in its thread loops runs on fibers with its math out of line.

Wall times on a shared machine vary with its load; the per-op figures across sizes show
whether a step grows faster than the kernel, and each class's ratio to the additions' per-op
time at the same size whether one class is costlier to compile than another.
"""

import argparse
import json
import os
import socket
import sys
import tempfile
import time

CLASSES = ("add", "minmax", "select", "math", "cast", "reduction")


def chain_kernel(metile, kind):
    @metile.kernel
    def chain(x, y, out, N_OPS: metile.constexpr, KIND: metile.constexpr):
        i = metile.arange(0, 256)
        acc = metile.load(x + i)
        other = metile.load(y + i)
        for k in range(N_OPS):
            if KIND == "add":
                acc = acc + other
            elif KIND == "minmax":
                acc = metile.maximum(acc, other) if k % 2 == 0 else metile.minimum(acc, other)
            elif KIND == "select":
                acc = metile.where(acc > other, acc, other)
            elif KIND == "math":
                acc = metile.exp(acc)
            elif KIND == "cast":
                acc = acc.to(metile.int32).to(metile.float32)
            else:
                acc = acc + metile.sum(acc)
        metile.store(out + i, acc)

    return chain


def reference(np, kind, x, y, n):
    acc = x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(n):
            if kind == "add":
                acc = acc + y
            elif kind == "minmax":
                acc = np.maximum(acc, y) if k % 2 == 0 else np.minimum(acc, y)
            elif kind == "select":
                acc = np.where(acc > y, acc, y)
            elif kind == "math":
                acc = np.exp(acc)
            elif kind == "cast":
                acc = acc.astype(np.int32).astype(np.float32)
            else:
                acc = acc + acc.sum(dtype=np.float32)
    return acc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--classes", nargs="+", choices=CLASSES, default=list(CLASSES))
    parser.add_argument("--out", help="JSON path (default benchmarks/results/<host>-compile_scaling.json)")
    args = parser.parse_args()
    os.environ["METILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="metile-scaling-")
    os.environ["METILE_TRACE_CACHE"] = "off"

    import numpy as np

    import metile

    rng = np.random.default_rng(0)
    # Below 1 and apart from y: casts give 0, sums stay finite for a while, maxima differ.
    x = rng.random(256, dtype=np.float32) * 0.5
    y = rng.random(256, dtype=np.float32) * 0.5
    rows = []
    for n in args.ops:
        for kind in args.classes:
            # An iteration of cast is two ops; of the others one (select: compare and select).
            iterations = n // 2 if kind == "cast" else n
            kernel = chain_kernel(metile, kind)
            start = time.perf_counter()
            kernel.trace(x, y, np.zeros(256, np.float32), N_OPS=iterations, KIND=kind)
            trace_s = time.perf_counter() - start
            kernel = chain_kernel(metile, kind)  # prepare traces again: a first call from scratch
            out = np.zeros(256, np.float32)
            start = time.perf_counter()
            try:
                dispatch = kernel[(1,)].prepare(x, y, out, N_OPS=iterations, KIND=kind)
            except metile.OutOfResources as e:  # reductions' scratch: kept, and reported
                rows.append({"class": kind, "ops": n, "error": str(e)})
                print(f"{kind:9s} {n:6d} ops: {e}", flush=True)
                continue
            prepare_s = time.perf_counter() - start
            dispatch()
            np.testing.assert_allclose(out, reference(np, kind, x, y, iterations), rtol=1e-4)
            pipeline_s = sum(p["ms"] for p in dispatch.execution_report["passes"]) / 1000
            host_s = max(0.0, prepare_s - trace_s - pipeline_s)
            marker = "// meTile host execution: "
            execution = dispatch.source.split(marker, 1)[1].split("\n", 1)[0].split(" ")[0]
            row = {"class": kind, "ops": n, "execution": execution, "trace_s": trace_s,
                   "pipeline_s": pipeline_s,
                   "host_compile_s": host_s, "prepare_s": prepare_s,
                   "us_per_op": 1e6 * prepare_s / n,
                   "pipeline_us_per_op": 1e6 * pipeline_s / n,
                   "host_compile_us_per_op": 1e6 * host_s / n}
            adds = [r for r in rows if r["class"] == "add" and r["ops"] == n and "error" not in r]
            if adds:
                row["ratio_to_add"] = row["us_per_op"] / adds[0]["us_per_op"]
            rows.append(row)
            ratio = f", {row['ratio_to_add']:.2f}x add" if "ratio_to_add" in row else ""
            print(f"{kind:9s} {n:6d} ops: prepare {prepare_s:7.2f} s ({row['us_per_op']:7.1f} "
                  f"us/op{ratio}): trace {trace_s:.2f} s, pipeline {pipeline_s:.2f} s, host C++ "
                  f"compile {host_s:.2f} s; {execution}", flush=True)
    result = {"machine": socket.gethostname(), "device": metile.device(),
              "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
              "load_average": os.getloadavg(), "rows": rows}
    out_path = args.out or os.path.join(os.path.dirname(__file__), "results",
                                        f"{socket.gethostname()}-compile_scaling.json")
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)
    print("wrote", out_path)


if __name__ == "__main__":
    main()
