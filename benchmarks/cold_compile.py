"""Cold compile time on an NVIDIA GPU: from a kernel's first call to its result, meTile
(trace -> Tile IR -> Metal IR -> CUDA C++ -> NVRTC cubin -> loaded module -> launch) against
Triton (JIT -> PTX -> cubin -> launch), each in a fresh process with empty caches:

    python benchmarks/cold_compile.py [--rounds N] [--out FILE.json]

Every sample is its own child process (so no in-process cache helps), with METILE_CACHE_DIR
and TRITON_CACHE_DIR pointing at new empty folders and meTile's trace cache off. The child
imports torch, triton and metile and makes its inputs before the clock starts; the clock
stops after torch.cuda.synchronize() once the output has been checked against torch's.
Children alternate meTile, Triton, Triton, meTile (ABBA), and the median is reported with
the second (warm, in-process) call for scale. Each case runs twice: in a fresh process, where
the first compile also starts the compiler (Triton's backend takes about a second), and with
the compiler warm (the child first compiles and runs a row sum), which times only this
kernel's own compile. The kernels are those of h200_memory_bound.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = (("vector_add", "f32", 4096), ("vector_add", "f16", 4096), ("softmax", "f32", 4096))


def child(candidate, kernel, dtype, cols, warm):
    """One cold first call in this fresh process; prints its times as JSON. With `warm`, the
    candidate first compiles and runs another kernel (row sum), so its compiler is loaded and
    only this kernel's own compile is timed."""
    sys.path.insert(0, HERE)
    import h200_memory_bound
    h200_memory_bound.import_gpu_stack()
    import torch
    from memory_bound import cases as mb
    if warm:
        other = mb.Case("row_sum", dtype, (1, cols), block=1024, decode=True)
        run_other = (other.metile_launch if candidate == "metile" else other.triton_launch)(
            other.make_inputs(), other.outputs())
        run_other()
    shape = (cols,) if kernel == "vector_add" else (1, cols)
    case = mb.Case(kernel, dtype, shape, block=1024, decode=True)
    inputs = case.make_inputs()
    references = case.references(inputs)
    outs = case.outputs()
    torch.cuda.synchronize()
    start = time.perf_counter()
    if candidate == "metile":
        launch = case.metile_launch(inputs, outs)
    else:
        launch = case.triton_launch(inputs, outs)
    launch()
    torch.cuda.synchronize()
    first = time.perf_counter() - start
    errors = mb.relative_errors(outs, references)
    start = time.perf_counter()
    launch()
    torch.cuda.synchronize()
    second = time.perf_counter() - start
    print(json.dumps({"first_s": first, "second_s": second, "errors": errors,
                      "ok": mb.within_tolerance(errors, dtype)}))


def sample(candidate, kernel, dtype, cols, warm):
    with tempfile.TemporaryDirectory() as metile_cache, tempfile.TemporaryDirectory() as tt:
        env = dict(os.environ, METILE_CACHE_DIR=metile_cache, METILE_TRACE_CACHE="off",
                   TRITON_CACHE_DIR=tt, PYTHONUNBUFFERED="1")
        run = subprocess.run([sys.executable, __file__, "--child", candidate, kernel, dtype,
                              str(cols), str(int(warm))], env=env, capture_output=True, text=True,
                             timeout=300)
    if run.returncode != 0:
        return {"failed": (run.stderr or run.stdout)[-2000:]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="ABBA pairs per case")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "h200-cold-compile.json"))
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        candidate, kernel, dtype, cols, warm = args.child
        return child(candidate, kernel, dtype, int(cols), warm == "1")
    results = []
    for (kernel, dtype, cols), warm in [(c, w) for w in (False, True) for c in CASES]:
        samples = {"metile": [], "triton": []}
        for r in range(args.rounds):
            order = ("metile", "triton") if r % 2 == 0 else ("triton", "metile")
            for candidate in order:
                samples[candidate].append(sample(candidate, kernel, dtype, cols, warm))
                s = samples[candidate][-1]
                shown = f"{1e3 * s['first_s']:.1f} ms" if "first_s" in s else "FAILED"
                print(f"{kernel} {dtype} {cols} {'warm' if warm else 'fresh'}: {candidate} "
                      f"round {r + 1}: {shown}", flush=True)
        result = {"kernel": kernel, "dtype": dtype, "cols": cols, "compiler_warm": warm,
                  "samples": samples}
        for candidate, runs in samples.items():
            good = [s for s in runs if s.get("ok")]
            result[candidate + "_failed"] = len(runs) - len(good)
            if good:
                result[candidate + "_first_ms"] = 1e3 * statistics.median(s["first_s"] for s in good)
                result[candidate + "_second_ms"] = 1e3 * statistics.median(s["second_s"] for s in good)
        results.append(result)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"commit": os.environ.get("METILE_COMMIT", ""), "cases": results}, f, indent=1)
    print("\n| kernel | dtype | n | process | meTile first ms | Triton first ms | meTile/Triton | "
          "meTile second ms |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        m, t = r.get("metile_first_ms"), r.get("triton_first_ms")
        ratio = f"{m / t:.2f}" if m and t else "-"
        fmt = lambda v: f"{v:.1f}" if v else "failed"
        process = "compiler warm" if r["compiler_warm"] else "fresh"
        print(f"| {r['kernel']} | {r['dtype']} | {r['cols']} | {process} | {fmt(m)} | {fmt(t)} | "
              f"{ratio} | {fmt(r.get('metile_second_ms'))} |")
    print(f"raw figures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
