"""Affine-quantised weights on an NVIDIA GPU (the H200), issue 30: meTile's dequantising matmul
(metile_kernels.quantized_matmul.quantized_linear, MLX's int4/int8 layout, group 64, bf16
activations) beside torch's bf16 matmul (cuBLAS) of the same shapes and torch dequantising the
weights then multiplying, and seed 000's quantised SwiGLU MLP at decode beside the bf16 MLP
under torch.compile, in one run:

    python benchmarks/h200_quant.py OUT.json [--rounds N] [--quick]
    python benchmarks/h200_quant.py OUT.json --device host     # smoke check, no GPU

Matmul cases: M = 1, 4, 16, 2048 with N = K = 4096 and 8192, bits 4 and 8. MLP: hidden 4096,
intermediate 14336, int4 group 64, M = 1 and 4, both gate/up schedules. Every candidate's
output is checked against an f32 product of the same dequantised weights before anything is
timed (largest error over largest reference value <= 2e-2 for bf16); a failing candidate is
recorded and not timed. Timing: CUDA events around each call, candidates in ABBA order round
after round, medians; figures are milliseconds, the weights' bytes (packed words, scales and
biases) per second as a fraction of the measured device-to-device copy bandwidth, and the
ratio to cuBLAS bf16. The raw figures go to OUT.json and a table to stdout. On the host device
(numpy, no torch) the shapes are tiny and the times wall-clock: a check of the kernels and of
this script, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

GROUP = 64
TOLERANCE = 2e-2  # bf16: max |out - ref| / max |ref|


def cases(quick, host):
    if host:
        return [(m, 256, 256, bits) for bits in (4, 8) for m in (1, 4, 16, 64)]
    sizes = (4096,) if quick else (4096, 8192)
    rows = (1, 16) if quick else (1, 4, 16, 2048)
    return [(m, n, n, bits) for n in sizes for bits in (4, 8) for m in rows]


def relative_error(got, want):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    return float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))


def weights_of(rng, n, k, bits):
    """(bf16 weights, MLX-layout triple, the dequantised weights in f32)."""
    import ml_dtypes

    from metile_kernels import affine_quant as aq

    w = (rng.standard_normal((n, k), dtype=np.float32) * 0.02).astype(ml_dtypes.bfloat16)
    wq, scales, biases = aq.quantize(w, GROUP, bits)
    dequantised = aq.dequantize(wq, scales, biases, GROUP, bits).astype(np.float32)
    return w, (wq, scales, biases), dequantised


def weight_bytes(triple):
    return sum(int(a.nbytes) for a in triple)


# ---- host: numpy arrays, wall clock -------------------------------------------------------

def host_case(rng, m, n, k, bits, rounds):
    import ml_dtypes

    from metile_kernels.quantized_matmul import quantized_linear

    _, triple, dequantised = weights_of(rng, n, k, bits)
    x = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    want = x.astype(np.float32) @ dequantised.T
    got = quantized_linear(x, *triple, GROUP, bits)
    result = {"M": m, "N": n, "K": k, "bits": bits, "errors": {"metile": relative_error(got,
                                                                                      want)}}
    if result["errors"]["metile"] > TOLERANCE:
        result["failed"] = ["metile"]
        return result
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        quantized_linear(x, *triple, GROUP, bits)
        times.append((time.perf_counter() - start) * 1e3)
    result["median_ms"] = {"metile": statistics.median(times)}
    return result


# ---- cuda: torch tensors, CUDA events ------------------------------------------------------

def time_interleaved(launches, rounds):
    """Median milliseconds per call of each launch, ABBA order, CUDA events."""
    import torch

    names = list(launches)
    for name in names:  # warm: compiles, autotunes, caches
        launches[name]()
    events = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            launches[name]()
            stop.record()
            events[name].append((start, stop))
    torch.cuda.synchronize()
    return {name: statistics.median(a.elapsed_time(b) for a, b in pairs)
            for name, pairs in events.items()}


def copy_bandwidth(rounds):
    """Device-to-device copy of 1 GiB through torch, bytes read plus written per second."""
    import torch

    src = torch.empty(2**28, device="cuda")
    dst = torch.empty_like(src)
    ms = time_interleaved({"copy": lambda: dst.copy_(src)}, rounds)["copy"]
    del src, dst
    torch.cuda.empty_cache()
    return {"GBps": 2 * 2**30 / (ms * 1e-3) / 1e9, "median_ms": ms}


def to_torch(triple):
    import torch

    wq, scales, biases = triple
    words = torch.from_numpy(wq.view(np.int32)).cuda()
    as_torch = lambda a: torch.from_numpy(a.astype(np.float32)).cuda().to(torch.bfloat16)  # noqa
    return words.view(torch.uint32), words, as_torch(scales), as_torch(biases)


def torch_dequantise(words_i32, scales, biases, bits):
    """The weights [N, K] in bf16 from the packed words (torch ops, timed as a peer)."""
    import torch

    shifts = torch.arange(0, 32, bits, device="cuda", dtype=torch.int32)
    codes = (words_i32.unsqueeze(-1) >> shifts) & ((1 << bits) - 1)
    codes = codes.reshape(words_i32.shape[0], -1).to(torch.bfloat16)
    expand = lambda a: a.repeat_interleave(GROUP, dim=1)  # noqa: E731
    return expand(scales) * codes + expand(biases)


def cuda_case(rng, m, n, k, bits, rounds, copy_gbps):
    import torch

    from metile_kernels.quantized_matmul import quantized_linear

    w, triple, dequantised = weights_of(rng, n, k, bits)
    words_u32, words_i32, scales, biases = to_torch(triple)
    w_bf16 = torch.from_numpy(w.astype(np.float32)).cuda().to(torch.bfloat16)
    x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    want = (x.float() @ torch.from_numpy(dequantised).cuda().T).cpu().numpy()
    launches = {
        "metile": lambda: quantized_linear(x, words_u32, scales, biases, GROUP, bits, out=out),
        "torch_dequant_matmul": lambda: x @ torch_dequantise(words_i32, scales, biases, bits).T,
        "cublas_bf16": lambda: torch.matmul(x, w_bf16.T, out=out),
    }
    result = {"M": m, "N": n, "K": k, "bits": bits, "group_size": GROUP, "errors": {}}
    result["errors"]["metile"] = relative_error(launches["metile"]().float().cpu(), want)
    result["errors"]["torch_dequant_matmul"] = relative_error(
        launches["torch_dequant_matmul"]().float().cpu(), want)
    failed = [name for name, e in result["errors"].items() if e > TOLERANCE]
    if failed:
        result["failed"] = failed
        for name in failed:
            launches.pop(name)
    ms = time_interleaved(launches, rounds)
    result["median_ms"] = ms
    if "metile" in ms:
        gbps = weight_bytes(triple) / (ms["metile"] * 1e-3) / 1e9
        result["metile_weight_GBps"] = gbps
        result["metile_weight_of_copy"] = gbps / copy_gbps
        result["speedup_over_cublas_bf16"] = ms["cublas_bf16"] / ms["metile"]
    return result


def cuda_mlp(rng, m, rounds):
    """Seed 000's MLP at decode: meTile's two launches (both schedules) against the bf16 MLP
    under torch.compile, residual added by both."""
    import torch

    from metile_kernels.quantized_mlp import quantized_swiglu_mlp

    hidden, intermediate, bits = 4096, 14336, 4
    dense, triples, torch_triples = [], [], []
    for shape in ((intermediate, hidden), (intermediate, hidden), (hidden, intermediate)):
        w, triple, dequantised = weights_of(rng, *shape, bits)
        dense.append(torch.from_numpy(dequantised).cuda().to(torch.bfloat16))
        triples.append(triple)
        torch_triples.append(to_torch(triple))
    gate, up, down = ((t[0], t[2], t[3]) for t in torch_triples)
    x = torch.randn(m, hidden, device="cuda").to(torch.bfloat16)
    residual = torch.randn(m, hidden, device="cuda").to(torch.bfloat16)

    def bf16_mlp(x, residual):
        g, u = x @ dense[0].T, x @ dense[1].T
        return residual + (torch.nn.functional.silu(g) * u) @ dense[2].T

    compiled = torch.compile(bf16_mlp)
    launches = {
        "metile_fused": lambda: quantized_swiglu_mlp(x, gate, up, down, GROUP, bits, residual),
        "metile_low_register": lambda: quantized_swiglu_mlp(x, gate, up, down, GROUP, bits,
                                                            residual, low_register=True),
        "torch_compile_bf16": lambda: compiled(x, residual),
    }
    f = lambda t: t.float()  # noqa: E731
    g, u = f(x) @ f(dense[0]).T, f(x) @ f(dense[1]).T
    h = (torch.nn.functional.silu(g) * u).to(torch.bfloat16)
    want = (f(residual) + f(h) @ f(dense[2]).T).cpu().numpy()
    result = {"M": m, "hidden": hidden, "intermediate": intermediate, "bits": bits,
              "group_size": GROUP, "errors": {}}
    for name in list(launches):
        result["errors"][name] = relative_error(launches[name]().float().cpu(), want)
    failed = [name for name, e in result["errors"].items() if e > TOLERANCE]
    if failed:
        result["failed"] = failed
        for name in failed:
            launches.pop(name)
    result["median_ms"] = time_interleaved(launches, rounds)
    return result


def print_table(report):
    print(f"device: {report['device']}")
    if "copy_bandwidth" in report:
        print(f"copy bandwidth: {report['copy_bandwidth']['GBps']:.0f} GB/s")
    for r in report["matmul"]:
        ms = r.get("median_ms", {})
        line = (f"M={r['M']:5d} N=K={r['N']:5d} int{r['bits']}  "
                + "  ".join(f"{name} {t:.4f} ms" for name, t in ms.items()))
        if "speedup_over_cublas_bf16" in r:
            line += (f"  | x cuBLAS bf16 {r['speedup_over_cublas_bf16']:.2f}, weights "
                     f"{r['metile_weight_GBps']:.0f} GB/s = {r['metile_weight_of_copy']:.2f} "
                     "of copy")
        if r.get("failed"):
            line += f"  FAILED {r['failed']} {r['errors']}"
        print(line)
    for r in report.get("mlp", []):
        print(f"MLP M={r['M']}: " + "  ".join(f"{n} {t:.4f} ms" for n, t in
                                             r["median_ms"].items())
              + (f"  FAILED {r['failed']}" if r.get("failed") else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the raw JSON result file")
    parser.add_argument("--device", choices=("cuda", "host"), help="metile's device")
    parser.add_argument("--rounds", type=int, default=20, help="ABBA rounds per case")
    parser.add_argument("--quick", action="store_true", help="fewer cases")
    args = parser.parse_args()
    if args.device:
        os.environ["METILE_DEVICE"] = args.device
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "python"))
    import metile

    device = metile.device()
    rng = np.random.default_rng(0)
    report = {"device": device, "group_size": GROUP, "activation_dtype": "bf16", "matmul": []}
    if device == "cuda":
        import torch

        report["gpu"] = torch.cuda.get_device_name(0)
        report["copy_bandwidth"] = copy_bandwidth(args.rounds)
        copy_gbps = report["copy_bandwidth"]["GBps"]
    for m, n, k, bits in cases(args.quick, device != "cuda"):
        if device == "cuda":
            result = cuda_case(rng, m, n, k, bits, args.rounds, copy_gbps)
        else:
            result = host_case(rng, m, n, k, bits, min(args.rounds, 3))
        report["matmul"].append(result)
        print(json.dumps({key: result[key] for key in ("M", "N", "bits")} |
                         {"median_ms": result.get("median_ms"), "errors": result["errors"]}),
              flush=True)
    if device == "cuda":
        report["mlp"] = [cuda_mlp(rng, m, args.rounds) for m in ((1,) if args.quick else (1, 4))]
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print_table(report)
    failures = [r for r in report["matmul"] + report.get("mlp", []) if r.get("failed")]
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
