"""GEMM on an NVIDIA GPU (the H200): meTile's matmul against cuBLAS (torch.matmul) and Triton's
tutorial matmul, and the fused leaky-epilogue GEMM against meTile's GEMM + a separate
pointwise launch and against torch.compile, in one run (issue 12):

    python benchmarks/h200_gemm.py [--quick] [--out FILE.json]
    python benchmarks/h200_gemm.py --table FILE.json            # the closing-note table
    python benchmarks/h200_gemm.py --quick --device host        # smoke check, no GPU

Cases: bf16 and f16 inputs and outputs at 4096^3 and 8192^3 and at decode shapes (M = 1, 4,
16 with N = K = 4096 and 8192); the epilogue, out = where(s > 0, s, 0.1 s) for s = (a @ b) *
alpha + beta with runtime alpha and beta, at 4096^3 and one decode shape. Every candidate's
output is checked against an f32 product of the same inputs before it is timed (the largest
error relative to the largest reference value within the output dtype's tolerance); one that
fails is recorded and never timed, and the run goes on. Timing reuses memory_bound's: CUDA
events, candidates interleaved in ABBA rounds, medians, inputs resident, outputs
preallocated (torch.compile's excepted); figures are TFLOP/s (2 M N K per call) and meTile's
time over each peer's. On the host device (numpy, no torch or Triton) the cases are tiny and
the times wall-clock: a smoke check of the kernels and the script, not a measurement.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time

import numpy as np

DTYPES = ("bf16", "f16")
TOLERANCE = {"bf16": 2e-2, "f16": 4e-3, "f32": 1e-4}  # max |out - ref| / max |ref|
BLOCKS = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16}
# Decode shapes (M <= 16): a 64-row tile would be mostly padding, and N / 64 programs too few
# for the GPU; 16-row, 32-column tiles with a longer K step instead.
DECODE_BLOCKS = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 64}


# The sm90 tensor_ops backend (wgmma_tma, docs/hopper.md): its 128 x 256 x 64 tile (the cold
# compile's), and the tiles it takes, of which each case measures every one and keeps the
# fastest (as Triton's candidate is autotuned): a decode shape needs narrow tiles to give the
# GPU's 132 SMs work, N / 256 = 16 programs at N = 4096.
TENSOR_OPS_BLOCKS = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}
TENSOR_OPS_TILES = ({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64},
                    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
                    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64})


def blocks_for(shape):
    return DECODE_BLOCKS if shape[0] <= 16 else BLOCKS
ALPHA, BETA = 0.5, -0.25
GEMM_CANDIDATES = ("metile", "tensor_ops", "cublas", "triton")
EPILOGUE_CANDIDATES = ("fused", "fused_tensor_ops", "separate", "cublas_pointwise",
                       "torch_compile")
HOST_GEMM_CANDIDATES = ("metile",)
HOST_EPILOGUE_CANDIDATES = ("fused", "separate")


def case_list(quick, host):
    """(kind, dtype, (M, N, K)) for kind gemm or epilogue."""
    if host:  # the emulator runs every thread: ragged tiny shapes
        shapes, epilogue = [(70, 45, 37), (1, 64, 48)], [(70, 45, 37)]
    elif quick:
        shapes, epilogue = [(4096, 4096, 4096), (1, 4096, 4096), (16, 4096, 4096)], \
            [(4096, 4096, 4096)]
    else:
        shapes = [(4096, 4096, 4096), (8192, 8192, 8192)] + [
            (m, nk, nk) for nk in (4096, 8192) for m in (1, 4, 16)]
        epilogue = [(4096, 4096, 4096), (16, 4096, 4096)]
    return ([("gemm", d, s) for d in DTYPES for s in shapes] +
            [("epilogue", d, s) for d in DTYPES for s in epilogue])


def leaky_reference(product):
    scaled = product * np.float32(ALPHA) + np.float32(BETA)
    return np.where(scaled > 0, scaled, scaled * np.float32(0.1))


def relative_error(got, want):
    """max |got - want| / max |want| (want in f32, got converted to f32)."""
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(got.astype(np.float32) - want))) / scale


def result_head(kind, dtype, shape):
    m, n, k = shape
    return {"kind": kind, "dtype": dtype, "shape": [m, n, k], "flop": 2 * m * n * k,
            "metile_blocks": blocks_for(shape), "failures": {}, "errors": {}, "setup_s": {}}


def finish(result, times, ours):
    """TFLOP/s of each candidate and `ours`'s time over each other's (below 1: ours faster)."""
    result["times"] = times
    result["TFLOPs"] = {n: result["flop"] / (t["median_ms"] * 1e-3) / 1e12
                        for n, t in times.items()}
    result[f"{ours}_over"] = {n: times[ours]["median_ms"] / t["median_ms"]
                              for n, t in times.items() if n != ours}
    result["status"] = "ok"
    return result


@functools.lru_cache(maxsize=None)
def kernels():
    """meTile's kernels (imported after --device is applied), made once."""
    import metile
    from metile_kernels.gemm import grid, matmul, matmul_leaky

    @metile.kernel
    def leaky(source, output, n, alpha, beta, BLOCK: metile.constexpr):
        offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
        inside = offsets < n
        scaled = metile.load(source + offsets, inside).to("f32") * alpha + beta
        metile.store(output + offsets, metile.where(scaled > 0, scaled, scaled * 0.1), inside)

    return metile, grid, matmul, matmul_leaky, leaky


def prepare_metile(kind, a, b, out, shape, scratch=None, tile=None):
    """The prepared meTile dispatches of a case: one for the GEMM (or the fused epilogue),
    or, for kind 'separate', the GEMM into `scratch` then the pointwise launch. `tile`: the
    tensor_ops kinds' blocks (default TENSOR_OPS_BLOCKS)."""
    metile, grid, matmul, matmul_leaky, leaky = kernels()
    m, n, k = shape
    blocks = blocks_for(shape)
    if kind in ("tensor_ops", "fused_tensor_ops"):
        blocks = dict(tile or TENSOR_OPS_BLOCKS, SCHEDULE=metile.Schedule(backend="tensor_ops"))
    tiles = grid(m, n, blocks["BLOCK_M"], blocks["BLOCK_N"])
    if kind == "fused_tensor_ops":
        return [matmul_leaky[tiles].prepare(a, b, out, m, n, k, ALPHA, BETA, **blocks)]
    if kind == "fused":
        return [matmul_leaky[tiles].prepare(a, b, out, m, n, k, ALPHA, BETA, **blocks)]
    if kind == "separate":
        return [matmul[tiles].prepare(a, b, scratch, m, n, k, **blocks),
                leaky[(metile.cdiv(m * n, 1024),)].prepare(scratch, out, m * n, ALPHA, BETA,
                                                          BLOCK=1024)]
    return [matmul[tiles].prepare(a, b, out, m, n, k, **blocks)]


# The checkout's root: source locations in reports are written relative to it, so a results
# file names no machine's paths.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def portable_json(value):
    """value as plain JSON data, its source locations relative to the checkout."""
    return json.loads(json.dumps(value, default=str).replace(CHECKOUT, ""))


def report_of(dispatch):
    report = getattr(dispatch, "execution_report", None)
    try:
        return portable_json(report)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# The host device: numpy in, numpy out, wall-clock.


def numpy_case(kind, dtype, shape, rounds):
    import ml_dtypes
    np_dtype = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}[dtype]
    result = result_head(kind, dtype, shape)
    m, n, k = shape
    rng = np.random.default_rng(12)
    a = rng.standard_normal((m, k)).astype(np_dtype)
    b = rng.standard_normal((k, n)).astype(np_dtype)
    product = a.astype(np.float32) @ b.astype(np.float32)
    want = leaky_reference(product) if kind == "epilogue" else product
    launches = {}
    names = HOST_EPILOGUE_CANDIDATES if kind == "epilogue" else HOST_GEMM_CANDIDATES
    for name in names:
        start = time.perf_counter()
        try:
            out = np.full((m, n), np.nan, np_dtype)
            scratch = np.full((m, n), np.nan, np_dtype)
            steps = prepare_metile(name, a, b, out, shape, scratch)
            for step in steps:
                step()
            check(result, name, out, want, dtype)
            launches[name] = steps
        except Exception as e:  # recorded; the other candidates go on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
        result["setup_s"][name] = time.perf_counter() - start
    ours = names[0]
    if ours not in launches:
        result["status"] = "failed"
        return result
    samples = {name: [] for name in launches}
    order = list(launches)
    for r in range(rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            start = time.perf_counter()
            for step in launches[name]:
                step()
            samples[name].append((time.perf_counter() - start) * 1e3)
    return finish(result, {n: {"median_ms": statistics.median(s), "samples_ms": s}
                           for n, s in samples.items()}, ours)


def check(result, name, got, want, dtype):
    error = relative_error(np.asarray(got), want)
    result["errors"][name] = error
    if not error <= TOLERANCE[dtype]:
        raise AssertionError(f"relative error {error:.3g} exceeds {TOLERANCE[dtype]:g} "
                             f"({dtype} output)")


# ---------------------------------------------------------------------------------------------
# The cuda device: torch tensors, CUDA events.


def triton_matmul():
    """Triton's matmul tutorial kernel (autotuned over a few of its configs, small-M ones
    added for the decode shapes), fp32 accumulation, output in the output tensor's dtype."""
    import triton
    import triton.language as tl

    configs = [triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                              "GROUP_SIZE_M": 8}, num_stages=stages, num_warps=warps)
               for bm, bn, bk, stages, warps in ((128, 256, 64, 3, 8), (128, 128, 64, 4, 4),
                                                 (64, 128, 64, 4, 4), (16, 128, 128, 4, 4),
                                                 (16, 64, 256, 4, 4))]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
               stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
               BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
        num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
        num_pid_in_group = GROUP_SIZE_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        offs_k = tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += BLOCK_SIZE_K * stride_bk
        c = accumulator.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    def launch(a, b, c):
        m, k = a.shape
        n = b.shape[1]
        kernel[lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]) *
                             triton.cdiv(n, meta["BLOCK_SIZE_N"]),)](
            a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1))
    return launch


def cuda_case(kind, dtype, shape, rounds, triton_launch, compiled_leaky, compiled_pointwise):
    import torch
    from memory_bound.timing import time_interleaved

    result = result_head(kind, dtype, shape)
    m, n, k = shape
    torch.backends.cuda.matmul.allow_tf32 = False  # the f32 reference product is exact f32
    torch_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    generator = torch.Generator(device="cuda").manual_seed(12)
    a = torch.randn((m, k), device="cuda", dtype=torch_dtype, generator=generator)
    b = torch.randn((k, n), device="cuda", dtype=torch_dtype, generator=generator)
    product = a.float() @ b.float()
    want = leaky_reference(product.cpu().numpy()) if kind == "epilogue" else product.cpu().numpy()
    del product

    def poisoned():
        return torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype)

    def fastest_tile(name):
        """Each of TENSOR_OPS_TILES checked, then timed (median of 20 after three warm-up
        launches: right after its compile a kernel's first launches ran slow, and a median of 10
        once picked the wrong tile); the fastest, with every tile's time in the result."""
        times = {}
        for tile in TENSOR_OPS_TILES:
            label = "x".join(str(tile[key]) for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
            try:
                out = poisoned()
                steps = prepare_metile(name, a, b, out, shape, tile=tile)
                steps[0]()
                torch.cuda.synchronize()
                check({"errors": {}}, label, out.float().cpu().numpy(), want, dtype)
                for _ in range(3):
                    steps[0]()
                samples = []
                for _ in range(20):
                    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
                        enable_timing=True)
                    begin.record()
                    steps[0]()
                    end.record()
                    torch.cuda.synchronize()
                    samples.append(begin.elapsed_time(end))
                times[label] = sorted(samples)[len(samples) // 2]
            except Exception as e:  # recorded; the other tiles go on
                times[label] = f"{type(e).__name__}: {e}"[:300]
        result.setdefault("tensor_ops_tiles_ms", {})[name] = times
        timed = [(ms, i) for i, ms in enumerate(times.values()) if isinstance(ms, float)]
        return TENSOR_OPS_TILES[min(timed)[1]] if timed else None

    def metile_steps(name):
        tile = fastest_tile(name) if name in ("tensor_ops", "fused_tensor_ops") else None
        if tile is not None:
            result.setdefault("tensor_ops_blocks", {})[name] = tile
        out, scratch = poisoned(), poisoned() if name == "separate" else None
        steps = prepare_metile(name, a, b, out, shape, scratch, tile=tile)
        if name in ("metile", "fused"):
            result["metile_report"] = report_of(steps[0])
        if name in ("tensor_ops", "fused_tensor_ops"):
            result["tensor_ops_plan"] = portable_json(steps[0].schedule_plan)
        return (lambda: [step() for step in steps]), out

    def cublas():
        out = poisoned()
        return (lambda: torch.matmul(a, b, out=out)), out

    def triton_():
        out = poisoned()
        return (lambda: triton_launch(a, b, out)), out

    def cublas_pointwise():  # cuBLAS, then the epilogue as one separate (compiled) pointwise op
        product, out = poisoned(), poisoned()

        def call():
            torch.matmul(a, b, out=product)
            compiled_pointwise(product, out)
        return call, out

    def torch_compile():
        holder = {}

        def call():
            holder["out"] = compiled_leaky(a, b)
        return call, holder

    makers = ({"fused": lambda: metile_steps("fused"),
               "fused_tensor_ops": lambda: metile_steps("fused_tensor_ops"),
               "separate": lambda: metile_steps("separate"),
               "cublas_pointwise": cublas_pointwise,
               "torch_compile": torch_compile} if kind == "epilogue" else
              {"metile": lambda: metile_steps("metile"),
               "tensor_ops": lambda: metile_steps("tensor_ops"),
               "cublas": cublas, "triton": triton_})
    launches = {}
    for name, make in makers.items():
        start = time.perf_counter()
        try:
            launch, out = make()
            for _ in range(2):  # warm-up: compiles and autotuning stay out of the timed region
                launch()
            torch.cuda.synchronize()
            got = out["out"] if isinstance(out, dict) else out
            check(result, name, got.float().cpu().numpy(), want, dtype)
            launches[name] = launch
        except Exception as e:  # recorded; the other candidates go on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
        result["setup_s"][name] = time.perf_counter() - start
    ours = next(iter(makers))
    if ours not in launches:
        result["status"] = "failed"
        return result
    result["rounds"] = rounds
    return finish(result, time_interleaved(launches, rounds, 1, None, True), ours)


# ---------------------------------------------------------------------------------------------
# The run, its progress lines and its table.


def case_name(r):
    m, n, k = r["shape"]
    return f"{r['kind']} {r['dtype']} {m}x{n}x{k}"


def print_table(report):
    host = report["machine"].get("metile_device") == "host"
    print(f"Machine: {report['machine'].get('gpu', report['machine'].get('host'))}; "
          f"device {report['machine'].get('metile_device')}\n")
    for kind, ours, names in (("gemm", "metile", report["gemm_candidates"]),
                              ("epilogue", "fused", report["epilogue_candidates"])):
        others = [n for n in names if n != ours]
        columns = ([kind, "dtype", "M x N x K", f"{ours} TFLOP/s"] +
                   [f"{n} TFLOP/s" for n in others] + [f"{ours}/{n}" for n in others])
        print("| " + " | ".join(columns) + " |")
        print("|---" * len(columns) + "|")
        for r in report["cases"]:
            if r["kind"] != kind:
                continue
            m, n, k = r["shape"]
            head = f"| {kind} | {r['dtype']} | {m}x{n}x{k} |"
            if r.get("status") != "ok":
                why = "; ".join(f"{c}: {e.splitlines()[0]}" for c, e in r["failures"].items())
                print(f"{head} failed: {why} |" + " |" * (2 * len(others)))
                continue
            cells = ([f"{r['TFLOPs'][ours]:.2f}"] +
                     [f"{r['TFLOPs'][c]:.1f}" if c in r["TFLOPs"] else "failed" for c in others] +
                     [f"{r[f'{ours}_over'][c]:.2f}" if c in r[f"{ours}_over"] else "-"
                      for c in others])
            print(f"{head} " + " | ".join(cells) + " |")
        print()
    print("Ratios are meTile's median time over the peer's (below 1: meTile is faster)."
          + (" Host device: wall-clock, a smoke check, no claim." if host else ""))


def host_info(device):
    import platform
    import socket
    return {"host": socket.gethostname(), "python": platform.python_version(),
            "metile_device": device}


def cold_compile_times(triton_launch):
    """Seconds from trace to cubin of one 4096^3 bf16 GEMM, cold (no trace, cubin or Triton
    cache): meTile's tensor_ops kernel beside the Triton tutorial kernel's first launch."""
    import tempfile
    import torch
    saved = {k: os.environ.get(k) for k in ("METILE_CACHE_DIR", "TRITON_CACHE_DIR")}
    times = {}
    with tempfile.TemporaryDirectory() as root:
        os.environ["METILE_CACHE_DIR"] = os.path.join(root, "metile")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(root, "triton")
        try:
            metile, grid, matmul, _, _ = kernels()
            a = torch.zeros(4096, 4096, device="cuda", dtype=torch.bfloat16)
            out = torch.empty_like(a)
            start = time.perf_counter()
            matmul.compile(a, a, out, 4096, 4096, 4096,
                           SCHEDULE=metile.Schedule(backend="tensor_ops"), **TENSOR_OPS_BLOCKS)
            times["metile_tensor_ops"] = time.perf_counter() - start
            start = time.perf_counter()
            triton_launch(a, a, out)
            torch.cuda.synchronize()
            times["triton_first_launch"] = time.perf_counter() - start
        except Exception as e:  # recorded, the run goes on
            times["error"] = f"{type(e).__name__}: {e}"[:500]
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    print(f"cold compile (trace -> cubin): {times}", flush=True)
    return times


def measure(args):
    started = time.perf_counter()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import metile
    host = metile.device() == "host"
    if not host:
        import h200_memory_bound
        h200_memory_bound.import_gpu_stack()  # torch, triton, metile on cuda, or a clear exit
        import torch
    if args.out is None:
        args.out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                "host-gemm-quick.json" if host else "h200-gemm.json")
    cases = case_list(args.quick, host)
    rounds = 4 if args.quick else args.rounds
    report = {"benchmark": "h200_gemm", "quick": args.quick, "blocks": BLOCKS,
              "decode_blocks": DECODE_BLOCKS,
              "tolerance": TOLERANCE, "alpha": ALPHA, "beta": BETA,
              "gemm_candidates": HOST_GEMM_CANDIDATES if host else GEMM_CANDIDATES,
              "epilogue_candidates": HOST_EPILOGUE_CANDIDATES if host else EPILOGUE_CANDIDATES,
              "machine": host_info("host") if host else h200_memory_bound.machine_info(),
              "cases": []}
    print(f"h200_gemm: {len(cases)} cases on {metile.device()}", flush=True)

    def save():
        report["elapsed_s"] = time.perf_counter() - started
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)

    if not host:
        triton_launch = triton_matmul()

        def leaky_graph(a, b):
            scaled = (a @ b) * ALPHA + BETA
            return torch.where(scaled > 0, scaled, scaled * 0.1)
        compiled_leaky = torch.compile(leaky_graph)

        def pointwise(product, out):
            scaled = product.float() * ALPHA + BETA
            out.copy_(torch.where(scaled > 0, scaled, scaled * 0.1))
        compiled_pointwise = torch.compile(pointwise)
        report["compile_s"] = cold_compile_times(triton_launch)
    for i, (kind, dtype, shape) in enumerate(cases):
        try:
            result = (numpy_case(kind, dtype, shape, rounds) if host else
                      cuda_case(kind, dtype, shape, rounds, triton_launch, compiled_leaky,
                                compiled_pointwise))
        except Exception as e:  # e.g. out of memory making inputs: recorded, the run goes on
            result = result_head(kind, dtype, shape)
            result.update(status="failed", failures={"case": f"{type(e).__name__}: {e}"[:2000]})
        report["cases"].append(result)
        line = case_name(result) + ": "
        if result["status"] == "ok":
            line += " ".join(f"{n} {t['median_ms']:.3f}ms ({result['TFLOPs'][n]:.2f} TFLOP/s)"
                             for n, t in result["times"].items())
            if result["failures"]:
                line += f" (not timed: {', '.join(result['failures'])})"
        else:
            line += f"FAILED {result['failures']}"
        print(f"[{i + 1}/{len(cases)}] {time.perf_counter() - started:5.0f} s  {line}",
              flush=True)
        if not host:
            lost = h200_memory_bound.context_lost()
            if lost:  # a kernel fault is sticky: nothing after it can run in this process
                report["aborted"] = f"after case {i + 1}: the CUDA context is unusable ({lost})"
                save()
                raise SystemExit(f"h200_gemm: {report['aborted']}; partial results in {args.out}")
            torch.cuda.empty_cache()
        save()
    print(f"raw figures: {args.out} ({report['elapsed_s']:.0f} s)\n", flush=True)
    print_table(report)
    return 0 if all(r["status"] == "ok" and not r["failures"] for r in report["cases"]) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few cases (smoke test)")
    parser.add_argument("--device", choices=("cuda", "host"),
                        help="metile's device (METILE_DEVICE); host runs tiny shapes")
    parser.add_argument("--out", help="the raw JSON (default: results/h200-gemm.json, on the "
                        "host device results/host-gemm-quick.json)")
    parser.add_argument("--rounds", type=int, default=10, help="ABBA rounds per case")
    parser.add_argument("--blocks", metavar="M,N,K",
                        help="meTile's BLOCK_M,BLOCK_N,BLOCK_K for the non-decode shapes "
                        f"(default {BLOCKS['BLOCK_M']},{BLOCKS['BLOCK_N']},{BLOCKS['BLOCK_K']})")
    parser.add_argument("--table", metavar="FILE.json", help="print the table of a result file")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            print_table(json.load(f))
        return 0
    if args.device:
        os.environ["METILE_DEVICE"] = args.device
    if args.blocks:
        BLOCKS.update(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K"),
                          (int(b) for b in args.blocks.split(","))))
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
