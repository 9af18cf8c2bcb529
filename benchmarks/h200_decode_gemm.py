"""Decode-shaped matmul on an NVIDIA GPU (the H200): meTile's decode strategies
(metile_kernels.decode_gemm: gemv and split_k, their partial sums reduced by atomics, a
second pass, or the split that finishes last) against cuBLAS (torch.matmul), in one run (issue 32):

    python benchmarks/h200_decode_gemm.py OUT.json [--quick] [--sweep] [--dtype bf16] [--rounds N]
    python benchmarks/h200_decode_gemm.py OUT.json --quick --device host   # smoke check, no GPU

Cases: M = 1, 2, 4, 8, 16 with (N, K) = 4096², 8192², the Llama MLP shapes (14336, 4096) and
(4096, 14336) and the ragged (4095, 4097), bf16 and f16 (--quick: M = 1, 4, 16 at 4096² and
8192², and the ragged shape). Each candidate's output is checked against an f32 product of
the same inputs before it is timed (max |out - ref| / max |ref| within the dtype's tolerance);
one that fails is recorded and never timed. Timing: CUDA events around back-to-back calls
queued behind a GPU sleep (the host's launch cost stays out), candidates interleaved in ABBA
rounds, medians. Decode reads each layer's weights once, so the calls rotate over enough
copies of the weights to overflow the L2 cache twice: every call reads its weights from
memory, as in a model. Figures: weight bytes read per second (K N element bytes per call), as
a fraction of the copy bandwidth measured in the same run (torch's copy of a 2 GiB tensor, read
plus written bytes), and cuBLAS's time over each candidate's (above 1: faster than cuBLAS).
"auto" is decode_gemm.plan's default; the metile.select record is the guarded runtime's
measured choice among the candidates and cuBLAS (docs/tuning.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

DTYPES = ("bf16", "f16")
TOLERANCE = {"bf16": 2e-2, "f16": 4e-3, "f32": 1e-4}  # max |out - ref| / max |ref|
FULL_ROWS = (1, 2, 4, 8, 16)
FULL_SHAPES = ((4096, 4096), (8192, 8192), (14336, 4096), (4096, 14336), (4095, 4097))
QUICK_ROWS = (1, 4, 16)
QUICK_SHAPES = ((4096, 4096), (8192, 8192), (4095, 4097))
HOST_CASES = (("f16", (1, 45, 97)), ("bf16", (3, 40, 70)))
# (label, plan choices): each decode strategy with each reduction, and the plan's default.
VARIANTS = (("auto", {}),
            ("gemv", {"strategy": "gemv", "splits": 1}),
            ("gemv_atomic", {"strategy": "gemv", "reduce": "atomic"}),
            ("gemv_two_pass", {"strategy": "gemv", "reduce": "two_pass"}),
            ("gemv_last_split", {"strategy": "gemv", "reduce": "last_split"}),
            ("split_k_atomic", {"strategy": "split_k", "reduce": "atomic"}),
            ("split_k_two_pass", {"strategy": "split_k", "reduce": "two_pass"}),
            ("split_k_last_split", {"strategy": "split_k", "reduce": "last_split"}))
# --sweep: gemv's split count halved and doubled and its K step halved and doubled, each
# with the atomic reduction (labels; the choices are made from the case's auto plan).
SWEEP = ("gemv_atomic_half_splits", "gemv_atomic_double_splits", "gemv_atomic_half_step",
         "gemv_atomic_double_step")
SHIELD_CYCLES = 2_000_000  # a 1 ms GPU sleep at 1.98 GHz while the host queues the calls
COPY_BYTES = 2 << 30


def case_list(quick, host, dtypes=DTYPES):
    if host:
        return [(dtype, shape) for dtype, shape in HOST_CASES if dtype in dtypes]
    rows, shapes = (QUICK_ROWS, QUICK_SHAPES) if quick else (FULL_ROWS, FULL_SHAPES)
    return [(dtype, (m, n, k)) for dtype in dtypes for n, k in shapes for m in rows]


def relative_error(got, want):
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(got.astype(np.float32) - want))) / scale


def machine_info(torch, metile):
    info = {"python": sys.version.split()[0], "metile_device": metile.device()}
    if torch is not None and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info.update(gpu=torch.cuda.get_device_name(0), torch=torch.__version__,
                    torch_cuda=torch.version.cuda, multiprocessors=props.multi_processor_count,
                    l2_bytes=getattr(props, "L2_cache_size", None))
    # A copy of the tree (the GPU machine's) may carry a stale .git: METILE_COMMIT names it.
    commit = os.environ.get("METILE_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)),
                                     "rev-parse", "HEAD"], capture_output=True, text=True,
                                    timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = None
    info["metile_commit"] = commit
    return info


# ---------------------------------------------------------------------------------------------
# The cuda device.


def time_interleaved(torch, launches, rounds, inner):
    """Median ms per call of each launch (a callable taking the call's index): CUDA events
    around `inner` calls queued behind a GPU sleep, the launches in ABBA order each round."""
    names = list(launches)
    events = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            if hasattr(torch.cuda, "_sleep"):  # private in torch: without it, no shield
                torch.cuda._sleep(SHIELD_CYCLES)
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for i in range(inner):
                launches[name](i)
            stop.record()
            events[name].append((start, stop))
    torch.cuda.synchronize()
    result = {}
    for name, pairs in events.items():
        samples = [a.elapsed_time(b) / inner for a, b in pairs]
        result[name] = {"median_ms": statistics.median(samples), "min_ms": min(samples),
                        "samples_ms": samples}
    return result


def copy_bandwidth(torch, rounds):
    src = torch.randn(COPY_BYTES // 4, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    timed = time_interleaved(torch, {"copy": lambda i: dst.copy_(src)}, rounds, 1)["copy"]
    del src, dst
    torch.cuda.empty_cache()
    return {"bytes_per_copy": 2 * COPY_BYTES, "median_ms": timed["median_ms"],
            "GBps": 2 * COPY_BYTES / (timed["median_ms"] * 1e-3) / 1e9}


def variants(decode_gemm, dtype, shape, sweep):
    """(label, plan choices) of every variant a case runs."""
    chosen = list(VARIANTS)
    if sweep:
        m, n, k = shape
        auto = decode_gemm.plan(m, n, k, dtype, strategy="gemv")
        base = {"strategy": "gemv", "reduce": "atomic"}
        chosen += [
            (SWEEP[0], dict(base, splits=max(2, auto["splits"] // 2))),
            (SWEEP[1], dict(base, splits=2 * auto["splits"])),
            (SWEEP[2], dict(base, block_k=max(1, auto["BLOCK_K"] // 2))),
            (SWEEP[3], dict(base, block_k=2 * auto["BLOCK_K"]))]
    return chosen


def cuda_case(torch, decode_gemm, metile, dtype, shape, rounds, l2_bytes, sweep):
    m, n, k = shape
    torch_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    weight_bytes = n * k * torch.tensor([], dtype=torch_dtype).element_size()
    copies = max(1, math.ceil(2 * l2_bytes / weight_bytes))
    generator = torch.Generator(device="cuda").manual_seed(32)
    x = torch.randn((m, k), device="cuda", generator=generator).to(torch_dtype)
    weights = [(torch.randn((k, n), device="cuda", generator=generator) / math.sqrt(k))
               .to(torch_dtype) for _ in range(copies)]
    want = (x.float() @ weights[0].float()).cpu().numpy()
    result = {"dtype": dtype, "shape": [m, n, k], "weight_bytes": weight_bytes,
              "weight_copies": copies, "failures": {}, "errors": {}, "plans": {}}
    outputs = {}
    launches = {}

    def checked(name, out):
        error = relative_error(out.float().cpu().numpy(), want)
        result["errors"][name] = error
        if not error <= TOLERANCE[dtype]:
            raise AssertionError(f"max relative error {error:.3g} > {TOLERANCE[dtype]}")

    cublas_out = [torch.empty((m, n), device="cuda", dtype=torch_dtype) for _ in range(copies)]
    try:
        torch.matmul(x, weights[0], out=cublas_out[0])
        torch.cuda.synchronize()
        checked("cublas", cublas_out[0])
        launches["cublas"] = lambda i: torch.matmul(x, weights[i % copies],
                                                    out=cublas_out[i % copies])
    except Exception as e:  # recorded; the others go on
        result["failures"]["cublas"] = f"{type(e).__name__}: {e}"[:2000]
    for name, choices in variants(decode_gemm, dtype, shape, sweep):
        try:
            dispatches = [decode_gemm.prepare(x, w, **choices) for w in weights]
            outputs[name] = dispatches[0]()
            torch.cuda.synchronize()
            checked(name, outputs[name])
            result["plans"][name] = {key: value for key, value in dispatches[0].plan.items()}
            launches[name] = lambda i, d=dispatches: d[i % copies]()
        except Exception as e:
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
    if "cublas" not in launches:
        result["status"] = "failed"
        return result
    for launch in launches.values():  # warm: every copy's first call outside the timing
        for i in range(copies):
            launch(i)
    torch.cuda.synchronize()
    inner = max(copies, 8)
    times = time_interleaved(torch, launches, rounds, inner)
    result["times"] = times
    result["weight_GBps"] = {name: weight_bytes / (t["median_ms"] * 1e-3) / 1e9
                             for name, t in times.items()}
    result["cublas_over"] = {name: times["cublas"]["median_ms"] / t["median_ms"]
                             for name, t in times.items() if name != "cublas"}
    result["status"] = "ok"
    try:
        selected = decode_gemm.linear(x, weights[0], persist=False)
        torch.cuda.synchronize()
        checked("select", selected)
        report = decode_gemm.selector(m, n, k, dtype, persist=False).report
        result["select"] = {"winner": report["winner"], "reason": report["reason"],
                            "selector": report["selector"]}
    except Exception as e:
        result["failures"]["select"] = f"{type(e).__name__}: {e}"[:2000]
    return result


# ---------------------------------------------------------------------------------------------
# The host device: numpy in and out, wall-clock; a smoke check of the script and the kernels.


def host_case(decode_gemm, dtype, shape, rounds, sweep):
    import ml_dtypes

    np_dtype = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}[dtype]
    m, n, k = shape
    rng = np.random.default_rng(32)
    x = rng.standard_normal((m, k)).astype(np_dtype)
    w = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np_dtype)
    want = x.astype(np.float32) @ w.astype(np.float32)
    result = {"dtype": dtype, "shape": [m, n, k], "failures": {}, "errors": {}, "plans": {}}
    launches = {"numpy": lambda: x.astype(np.float32) @ w.astype(np.float32)}
    for name, choices in variants(decode_gemm, dtype, shape, sweep):
        try:
            dispatch = decode_gemm.prepare(x, w, **choices)
            error = relative_error(dispatch(), want)
            result["errors"][name] = error
            if not error <= TOLERANCE[dtype]:
                raise AssertionError(f"max relative error {error:.3g} > {TOLERANCE[dtype]}")
            result["plans"][name] = dict(dispatch.plan)
            launches[name] = dispatch
        except Exception as e:
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
    samples = {name: [] for name in launches}
    names = list(launches)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            start = time.perf_counter()
            launches[name]()
            samples[name].append((time.perf_counter() - start) * 1e3)
    result["times"] = {name: {"median_ms": statistics.median(s), "samples_ms": s}
                       for name, s in samples.items()}
    result["status"] = "ok" if not result["failures"] else "failed"
    return result


def summary_line(result, copy_gbps):
    if result.get("status") != "ok" or "weight_GBps" not in result:
        return f"  failures: {result['failures']}"
    best = max((n for n in result["weight_GBps"] if n != "cublas"),
               key=lambda n: result["weight_GBps"][n], default=None)
    parts = [f"cublas {result['weight_GBps']['cublas']:.0f} GB/s "
             f"({result['weight_GBps']['cublas'] / copy_gbps:.2f} of copy)"]
    for name in [n for n in result["weight_GBps"] if n != "cublas"]:
        parts.append(f"{name} {result['weight_GBps'][name] / copy_gbps:.2f} of copy, "
                     f"{result['cublas_over'][name]:.2f}x cuBLAS")
    line = "  " + "; ".join(parts) + f"; best {best}"
    if result["failures"]:
        line += f"\n  failures: {sorted(result['failures'])}"
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the raw JSON results file to write")
    parser.add_argument("--quick", action="store_true", help="fewer cases and rounds")
    parser.add_argument("--rounds", type=int, default=None, help="timing rounds (ABBA)")
    parser.add_argument("--dtype", choices=DTYPES, action="append",
                        help="only this dtype (repeatable; default: bf16 and f16)")
    parser.add_argument("--sweep", action="store_true",
                        help="also gemv with the split count and the K step halved and doubled")
    parser.add_argument("--device", choices=("cuda", "host"), default=None,
                        help="METILE_DEVICE for this run (host: a smoke check, no GPU)")
    args = parser.parse_args()
    if args.device:
        os.environ["METILE_DEVICE"] = args.device
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "python"))
    import metile
    from metile_kernels import decode_gemm

    host = metile.device() != "cuda"
    torch = None
    if not host:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False  # the f32 reference product stays IEEE
    rounds = args.rounds or (4 if args.quick or host else 10)
    report = {"benchmark": "h200_decode_gemm", "issue": 32, "quick": args.quick,
              "sweep": args.sweep, "dtypes": list(args.dtype or DTYPES),
              "rounds": rounds, "machine": machine_info(torch, metile), "cases": []}
    if not host:
        report["copy_bandwidth"] = copy_bandwidth(torch, rounds)
        copy_gbps = report["copy_bandwidth"]["GBps"]
        print(f"copy bandwidth: {copy_gbps:.0f} GB/s", flush=True)
        l2_bytes = report["machine"].get("l2_bytes") or (60 << 20)
    cases = case_list(args.quick, host, tuple(args.dtype or DTYPES))
    started = time.perf_counter()
    for index, (dtype, shape) in enumerate(cases):
        print(f"[{index + 1}/{len(cases)}] {dtype} M N K = {shape} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
        if host:
            result = host_case(decode_gemm, dtype, shape, rounds, args.sweep)
            print(f"  errors {result['errors']}; failures {result['failures']}", flush=True)
        else:
            result = cuda_case(torch, decode_gemm, metile, dtype, shape, rounds, l2_bytes,
                               args.sweep)
            print(summary_line(result, copy_gbps), flush=True)
            if "select" in result:
                print(f"  metile.select: {result['select']['winner']}", flush=True)
        report["cases"].append(result)
        with open(args.out, "w") as f:  # after every case: a cut-off run keeps what it has
            json.dump(report, f, indent=1, default=str)
    if not host:
        report["copy_bandwidth_end"] = copy_bandwidth(torch, rounds)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1, default=str)
    failed = [c for c in report["cases"] if c.get("status") != "ok"]
    print(f"wrote {args.out}: {len(report['cases'])} cases, {len(failed)} with failures")


if __name__ == "__main__":
    main()
