"""The SIMD-group GEMM's operand staging on an NVIDIA GPU (the H200): meTile's matmul under
Schedule(backend="simdgroup", staging="device") against the same kernel with
staging="threadgroup", and both against cuBLAS (torch.matmul), in one run:

    python benchmarks/h200_gemm_staging.py [--shape M N K] [--dtype bf16|f16] [--out FILE.json]

Every candidate's output is checked against an f32 product of the same inputs before it is
timed; timing reuses memory_bound's (CUDA events, candidates interleaved in ABBA rounds,
medians). Figures are TFLOP/s (2 M N K per call) and device staging's time over each peer's.
Needs a CUDA GPU and torch; it measures, it claims nothing.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

BLOCKS = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16}


def measure(shape, dtype, rounds):
    import torch

    import metile
    from memory_bound.timing import time_interleaved
    from metile_kernels.gemm import grid, matmul

    m, n, k = shape
    torch_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    generator = torch.Generator(device="cuda").manual_seed(12)
    a = torch.randn((m, k), device="cuda", dtype=torch_dtype, generator=generator)
    b = torch.randn((k, n), device="cuda", dtype=torch_dtype, generator=generator)
    want = a.float() @ b.float()
    scale = want.abs().max().item()
    result = {"shape": list(shape), "dtype": dtype, "blocks": BLOCKS, "rounds": rounds,
              "errors": {}, "plans": {}, "failures": {}}
    launches = {}
    for name in ("device", "threadgroup", "cublas"):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype)
        try:
            if name == "cublas":
                launch = (lambda o: lambda: torch.matmul(a, b, out=o))(out)
            else:
                schedule = metile.Schedule(backend="simdgroup", staging=name)
                dispatch = matmul[grid(m, n, BLOCKS["BLOCK_M"], BLOCKS["BLOCK_N"])].prepare(
                    a, b, out, m, n, k, SCHEDULE=schedule, **BLOCKS)
                plan = dispatch.schedule_plan
                result["plans"][name] = {c: plan[c]["value"] for c in ("backend", "staging")}
                launch = dispatch
            for _ in range(2):
                launch()
            torch.cuda.synchronize()
            error = (out.float() - want).abs().max().item() / scale
            result["errors"][name] = error
            if not error < 1e-2:
                raise AssertionError(f"relative error {error} against the f32 product")
            launches[name] = launch
        except Exception as e:  # recorded; the other candidates go on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
    times = time_interleaved(launches, rounds, 1, None, True)
    flops = 2.0 * m * n * k
    result["times"] = times
    result["tflops"] = {name: flops / (t["median_ms"] * 1e-3) / 1e12 for name, t in times.items()}
    if "device" in times:
        result["device_over"] = {name: times["device"]["median_ms"] / t["median_ms"]
                                 for name, t in times.items() if name != "device"}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", type=int, nargs=3, default=(4096, 4096, 4096))
    parser.add_argument("--dtype", choices=("bf16", "f16"), default="bf16")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", help="write the raw figures here (JSON)")
    args = parser.parse_args()
    result = measure(tuple(args.shape), args.dtype, args.rounds)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
