"""Triton kernels, the same source compiled by Triton and by meTile, on an NVIDIA GPU (issue 27):

    python benchmarks/h200_triton_sources.py [--quick] [--out FILE.json]

Each kernel of the Triton corpus (tests/python/triton_corpus/) is loaded twice (its load.py):
as written, for Triton, and with the import renamed for meTile, plus the edits the JSON lists
(none); both take the same launch options (the results before 82248d2 record meTile's calls
dropping `num_stages`, which it did not take then, as `dropped_options`). Every case's
outputs are checked against torch (an f32 product of the same inputs) before anything is timed;
a candidate that fails is recorded and never timed. Timing: CUDA events, candidates in ABBA
rounds, medians (benchmarks/memory_bound/timing.py); figures are TFLOP/s and meTile's time over
Triton's (below 1: meTile faster). The first call of each kernel, with empty caches (both
compilers' caches point at fresh folders before either is imported), is its cold compile.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

# Empty caches for the cold compiles, before either compiler is imported.
_CACHE = tempfile.mkdtemp(prefix="triton_corpus_cache_")
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(_CACHE, "triton"))
os.environ.setdefault("METILE_CACHE_DIR", os.path.join(_CACHE, "metile"))
os.environ.setdefault("METILE_DEVICE", "cuda")

TOLERANCE = {"bf16": 2e-2, "f16": 4e-3}  # max |out - ref| / max |ref|
# (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, num_stages): the tutorial's first
# config and a smaller one of its list.
MATMUL_TILES = ((128, 256, 64, 8, 3), (128, 128, 64, 4, 4))


def matmul_cases(quick):
    sizes = (4096,) if quick else (4096, 8192)
    return [("matmul", dtype, (s, s, s), tile) for dtype in ("bf16", "f16") for s in sizes
            for tile in MATMUL_TILES]


# (Z, H, N_CTX, HEAD_DIM), causal; BLOCK_M, BLOCK_N, num_warps, num_stages (Triton's fused
# attention tutorial's Hopper choice).
ATTENTION_CASES = (((4, 32, 4096, 128), False), ((4, 32, 4096, 128), True),
                   ((1, 16, 16384, 128), False), ((4, 32, 4096, 64), False))
ATTENTION_TILE = (128, 64, 8, 3)


def attention_cases(quick):
    cases = ATTENTION_CASES[:2] if quick else ATTENTION_CASES
    return [("attention", "bf16", shape, causal) for shape, causal in cases]


def relative_error(got, want):
    return float((got.float() - want).abs().max() / want.abs().max().clamp_min(1e-30))


def check_then_time(torch, result, calls, outputs, want, dtype, rounds, inner):
    """Runs each candidate once (its first call timed: a cold compile), checks its output
    against `want`, and times the ones that pass in ABBA rounds; fills `result`."""
    from memory_bound.timing import time_interleaved

    launches = {}
    for name, call in calls.items():
        try:
            start = time.perf_counter()
            call()
            torch.cuda.synchronize()
            result["first_call_s"][name] = time.perf_counter() - start
            error = relative_error(outputs[name], want)
        except Exception as e:  # recorded, never timed; the run goes on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
            continue
        result["errors"][name] = error
        if not error <= TOLERANCE[dtype]:
            result["failures"][name] = f"max relative error {error:.3g} over {TOLERANCE[dtype]}"
            continue
        launches[name] = call
    if launches:
        times = time_interleaved(launches, rounds, inner, None, False)
        result["times_ms"] = {n: t["median_ms"] for n, t in times.items()}
        result["TFLOPs"] = {n: result["flop"] / (t["median_ms"] * 1e-3) / 1e12
                            for n, t in times.items()}
        if "metile" in times and "triton" in times:
            result["metile_over_triton"] = (times["metile"]["median_ms"] /
                                            times["triton"]["median_ms"])
    return result


def case_head(kernel, dtype, shape, blocks, options, flop):
    return {"kernel": kernel, "dtype": dtype, "shape": list(shape), "blocks": blocks,
            "options": options, "flop": flop, "errors": {}, "failures": {}, "first_call_s": {}}


def run_matmul(torch, modules, dtype, shape, tile, rounds):
    m, n, k = shape
    bm, bn, bk, warps, stages = tile
    torch_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    a = torch.randn(m, k, device="cuda", dtype=torch_dtype)
    b = torch.randn(k, n, device="cuda", dtype=torch_dtype)
    blocks = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8}
    options = {"num_warps": warps, "num_stages": stages}
    result = case_head("matmul", dtype, shape, blocks, options, 2 * m * n * k)
    outputs = {name: torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
               for name in modules}
    calls = {name: (lambda module=module, c=outputs[name]:
                    module.matmul(a, b, c, **blocks, **options))
             for name, module in modules.items()}
    return check_then_time(torch, result, calls, outputs, a.float() @ b.float(), dtype, rounds, 5)


def run_attention(torch, modules, dtype, shape, causal, rounds):
    z, h, n, d = shape
    bm, bn, warps, stages = ATTENTION_TILE
    torch_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    q, k, v = (torch.randn(z, h, n, d, device="cuda", dtype=torch_dtype) for _ in range(3))
    scale = d ** -0.5
    sdpa = torch.nn.functional.scaled_dot_product_attention
    want = sdpa(q.float(), k.float(), v.float(), is_causal=causal, scale=scale)
    options = {"num_warps": warps, "num_stages": stages}
    # 4 Z H N^2 D for the two products, halved by a causal mask.
    result = case_head("attention", dtype, shape, {"BLOCK_M": bm, "BLOCK_N": bn}, options,
                       4 * z * h * n * n * d // (2 if causal else 1))
    result["causal"] = causal
    outputs = {name: torch.full_like(q, float("nan")) for name in [*modules, "sdpa"]}
    calls = {name: (lambda module=module, out=outputs[name]:
                    module.attention(q, k, v, out, scale, causal, bm, bn, **options))
             for name, module in modules.items()}
    calls["sdpa"] = lambda out=outputs["sdpa"]: out.copy_(sdpa(q, k, v, is_causal=causal,
                                                               scale=scale))
    return check_then_time(torch, result, calls, outputs, want, dtype, rounds, 3)


def print_table(report):
    print(f"{'case':44} {'meTile TF/s':>12} {'Triton TF/s':>12} {'time ratio':>11}")
    for r in report["cases"]:
        name = (f"{r['kernel']} {r['dtype']} {'x'.join(map(str, r['shape']))} "
                + "x".join(str(b) for b in r["blocks"].values() if isinstance(b, int) and b > 8)
                + (" causal" if r.get("causal") else ""))
        tf = r.get("TFLOPs", {})
        ratio = r.get("metile_over_triton")
        print(f"{name:44} {tf.get('metile', float('nan')):12.1f} "
              f"{tf.get('triton', float('nan')):12.1f} "
              f"{ratio if ratio is not None else float('nan'):11.3f}"
              + (f"  failures: {list(r['failures'])}" if r["failures"] else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4096 only")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", help="write the raw JSON here")
    parser.add_argument("--kernels", default="matmul,attention",
                        help="comma-separated: matmul, attention")
    args = parser.parse_args()
    import torch
    import triton
    from triton_corpus.load import load

    kernels = args.kernels.split(",")
    modules, edits = {}, {}
    for kernel in kernels:
        for compiler in ("triton", "metile"):
            modules.setdefault(kernel, {})[compiler], found = load(kernel, compiler)
            if compiler == "metile":
                edits[kernel] = found
    report = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__,
              "torch": torch.__version__, "edits": edits, "cases": []}
    cases = ((matmul_cases(args.quick) if "matmul" in kernels else []) +
             (attention_cases(args.quick) if "attention" in kernels else []))
    for kernel, dtype, shape, variant in cases:
        if kernel == "matmul":
            r = run_matmul(torch, modules["matmul"], dtype, shape, variant, args.rounds)
        else:
            r = run_attention(torch, modules["attention"], dtype, shape, variant, args.rounds)
        report["cases"].append(r)
        print(json.dumps({k: r[k] for k in ("dtype", "shape", "errors", "failures")}
                         | {"TFLOPs": r.get("TFLOPs")}), flush=True)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(report, f, indent=1)
    print_table(report)


if __name__ == "__main__":
    main()
