"""Memory-bound kernels on an NVIDIA GPU (the H200): meTile against torch eager, torch.compile
and Triton, in one run, as fractions of the copy bandwidth measured in that run:

    python benchmarks/h200_memory_bound.py [--quick] [--out FILE.json] [--budget-s S]
        [--kernels softmax,rms_norm] [--shapes large]
    python benchmarks/h200_memory_bound.py --table FILE.json     # the closing-note table

Kernels: vector add, three-pass softmax, RMSNorm, add+RMSNorm (both outputs) and row sum, in
f16, bf16 and f32, at a large shape (2^28 elements, several GB per call) and at one row
(decode: 1 x 4096). Every candidate's output is checked against a float64 reference before
it is timed; a candidate that fails is recorded and never timed, and the run goes on. Timing:
CUDA events, candidates interleaved in ABBA rounds, the median of the rounds. The large
shapes move far more than the L2 (60 MB), so no flush is needed, and each call is queued
behind a GPU sleep so that host launch cost stays out; the decode shapes are timed over
back-to-back calls with the data hot, host cost included, as a decode step sees it. Also
measured: the host time per launch of a prepared meTile dispatch against a Triton launch, a
torch eager call and a CUDA graph replay, for a tiny vector add. meTile runs twice: as a
user calls it (one kernel for every shape) and specialised (`metile_specialised`: launched
with a Schedule, so the shape is compiled in as constants, as torch.compile(dynamic=False)
compiles it); the table's last column is the specialised launch over torch.compile.

meTile kernels take torch CUDA tensors in place and launch on torch's current stream without
waiting for the kernel, as Triton's do (docs/cuda.md, "Launching"), so every candidate's
timed region holds the same thing: the kernels between two CUDA events. torch, triton and
metile are imported only when measuring: --table needs none. The kernels, cases, timing and table are in memory_bound/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time

from memory_bound.report import case_line, print_table

CANDIDATES = ("metile", "metile_specialised", "triton", "compile", "eager")
# Rough cost of one case on an H200, mostly torch.compile's compile (seconds).
ESTIMATED_CASE_S = 6.0
ESTIMATED_FIXED_S = 40.0  # imports, inductor's first compile, copy and launch measurements


def context_lost():
    """Why the CUDA context cannot be used any more (a sticky fault), or None."""
    try:
        torch.cuda.synchronize()
        if torch.ones(1, device="cuda").add_(1).item() != 2.0:
            return "a trivial torch computation gave a wrong result"
    except Exception as e:
        return f"{type(e).__name__}: {e}"[:500]
    return None


def machine_info():
    from memory_bound import timing

    props = torch.cuda.get_device_properties(0)
    info = {"host": socket.gethostname(), "gpu": torch.cuda.get_device_name(0),
            "multiprocessors": props.multi_processor_count,
            "memory_bytes": props.total_memory, "l2_bytes": timing.L2_BYTES,
            "python": platform.python_version(), "torch": torch.__version__,
            "torch_cuda": torch.version.cuda, "triton": triton.__version__,
            "metile_device": metile.device()}
    try:
        info["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        info["driver"] = f"unknown ({e})"
    # A copy of the tree (the GPU machine's) may carry a stale .git: METILE_COMMIT names it.
    if os.environ.get("METILE_COMMIT"):
        info["metile_commit"] = os.environ["METILE_COMMIT"]
        return info
    try:
        info["metile_commit"] = subprocess.run(
            ["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def import_gpu_stack():
    """torch, triton and metile, imported here so that --table needs none of them; then the
    modules of memory_bound, which import them (kernels wraps its kernels)."""
    global torch, triton, metile
    try:
        import torch
        import triton
    except ImportError as e:
        raise SystemExit(f"h200_memory_bound: needs torch and triton ({e}); run it on the GPU "
                         "machine, or use --table FILE.json to print a result") from None
    if not torch.cuda.is_available():
        raise SystemExit("h200_memory_bound: torch sees no CUDA GPU")
    import metile
    if metile.device() != "cuda":
        raise SystemExit(f"h200_memory_bound: metile runs on the '{metile.device()}' device, "
                         "not cuda (METILE_DEVICE, docs/cuda.md)")
    from memory_bound import timing
    if not timing.SHIELD_CYCLES:
        print("h200_memory_bound: this torch has no torch.cuda._sleep; timing without it")
    import memory_bound.cases  # noqa: F401  (and memory_bound.kernels through it)
    # Each torch function is compiled for 3 dtypes x 2 shapes: keep every graph cached.
    for limit in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 64)


def measure(args):
    started = time.perf_counter()
    import_gpu_stack()
    from memory_bound.cases import EPS, MAX_ERROR_FACTOR, TOLERANCE, case_list, run_case, \
        torch_functions
    from memory_bound.timing import L2_BYTES, copy_bandwidth, launch_overhead
    kernels = args.kernels.split(",") if args.kernels else None
    cases = case_list(args.quick, args.metile_block, args.row_block, kernels, args.shapes,
                      args.row_warps)
    rounds = 6 if args.quick else args.rounds
    print(f"h200_memory_bound: {len(cases)} cases x {len(CANDIDATES)} candidates; estimated "
          f"{ESTIMATED_FIXED_S + ESTIMATED_CASE_S * len(cases):.0f} s (mostly torch.compile), "
          f"budget {args.budget_s:.0f} s", flush=True)
    report = {"benchmark": "h200_memory_bound", "quick": args.quick, "machine": machine_info(),
              "tolerance": TOLERANCE, "max_error_factor": MAX_ERROR_FACTOR, "eps": EPS,
              "metile_launches": "asynchronous",
              "cases": [], "skipped": []}
    print(f"machine: {json.dumps(report['machine'])}", flush=True)

    def save():
        report["elapsed_s"] = time.perf_counter() - started
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)

    copy_bytes = (256 << 20) if args.quick else (4 << 30)
    report["copy_bandwidth"] = copy_bandwidth(copy_bytes, 2 * rounds)
    print(f"copy bandwidth: {report['copy_bandwidth']['GBps']:.0f} GB/s "
          f"({copy_bytes >> 20} MiB buffers)", flush=True)
    save()
    flush = torch.empty(2 * L2_BYTES // 4, device="cuda")
    torch_fns, compiled = torch_functions(), {}
    for i, case in enumerate(cases):
        elapsed = time.perf_counter() - started
        if elapsed + ESTIMATED_CASE_S > args.budget_s:
            report["skipped"].append({"case": case.name(), "why": f"time budget ({elapsed:.0f} s)"})
            print(f"[{i + 1}/{len(cases)}] {case.name()}: skipped (budget)", flush=True)
            continue
        try:
            result = run_case(case, torch_fns, compiled, rounds,
                              args.decode_calls if case.decode else 1,
                              flush if case.flush else None)
        except Exception as e:  # e.g. out of memory making inputs: recorded, the run goes on
            result = {"kernel": case.kernel, "dtype": case.dtype, "shape": list(case.shape),
                      "status": "failed", "failures": {"case": f"{type(e).__name__}: {e}"[:2000]}}
        report["cases"].append(result)
        print(f"[{i + 1}/{len(cases)}] {time.perf_counter() - started:5.0f} s  "
              f"{case_line(result)}", flush=True)
        lost = context_lost()
        if lost:  # a kernel fault is sticky: nothing after it can run in this process
            report["aborted"] = f"after {case.name()}: the CUDA context is unusable ({lost})"
            report["skipped"] += [{"case": c.name(), "why": "aborted"} for c in cases[i + 1:]]
            save()
            raise SystemExit(f"h200_memory_bound: {report['aborted']}; partial results in "
                             f"{args.out}")
        torch.cuda.empty_cache()
        save()
    report["copy_bandwidth_end"] = copy_bandwidth(copy_bytes, 2 * rounds)
    try:
        report["launch_overhead"] = launch_overhead(200 if args.quick else 2000,
                                                    4 if args.quick else 10)
    except Exception as e:
        report["launch_overhead"] = {"failed": f"{type(e).__name__}: {e}"[:2000]}
    save()
    print(f"copy bandwidth at the end: {report['copy_bandwidth_end']['GBps']:.0f} GB/s", flush=True)
    print(f"raw figures: {args.out} ({report['elapsed_s']:.0f} s)\n", flush=True)
    print_table(report)



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small cases (smoke test)")
    parser.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", "h200-memory-bound.json"))
    parser.add_argument("--table", metavar="FILE.json", help="print the table of a result file")
    parser.add_argument("--budget-s", type=float, default=330.0,
                        help="skip the remaining cases past this many seconds")
    parser.add_argument("--rounds", type=int, default=20, help="ABBA rounds per case")
    parser.add_argument("--decode-calls", type=int, default=50,
                        help="back-to-back calls per sample for the decode shapes")
    parser.add_argument("--kernels", help="comma-separated kernels to run (vector_add, softmax, "
                        "rms_norm, add_rms_norm, row_sum); all when left out")
    parser.add_argument("--shapes", choices=("all", "large", "decode"), default="all",
                        help="run only the large shapes or only the decode rows")
    parser.add_argument("--metile-block", type=int, default=1024,
                        help="meTile's BLOCK for the vector add")
    parser.add_argument("--row-block", type=int,
                        help="meTile's BLOCK for the row kernels (default: the row's length "
                             "rounded up to a power of two, the whole row in one tile)")
    parser.add_argument("--row-warps", type=int,
                        help="num_warps for meTile's row kernels (default: the compiler's "
                             "thread plan)")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            print_table(json.load(f))
        return
    measure(args)


if __name__ == "__main__":
    sys.exit(main())
