"""The PTX route against the CUDA C++ route on an NVIDIA GPU (issue 33), in one run:

    python benchmarks/h200_ptx_route.py OUT.json [--rounds N]

Vector add, softmax and RMSNorm (the library kernels, f32) are compiled twice: with the
default route (CUDA C++, NVRTC) and with Schedule(route="ptx") (meTile's PTX, loaded by the
driver). Every output is checked against torch before anything is timed; a failing candidate
is recorded and not timed. Timing: CUDA events, the two routes interleaved ABBA over --rounds
rounds, the median per route, and the ratio PTX / C++ (below 1: PTX faster). The SASS of both
routes is disassembled where the tools exist (PTX: ptxas; C++: nvcc -cubin on the emitted
source with NVRTC's options) and each route's instruction mix recorded (metile.sass). Raw
figures go to OUT.json.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

ROUTES = ("source", "ptx")


def cases(torch):
    from metile_kernels.rmsnorm import rms_norm_rows
    from metile_kernels.softmax import softmax_rows
    from metile_kernels.vector_add import vector_add

    n = 1 << 26
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    rows, cols = 8192, 4096
    m = torch.randn(rows, cols, device="cuda")
    w = torch.randn(cols, device="cuda")
    eps = 1e-6
    # Ragged shapes for the checks: a tail that no block fills.
    xr, yr = torch.randn(1000003, device="cuda"), torch.randn(1000003, device="cuda")
    mr = torch.randn(37, 3001, device="cuda")
    wr = torch.randn(3001, device="cuda")

    def rms_ref(a, wt):
        return a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + eps) * wt

    return [
        {"name": "vector_add", "bytes": 3 * 4 * n,
         "run": lambda s, o, a=x, b=y: vector_add[(a.numel() + 1023) // 1024](
             a, b, o, a.numel(), BLOCK=1024, SCHEDULE=s),
         "out": lambda: torch.empty_like(x), "ref": lambda: x + y,
         "ragged": (lambda s, o: vector_add[(xr.numel() + 1023) // 1024](
             xr, yr, o, xr.numel(), BLOCK=1024, SCHEDULE=s),
                    lambda: torch.empty_like(xr), lambda: xr + yr)},
        {"name": "softmax", "bytes": 2 * 4 * rows * cols,
         "run": lambda s, o: softmax_rows[(rows,)](m, o, cols, cols, BLOCK=1024, SCHEDULE=s),
         "out": lambda: torch.empty_like(m), "ref": lambda: torch.softmax(m, -1),
         "ragged": (lambda s, o: softmax_rows[(mr.shape[0],)](
             mr, o, mr.shape[1], mr.shape[1], BLOCK=1024, SCHEDULE=s),
                    lambda: torch.empty_like(mr), lambda: torch.softmax(mr, -1))},
        {"name": "rms_norm", "bytes": 3 * 4 * rows * cols,
         "run": lambda s, o: rms_norm_rows[(rows,)](m, w, o, cols, cols, eps, BLOCK=1024,
                                                    SCHEDULE=s),
         "out": lambda: torch.empty_like(m), "ref": lambda: rms_ref(m, w),
         "ragged": (lambda s, o: rms_norm_rows[(mr.shape[0],)](
             mr, wr, o, mr.shape[1], mr.shape[1], eps, BLOCK=1024, SCHEDULE=s),
                    lambda: torch.empty_like(mr), lambda: rms_ref(mr, wr))},
    ]


def check(torch, run, make_out, ref, schedule):
    out = make_out()
    run(schedule, out)
    torch.cuda.synchronize()
    expected = ref()
    err = (out - expected).abs().max().item()
    ok = torch.allclose(out, expected, rtol=1e-4, atol=1e-5)
    return ok, err


def cuda_sass(source):
    """SASS of the C++ route's source through nvcc (NVRTC's options), or why not."""
    from metile import sass
    nvcc = sass.find_tool("nvcc")
    if not nvcc:
        return None, "nvcc not found"
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "k.cu"), os.path.join(d, "k.cubin")
        open(src, "w").write(source)
        done = subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-std=c++17", src, "-o", out],
                              capture_output=True, text=True)
        if done.returncode:
            return None, done.stderr[:1000]
        return sass.disassemble(open(out, "rb").read()), None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    import torch
    import metile
    from metile import sass
    if metile.device() != "cuda":
        raise SystemExit(f"h200_ptx_route: metile runs on '{metile.device()}', not cuda")
    schedules = {r: metile.Schedule(route=r) for r in ROUTES}
    report = {"benchmark": "h200_ptx_route", "gpu": torch.cuda.get_device_name(0),
              "rounds": args.rounds, "cases": []}
    for case in cases(torch):
        entry = {"name": case["name"], "bytes": case["bytes"], "routes": {}}
        report["cases"].append(entry)
        for route in ROUTES:
            r = entry["routes"][route] = {}
            try:
                r["ok"], r["max_abs_error"] = check(torch, case["run"], case["out"], case["ref"],
                                                    schedules[route])
                ok2, err2 = check(torch, *case["ragged"], schedules[route])
                r["ragged_ok"], r["ragged_max_abs_error"] = ok2, err2
                r["ok"] = r["ok"] and ok2
            except Exception as e:  # recorded, never timed
                r["ok"], r["error"] = False, f"{type(e).__name__}: {e}"[:2000]
            print(f"{case['name']} {route}: {'ok' if r['ok'] else 'FAILED'} {r}", flush=True)
        timed = [r for r in ROUTES if entry["routes"][r].get("ok")]
        outs = {r: case["out"]() for r in timed}
        times = {r: [] for r in timed}
        for i in range(args.rounds):
            order = timed if i % 2 == 0 else list(reversed(timed))
            for route in order:
                start, end = torch.cuda.Event(True), torch.cuda.Event(True)
                start.record()
                case["run"](schedules[route], outs[route])
                end.record()
                end.synchronize()
                times[route].append(start.elapsed_time(end) * 1e-3)
        for route in timed:
            med = statistics.median(times[route])
            entry["routes"][route].update(
                {"median_s": med, "times_s": times[route], "GBps": case["bytes"] / med / 1e9})
        if len(timed) == 2:
            entry["ptx_over_source"] = (entry["routes"]["ptx"]["median_s"] /
                                        entry["routes"]["source"]["median_s"])
        print(json.dumps({k: v for k, v in entry.items() if k != "routes"}), flush=True)
    report["sass"] = sass_mixes(torch, metile, sass)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {args.out}")


def sass_mixes(torch, metile, sass):
    """Each library kernel's SASS instruction mix on both routes, from its compiled source."""
    from metile_kernels.rmsnorm import _rms_norm_rows_reread
    from metile_kernels.softmax import softmax_rows
    from metile_kernels.vector_add import vector_add
    a = torch.randn(4096, device="cuda")
    m = torch.randn(4, 4096, device="cuda")
    kernels = {
        "vector_add": (vector_add, (4,), (a, a, torch.empty_like(a), a.numel()), {"BLOCK": 1024}),
        "softmax": (softmax_rows, (4,), (m, torch.empty_like(m), 4096, 4096), {"BLOCK": 1024}),
        "rms_norm": (_rms_norm_rows_reread, (4,), (m, a, torch.empty_like(m), 4096, 1e-6),
                     {"BLOCK": 1024}),
    }
    mixes = {}
    for name, (kernel, grid, args, constexprs) in kernels.items():
        for route in ROUTES:
            key = f"{name}/{route}"
            try:
                dispatch = kernel[grid].prepare(*args, SCHEDULE=metile.Schedule(route=route),
                                                **constexprs)
                source = dispatch.source
                if route == "ptx":
                    text = sass.sass_of_ptx(source)
                else:
                    text, why = cuda_sass(source)
                    if text is None:
                        mixes[key] = {"unavailable": why}
                        continue
                mixes[key] = sass.instruction_mix(text)
            except Exception as e:
                mixes[key] = {"unavailable": f"{type(e).__name__}: {e}"[:1000]}
            print(key, json.dumps(mixes[key]), flush=True)
    return mixes


if __name__ == "__main__":
    main()
