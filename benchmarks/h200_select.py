"""The guarded runtime on real operations: metile.select between the framework's operation and
meTile's library kernels (metile_kernels.candidates) for RMSNorm, softmax, add+RMSNorm and
vector add, at a large shape and at a decode shape (one row of 4096), in one run:

    python benchmarks/h200_select.py [--quick] [--out FILE.json]            # cuda, vs torch
    python benchmarks/h200_select.py --device host --quick [--native numpy|mlx]

Every decision goes through the selector exactly as a user's call would: each candidate's
outputs pass the numerical gate against the native outputs first, then the ready ones and the
native operation are timed in order-interleaved provisional and finalist rounds (CUDA events
on torch's stream on the GPU, the synchronised wall clock on the host), medians per entrant,
5% headroom to switch. The JSON keeps each decision's full report: gate errors, the medians of
every round, the winner and why. Where meTile loses, the decision is native and says so.
"""

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

EPS = 1e-5
FAMILIES = ("rms_norm", "softmax", "add_rms_norm", "vector_add")


def shapes(device, quick):
    """(name, shape) of the large and the decode case."""
    if device == "host":
        return [("large", (64, 1024) if quick else (256, 4096)), ("decode", (1, 4096))]
    return [("large", (4096, 8192) if quick else (16384, 8192)), ("decode", (1, 4096))]


def natives_torch():
    import torch
    import torch.nn.functional as F

    def rms_norm(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, EPS)

    def add_rms_norm(x, residual, w):
        h = x + residual
        return F.rms_norm(h, (h.shape[-1],), w, EPS), h

    return {"rms_norm": rms_norm, "softmax": lambda x: torch.softmax(x, dim=-1),
            "add_rms_norm": add_rms_norm, "vector_add": lambda x, y: x + y}


def natives_numpy():
    def rms_norm(x, w):
        xf = x.astype(np.float32)
        return (xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS) * w).astype(x.dtype)

    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def add_rms_norm(x, residual, w):
        h = x + residual
        return rms_norm(h, w), h

    return {"rms_norm": rms_norm, "softmax": softmax, "add_rms_norm": add_rms_norm,
            "vector_add": lambda x, y: x + y}


def natives_mlx():
    import mlx.core as mx

    def add_rms_norm(x, residual, w):
        h = mx.array(x) + mx.array(residual)
        return mx.fast.rms_norm(h, mx.array(w), EPS), h

    return {"rms_norm": lambda x, w: mx.fast.rms_norm(mx.array(x), mx.array(w), EPS),
            "softmax": lambda x: mx.softmax(mx.array(x), axis=-1, precise=True),
            "add_rms_norm": add_rms_norm,
            "vector_add": lambda x, y: mx.array(x) + mx.array(y)}


def candidates_for(family, blocks):
    from metile_kernels import candidates

    make = {"rms_norm": lambda b: candidates.rms_norm(EPS, b), "softmax": candidates.softmax,
            "add_rms_norm": lambda b: candidates.add_rms_norm(EPS, b),
            "vector_add": candidates.vector_add}[family]
    return [make(b) for b in blocks]


def arguments(family, shape, dtype, device, rng):
    rows, cols = shape
    count = {"rms_norm": 1, "softmax": 1, "add_rms_norm": 2, "vector_add": 2}[family]
    arrays = [rng.standard_normal(shape, dtype=np.float32) for _ in range(count)]
    if family in ("rms_norm", "add_rms_norm"):
        arrays.append(rng.standard_normal(cols, dtype=np.float32))
    if device == "cuda":
        import torch

        torch_dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dtype]
        return [torch.from_numpy(a).to("cuda", torch_dtype) for a in arrays]
    return [a.astype({"f16": np.float16, "f32": np.float32}[dtype]) for a in arrays]


def machine(device):
    import metile

    info = {"python": platform.python_version(), "numpy": np.__version__,
            "metile_device": metile.device(), "metile_commit": os.environ.get("METILE_COMMIT")}
    if device == "cuda":
        import torch

        info.update(gpu=torch.cuda.get_device_name(0), torch=torch.__version__,
                    torch_cuda=torch.version.cuda)
    return info


def summary(report):
    """One line per case: the decision, the native and the fastest candidate's provisional
    medians, and their ratio (native time over candidate time: above 1, the kernel is faster)."""
    lines = [f"{'case':<36} {'decision':<10} {'native ms':>10} {'best ms':>10} {'ratio':>7}  "
             "best candidate"]
    for case in report["cases"]:
        name = f"{case['family']} {case['shape_name']} {case['dtype']}"
        entrants = case.get("report", {}).get("selector", {}).get("candidates", [])
        timed = [e for e in entrants if e["provisional_median_s"] is not None]
        if len(timed) < 2:
            lines.append(f"{name:<36} {case['decision']:<10} {case['reason'][:80]}")
            continue
        native = timed[0]["provisional_median_s"]
        best = min(timed[1:], key=lambda e: e["provisional_median_s"])
        lines.append(f"{name:<36} {case['decision']:<10} {native * 1e3:>10.4f} "
                     f"{best['provisional_median_s'] * 1e3:>10.4f} "
                     f"{native / best['provisional_median_s']:>7.3f}  {best['name']}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "host"), default="cuda")
    parser.add_argument("--native", choices=("torch", "numpy", "mlx"),
                        help="the framework (default: torch on cuda, numpy on host)")
    parser.add_argument("--quick", action="store_true", help="smaller large shapes, one dtype")
    parser.add_argument("--samples", type=int, default=None, help="timings per round")
    parser.add_argument("--out", default=None, help="the results JSON (default under results/)")
    args = parser.parse_args()
    native_name = args.native or ("torch" if args.device == "cuda" else "numpy")
    if (args.device == "cuda") != (native_name == "torch"):
        raise SystemExit("h200_select: torch is the native framework on cuda, numpy or mlx on "
                         "the host")
    os.environ["METILE_DEVICE"] = args.device
    import metile

    if metile.device() != args.device:
        raise SystemExit(f"h200_select: metile runs on '{metile.device()}', not {args.device}")
    natives = {"torch": natives_torch, "numpy": natives_numpy, "mlx": natives_mlx}[native_name]()
    dtypes = ["f32"] if args.device == "host" else (["f16"] if args.quick else
                                                    ["f16", "bf16", "f32"])
    blocks = (256, 1024) if args.device == "host" else (1024, 4096)
    samples = args.samples or (3 if args.quick else 7)
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                   f"{'h200' if args.device == 'cuda' else 'host'}-select"
                                   f"{'-quick' if args.quick else ''}.json")
    started = time.perf_counter()
    report = {"benchmark": "h200_select", "device": args.device, "native": native_name,
              "quick": args.quick, "samples": samples, "machine": machine(args.device),
              "cases": []}
    rng = np.random.default_rng(0)
    cases = [(f, s, d) for f in FAMILIES for s in shapes(args.device, args.quick) for d in dtypes]
    for i, (family, (shape_name, shape), dtype) in enumerate(cases):
        case = {"family": family, "shape_name": shape_name, "shape": list(shape), "dtype": dtype}
        try:
            selected = metile.select(native=natives[family],
                                     candidates=candidates_for(family, blocks),
                                     example_args=arguments(family, shape, dtype, args.device,
                                                            rng),
                                     family=family, samples=samples, persist=False)
            case.update(decision=selected.report["decision"], winner=selected.report["winner"],
                        reason=selected.report["reason"], report=selected.report)
        except Exception as e:  # recorded, the run goes on
            case.update(decision="failed", reason=f"{type(e).__name__}: {e}"[:2000])
        report["cases"].append(case)
        print(f"[{i + 1}/{len(cases)}] {time.perf_counter() - started:5.0f} s  {family} "
              f"{shape_name} {list(shape)} {dtype}: {case['decision']}: {case['reason']}",
              flush=True)
        if args.device == "cuda":
            import torch

            torch.cuda.empty_cache()
    report["elapsed_s"] = time.perf_counter() - started
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"raw figures: {out} ({report['elapsed_s']:.0f} s)\n\n{summary(report)}")


if __name__ == "__main__":
    sys.exit(main())
