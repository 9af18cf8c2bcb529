"""Times metile.reduce(x, 0, add) against metile.sum(x) on the host emulator, one row of BLOCK
f32 per program, after checking both against numpy:

    python benchmarks/host_reduce_combine.py [--rows R] [--runs N] [--out FILE.json]

The two kernels alternate, so drift on the machine affects both alike; prints the medians and
their ratio in CPU time (all threads of the process: steadier than the wall clock where
other work shares the cores; docs/python.md, "Combine functions"). Prints only, unless --out names a file.
"""

import argparse
import json
import socket
import statistics
import time

import numpy as np

import metile


@metile.jit
def add(a, b):
    return a + b


@metile.kernel
def row_reduce(x_ptr, out_ptr, COMBINE: metile.constexpr, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x = metile.load(x_ptr + row * BLOCK + metile.arange(0, BLOCK))
    total = metile.reduce(x, 0, add) if COMBINE else metile.sum(x)
    metile.store(out_ptr + row, total)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", help="write the figures to this JSON file")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    cases = []
    for block in (256, 1024):
        x = rng.integers(-8, 8, (args.rows, block)).astype(np.float32)  # exact sums
        out = np.zeros(args.rows, np.float32)
        times = {False: [], True: []}
        for combine in (False, True):
            row_reduce[(args.rows,)](x, out, COMBINE=combine, BLOCK=block)
            np.testing.assert_array_equal(out, x.sum(1))
        for _ in range(args.runs):
            for combine in (False, True):
                start = time.process_time()
                row_reduce[(args.rows,)](x, out, COMBINE=combine, BLOCK=block)
                times[combine].append(time.process_time() - start)
        sum_s, reduce_s = statistics.median(times[False]), statistics.median(times[True])
        cases.append({"block": block, "rows": args.rows, "sum_s": sum_s, "reduce_s": reduce_s,
                      "ratio": reduce_s / sum_s})
        print(f"BLOCK {block:5d}: sum {sum_s * 1e3:8.1f} ms  reduce(add) {reduce_s * 1e3:8.1f} ms"
              f"  ratio {reduce_s / sum_s:5.2f}x")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"machine": socket.gethostname(), "runs": args.runs, "cases": cases}, f,
                      indent=2)


if __name__ == "__main__":
    main()
