"""Memory-bound kernels on an NVIDIA GPU (the H200): meTile against torch eager, torch.compile
and Triton, in one run, as fractions of the copy bandwidth measured in that run:

    python benchmarks/h200_memory_bound.py [--quick] [--out FILE.json] [--budget-s S]
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
torch eager call and a CUDA graph replay, for a tiny vector add.

meTile kernels take torch CUDA tensors in place and launch on torch's current stream. Each
meTile launch waits for its kernel (docs/cuda.md), so its timed region also holds that wait
(the host wakes up and queues the stop event): a few microseconds on the large shapes, and
the decode loops include it per call. torch, triton and metile are imported only when
measuring: --table needs none.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

DTYPES = ("f16", "bf16", "f32")
LARGE_ELEMENTS = 1 << 28  # 0.5 GB (f16) to 1 GB (f32) per tensor
ROWS, COLS = 65536, 4096  # 2^28 elements
DECODE_COLS = 4096
EPS = 1e-6
CANDIDATES = ("metile", "triton", "compile", "eager")
# ||out - ref|| / ||ref|| against float64, by the inputs' dtype (METHOD.md's ranges).
TOLERANCE = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5}
MAX_ERROR_FACTOR = 8  # the largest element error may be this many tolerances
SHIELD_CYCLES = 1_000_000  # GPU sleep before a timed call: 0.5 ms at 1.98 GHz
# Rough cost of one case on an H200, mostly torch.compile's compile (seconds).
ESTIMATED_CASE_S = 6.0
ESTIMATED_FIXED_S = 40.0  # imports, inductor's first compile, copy and launch measurements


# ---------------------------------------------------------------------------------------------
# meTile kernels: the library's kernels (metile/kernels/*.cc) written in the Python eDSL, plus
# add+RMSNorm. Wrapped by metile.kernel once metile is imported.


def mt_vector_add(x, y, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask),
                 mask)


def mt_softmax(x, y, n_cols, row_stride, BLOCK: metile.constexpr):
    row_start = metile.program_id(0) * row_stride
    x_row = x + row_start
    y_row = y + row_start
    # Below any finite input; not -inf, so that exp(lowest - max) stays 0, never NaN.
    m = metile.full([BLOCK], -1e38, metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        m = metile.maximum(m, metile.where(in_row, v, -1e38))
    row_max = metile.max(m)
    s = metile.zeros([BLOCK], metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        s = s + metile.where(in_row, metile.exp(v - row_max), 0.0)
    inv_sum = 1.0 / metile.sum(s)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        metile.store(y_row + cols, metile.exp(v - row_max) * inv_sum, in_row)


def mt_rms_norm(x, w, y, n_cols, row_stride, eps, BLOCK: metile.constexpr):
    row_start = metile.program_id(0) * row_stride
    x_row = x + row_start
    y_row = y + row_start
    acc = metile.zeros([BLOCK], metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        v = metile.load(x_row + cols, cols < n_cols).to(metile.float32)
        acc = acc + v * v
    scale = metile.rsqrt(metile.sum(acc) / n_cols.to(metile.float32) + eps)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        v = metile.load(x_row + cols, in_row).to(metile.float32)
        weight = metile.load(w + cols, in_row).to(metile.float32)
        metile.store(y_row + cols, v * scale * weight, in_row)


def mt_add_rms_norm(x, residual, w, y, residual_out, n_cols, row_stride, eps,
                    BLOCK: metile.constexpr):
    """residual_out = x + residual (rounded to the dtype, as torch adds), y = RMSNorm of it.
    The second pass adds again instead of reading residual_out back: the row is in L2."""
    row_start = metile.program_id(0) * row_stride
    x_row = x + row_start
    r_row = residual + row_start
    h_row = residual_out + row_start
    y_row = y + row_start
    acc = metile.zeros([BLOCK], metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        h = metile.load(x_row + cols, in_row) + metile.load(r_row + cols, in_row)
        metile.store(h_row + cols, h, in_row)
        hf = h.to(metile.float32)
        acc = acc + hf * hf
    scale = metile.rsqrt(metile.sum(acc) / n_cols.to(metile.float32) + eps)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        in_row = cols < n_cols
        h = (metile.load(x_row + cols, in_row) + metile.load(r_row + cols, in_row)).to(
            metile.float32)
        weight = metile.load(w + cols, in_row).to(metile.float32)
        metile.store(y_row + cols, h * scale * weight, in_row)


def mt_row_sum(x, y, n_cols, row_stride, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x + row * row_stride
    acc = metile.zeros([BLOCK], metile.float32)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        acc = acc + metile.load(x_row + cols, cols < n_cols).to(metile.float32)
    metile.store(y + row, metile.sum(acc))


# ---------------------------------------------------------------------------------------------
# Triton kernels in the tutorials' forms (01 vector add, 02 fused softmax, 05 layer norm: one
# program per row, the whole row in one block). Wrapped by triton.jit once triton is imported.


def tt_vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def tt_softmax(out_ptr, in_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    numerator = tl.exp(x - tl.max(x, axis=0))
    out = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * n_cols + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


def tt_rms_norm(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def tt_add_rms_norm(x_ptr, r_ptr, w_ptr, y_ptr, h_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    h = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0) + tl.load(
        r_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(h_ptr + row * n_cols + cols, h, mask=mask)
    hf = h.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(hf * hf, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (hf * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def tt_row_sum(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(x, axis=0))


def tutorial_num_warps(block):
    """Tutorial 02's rule: more warps for longer rows."""
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


# ---------------------------------------------------------------------------------------------
# The cases: inputs, float64 references, the torch function, and each candidate's launch.


def torch_functions():
    F = torch.nn.functional

    def vector_add(x, y):
        return x + y

    def softmax(x):
        return torch.softmax(x, dim=-1)

    def rms_norm(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, EPS)

    def add_rms_norm(x, r, w):
        h = x + r
        return F.rms_norm(h, (h.shape[-1],), w, EPS), h

    def row_sum(x):
        return x.sum(dim=1, dtype=torch.float32)

    return {"vector_add": vector_add, "softmax": softmax, "rms_norm": rms_norm,
            "add_rms_norm": add_rms_norm, "row_sum": row_sum}


def rms_reference(h, w):
    h = h.double()
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * w.double()


class Case:
    """One kernel at one dtype and shape: its tensors, references and candidates."""

    def __init__(self, kernel, dtype, shape, block, decode=False):
        self.kernel, self.dtype, self.shape, self.block = kernel, dtype, shape, block
        self.decode = decode
        self.torch_dtype = {"f16": torch.float16, "bf16": torch.bfloat16,
                            "f32": torch.float32}[dtype]
        size = {"f16": 2, "bf16": 2, "f32": 4}[dtype]
        n = 1
        for s in shape:
            n *= s
        cols = shape[-1]
        self.bytes_moved = {  # each input read once, each output written once
            "vector_add": 3 * n * size,
            "softmax": 2 * n * size,
            "rms_norm": 2 * n * size + cols * size,
            "add_rms_norm": 4 * n * size + cols * size,
            "row_sum": n * size + shape[0] * 4,
        }[kernel]
        # Calls that do not move several times the L2 start from a flushed one (decode excepted).
        self.flush = not decode and self.bytes_moved < 4 * L2_BYTES

    def name(self):
        return f"{self.kernel} {self.dtype} {'x'.join(map(str, self.shape))}"

    def make_inputs(self):
        """Fresh random inputs (never zeros: they hide unwritten outputs)."""
        def randn(*shape):
            return torch.randn(*shape, device="cuda", dtype=self.torch_dtype)

        cols = self.shape[-1]
        if self.kernel == "vector_add":
            return (randn(*self.shape), randn(*self.shape))
        if self.kernel in ("softmax", "row_sum"):
            return (randn(*self.shape),)
        if self.kernel == "rms_norm":
            return (randn(*self.shape), randn(cols))
        return (randn(*self.shape), randn(*self.shape), randn(cols))

    def references(self, inputs):
        if self.kernel == "vector_add":
            return (inputs[0].double() + inputs[1].double(),)
        if self.kernel == "softmax":
            return (torch.softmax(inputs[0].double(), dim=-1),)
        if self.kernel == "rms_norm":
            return (rms_reference(inputs[0], inputs[1]),)
        if self.kernel == "add_rms_norm":
            h = inputs[0] + inputs[1]  # rounded to the dtype, as every candidate stores it
            return (rms_reference(h, inputs[2]), h.double())
        return (inputs[0].double().sum(dim=1),)

    def outputs(self):
        """Poisoned output tensors for meTile and Triton (NaN shows any unwritten element)."""
        out_dtype = torch.float32 if self.kernel == "row_sum" else self.torch_dtype
        out_shape = (self.shape[0],) if self.kernel == "row_sum" else self.shape
        count = 2 if self.kernel == "add_rms_norm" else 1
        return tuple(torch.full(out_shape, float("nan"), device="cuda", dtype=out_dtype)
                     for _ in range(count))

    def metile_launch(self, inputs, outs):
        k, block = METILE_KERNELS[self.kernel], self.block
        if self.kernel == "vector_add":
            n = inputs[0].numel()
            return k[(metile.cdiv(n, block),)].prepare(*inputs, outs[0], n, BLOCK=block)
        rows, cols = self.shape
        if self.kernel == "softmax":
            return k[(rows,)].prepare(inputs[0], outs[0], cols, cols, BLOCK=block)
        if self.kernel == "rms_norm":
            return k[(rows,)].prepare(*inputs, outs[0], cols, cols, EPS, BLOCK=block)
        if self.kernel == "add_rms_norm":
            return k[(rows,)].prepare(*inputs, *outs, cols, cols, EPS, BLOCK=block)
        return k[(rows,)].prepare(inputs[0], outs[0], cols, cols, BLOCK=block)

    def triton_launch(self, inputs, outs):
        k = TRITON_KERNELS[self.kernel]
        if self.kernel == "vector_add":
            n = inputs[0].numel()
            grid = (triton.cdiv(n, 1024),)
            return lambda: k[grid](*inputs, outs[0], n, BLOCK_SIZE=1024)
        rows, cols = self.shape
        block = triton.next_power_of_2(cols)
        warps = tutorial_num_warps(block)
        if self.kernel == "softmax":
            return lambda: k[(rows,)](outs[0], inputs[0], cols, BLOCK_SIZE=block, num_warps=warps)
        if self.kernel == "rms_norm":
            return lambda: k[(rows,)](*inputs, outs[0], cols, EPS, BLOCK_SIZE=block,
                                      num_warps=warps)
        if self.kernel == "add_rms_norm":
            return lambda: k[(rows,)](*inputs, *outs, cols, EPS, BLOCK_SIZE=block,
                                      num_warps=warps)
        return lambda: k[(rows,)](inputs[0], outs[0], cols, BLOCK_SIZE=block, num_warps=warps)


def relative_errors(outputs, references):
    """Per output: ||out - ref|| / ||ref|| ("norm") and max|out - ref| / max|ref| ("max",
    which a few wrong rows cannot hide in); NaN (unwritten or wrong) stays NaN."""
    errors = []
    for out, ref in zip(outputs, references):
        if out.shape != ref.shape:
            raise ValueError(f"output shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
        diff = out.double() - ref
        norm = torch.linalg.vector_norm(diff) / torch.linalg.vector_norm(ref)
        errors.append({"norm": float(norm), "max": float(diff.abs().max() / ref.abs().max())})
        del diff
    return errors


def within_tolerance(errors, dtype):
    """Written so that NaN fails."""
    tol = TOLERANCE[dtype]
    return all(e["norm"] <= tol and e["max"] <= MAX_ERROR_FACTOR * tol for e in errors)


# ---------------------------------------------------------------------------------------------
# Timing.


def time_interleaved(launches, rounds, inner, flush, shield):
    """Median milliseconds per call of each launch: CUDA events around `inner` back-to-back
    calls, the candidates in ABBA order round after round (drift hits all alike). With
    `shield`, the GPU sleeps before the start event while the host queues the calls, so
    the host's launch cost stays out; a meTile launch still waits for its kernel before the
    stop event is queued, which counts that wait against meTile."""
    names = list(launches)
    events = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            if flush is not None:
                flush.zero_()
            if shield and SHIELD_CYCLES:
                torch.cuda._sleep(SHIELD_CYCLES)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(inner):
                launches[name]()
            stop.record()
            events[name].append((start, stop))
    torch.cuda.synchronize()
    samples = {name: [a.elapsed_time(b) / inner for a, b in pairs]
               for name, pairs in events.items()}
    return {name: {"median_ms": statistics.median(s), "min_ms": min(s), "max_ms": max(s),
                   "samples_ms": s} for name, s in samples.items()}


def copy_bandwidth(nbytes, rounds):
    """Device-to-device copy through torch, counting bytes read plus bytes written."""
    src = torch.randn(nbytes // 4, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    timed = time_interleaved({"copy": lambda: dst.copy_(src)}, rounds, 1, None, True)["copy"]
    del src, dst
    torch.cuda.empty_cache()
    return {"bytes_per_copy": 2 * nbytes, "median_ms": timed["median_ms"],
            "samples_ms": timed["samples_ms"],
            "GBps": 2 * nbytes / (timed["median_ms"] * 1e-3) / 1e9}


def launch_overhead(launches_per_round, rounds):
    """Host microseconds per launch of a tiny vector add (1024 f32): a prepared meTile
    dispatch (which waits for its kernel), an unprepared meTile call, a Triton launch, a torch
    eager call and a CUDA graph replay of the eager call; rounds in ABBA order."""
    n = 1024
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    outs = {name: torch.full((n,), float("nan"), device="cuda") for name in
            ("metile_dispatch", "metile_call", "triton", "eager", "graph")}
    add = METILE_KERNELS["vector_add"]
    dispatch = add[(1,)].prepare(x, y, outs["metile_dispatch"], n, BLOCK=1024)
    tt = TRITON_KERNELS["vector_add"]

    def eager():
        torch.add(x, y, out=outs["eager"])

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch.add(x, y, out=outs["graph"])
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.add(x, y, out=outs["graph"])
    launches = {
        "metile_dispatch": dispatch,
        "metile_call": lambda: add[(1,)](x, y, outs["metile_call"], n, BLOCK=1024),
        "triton": lambda: tt[(1,)](x, y, outs["triton"], n, BLOCK_SIZE=1024),
        "eager": eager,
        "graph": graph.replay,
    }
    for launch in launches.values():  # warm-up: compiles and caches stay out of the loop
        launch()
    torch.cuda.synchronize()
    expected = x + y
    for name, out in outs.items():
        if not torch.equal(out, expected):
            raise RuntimeError(f"launch overhead: {name} computed a wrong vector add")
    per_round = {name: [] for name in launches}
    names = list(launches)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            launch = launches[name]
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(launches_per_round):
                launch()
            per_round[name].append((time.perf_counter() - start) / launches_per_round * 1e6)
            torch.cuda.synchronize()
    return {name: {"median_us": statistics.median(s), "samples_us": s}
            for name, s in per_round.items()}


# ---------------------------------------------------------------------------------------------
# One case: check every candidate, then time those that passed.


def run_case(case, torch_fns, compiled, rounds, inner, flush):
    result = {"kernel": case.kernel, "dtype": case.dtype, "shape": list(case.shape),
              "bytes_moved": case.bytes_moved, "metile_block": case.block,
              "l2": ("hot (decode: back-to-back calls)" if case.decode else
                     "flushed before each sample" if case.flush else "data >> L2"),
              "calls_per_sample": inner, "rounds": rounds,
              "shield_cycles": 0 if case.decode else SHIELD_CYCLES,
              "failures": {}, "errors": {},
              "setup_s": {}}
    inputs = case.make_inputs()
    references = case.references(inputs)
    fn = torch_fns[case.kernel]
    key = (case.kernel, case.dtype)
    launches, outputs = {}, {}

    def setup(name, make):
        start = time.perf_counter()
        try:
            launches[name], outputs[name] = make()
            for _ in range(2):  # warm-up: compiles stay out of the timed region
                launches[name]()
            torch.cuda.synchronize()
        except Exception as e:  # recorded; the other candidates go on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
            launches.pop(name, None)
        result["setup_s"][name] = time.perf_counter() - start

    def ours():
        outs = case.outputs()
        return case.metile_launch(inputs, outs), outs

    def theirs():
        outs = case.outputs()
        return case.triton_launch(inputs, outs), outs

    def returned(f):
        holder = {}

        def call():
            r = f(*inputs)
            holder["out"] = r if isinstance(r, tuple) else (r,)
        return call, holder

    def compiled_fn():
        if key not in compiled:
            compiled[key] = torch.compile(fn, dynamic=False)
        return returned(compiled[key])

    setup("metile", ours)
    setup("triton", theirs)
    setup("compile", compiled_fn)
    setup("eager", lambda: returned(fn))
    for name in list(launches):
        got = outputs[name]
        got = got["out"] if isinstance(got, dict) else got
        try:
            errors = relative_errors(got, references)
        except Exception as e:
            errors, result["failures"][name] = None, f"{type(e).__name__}: {e}"
        if errors is not None:
            result["errors"][name] = errors
            if not within_tolerance(errors, case.dtype):
                result["failures"][name] = (f"relative errors {errors} over the {case.dtype} "
                                            f"tolerance {TOLERANCE[case.dtype]} (max: x"
                                            f"{MAX_ERROR_FACTOR})")
        if name in result["failures"]:
            launches.pop(name)
    del references
    if "metile" not in launches:
        result["status"] = "failed"
        return result
    result["times"] = time_interleaved(launches, rounds, inner, flush, not case.decode)
    ours_ms = result["times"]["metile"]["median_ms"]
    result["metile_GBps"] = case.bytes_moved / (ours_ms * 1e-3) / 1e9
    result["metile_over"] = {name: ours_ms / t["median_ms"]
                             for name, t in result["times"].items() if name != "metile"}
    result["status"] = "ok"
    return result


def case_list(quick, block):
    if quick:  # every kernel once, dtypes rotated, small shapes and one decode row
        shapes = {"vector_add": (1 << 22,), "softmax": (1024, COLS), "rms_norm": (1, DECODE_COLS),
                  "add_rms_norm": (1024, COLS), "row_sum": (1024, COLS)}
        return [Case(k, DTYPES[i % 3], s, block, decode=s[0] == 1)
                for i, (k, s) in enumerate(shapes.items())]
    cases = []
    for kernel in ("vector_add", "softmax", "rms_norm", "add_rms_norm", "row_sum"):
        large = (LARGE_ELEMENTS,) if kernel == "vector_add" else (ROWS, COLS)
        decode = (DECODE_COLS,) if kernel == "vector_add" else (1, DECODE_COLS)
        for dtype in DTYPES:
            cases += [Case(kernel, dtype, large, block),
                      Case(kernel, dtype, decode, block, decode=True)]
    return cases


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
    props = torch.cuda.get_device_properties(0)
    info = {"host": socket.gethostname(), "gpu": torch.cuda.get_device_name(0),
            "multiprocessors": props.multi_processor_count,
            "memory_bytes": props.total_memory, "l2_bytes": L2_BYTES,
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
    """torch, triton and metile, imported here so that --table needs none of them."""
    global torch, triton, tl, metile, L2_BYTES, METILE_KERNELS, TRITON_KERNELS, SHIELD_CYCLES
    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError as e:
        raise SystemExit(f"h200_memory_bound: needs torch and triton ({e}); run it on the GPU "
                         "machine, or use --table FILE.json to print a result") from None
    if not torch.cuda.is_available():
        raise SystemExit("h200_memory_bound: torch sees no CUDA GPU")
    import metile
    if metile.device() != "cuda":
        raise SystemExit(f"h200_memory_bound: metile runs on the '{metile.device()}' device, "
                         "not cuda (METILE_DEVICE, docs/cuda.md)")
    L2_BYTES = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 60 * 2**20)
    if not hasattr(torch.cuda, "_sleep"):  # private in torch: time without the shield
        print("h200_memory_bound: this torch has no torch.cuda._sleep; timing without it")
        SHIELD_CYCLES = 0
    METILE_KERNELS = {name: metile.kernel(globals()["mt_" + name]) for name in
                      ("vector_add", "softmax", "rms_norm", "add_rms_norm", "row_sum")}
    TRITON_KERNELS = {name: triton.jit(globals()["tt_" + name]) for name in METILE_KERNELS}
    # Each torch function is compiled for 3 dtypes x 2 shapes: keep every graph cached.
    for limit in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 64)


L2_BYTES = 60 * 2**20


def measure(args):
    started = time.perf_counter()
    import_gpu_stack()
    cases = case_list(args.quick, args.metile_block)
    rounds = 6 if args.quick else args.rounds
    print(f"h200_memory_bound: {len(cases)} cases x {len(CANDIDATES)} candidates; estimated "
          f"{ESTIMATED_FIXED_S + ESTIMATED_CASE_S * len(cases):.0f} s (mostly torch.compile), "
          f"budget {args.budget_s:.0f} s", flush=True)
    report = {"benchmark": "h200_memory_bound", "quick": args.quick, "machine": machine_info(),
              "tolerance": TOLERANCE, "max_error_factor": MAX_ERROR_FACTOR, "eps": EPS,
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


# ---------------------------------------------------------------------------------------------
# Reporting.


def case_line(result):
    shape = "x".join(map(str, result["shape"]))
    head = f"{result['kernel']} {result['dtype']} {shape}"
    if result.get("status") != "ok":
        return f"{head}: FAILED {result.get('failures')}"
    times = " ".join(f"{n} {t['median_ms'] * 1e3:.1f}us" for n, t in result["times"].items())
    others = f" (not timed: {', '.join(result['failures'])})" if result["failures"] else ""
    return f"{head}: {result['metile_GBps']:.0f} GB/s; {times}{others}"


def ratio(result, name):
    value = result.get("metile_over", {}).get(name)
    if value is not None:
        return f"{value:.2f}"
    return "failed" if name in result.get("failures", {}) else "-"


def print_table(report):
    copy = report["copy_bandwidth"]["GBps"]
    print(f"Copy bandwidth (torch device-to-device, read + write): {copy:.0f} GB/s"
          + (f" at the start, {report['copy_bandwidth_end']['GBps']:.0f} GB/s at the end"
             if "copy_bandwidth_end" in report else ""))
    print(f"GPU: {report['machine'].get('gpu')}, driver {report['machine'].get('driver')}, "
          f"torch {report['machine'].get('torch')}, triton {report['machine'].get('triton')}\n")
    print("| case | dtype | shape | ours GB/s | of copy | ours/compile | ours/triton "
          "| ours/eager |")
    print("|---|---|---|---|---|---|---|---|")
    for r in report["cases"]:
        shape = "x".join(map(str, r["shape"]))
        if r.get("status") != "ok":
            why = "; ".join(f"{n}: {m.splitlines()[0] if m else m}"
                            for n, m in r.get("failures", {}).items())
            print(f"| {r['kernel']} | {r['dtype']} | {shape} | failed: {why} | | | | |")
            continue
        print(f"| {r['kernel']} | {r['dtype']} | {shape} | {r['metile_GBps']:.0f} | "
              f"{r['metile_GBps'] / copy:.2f} | {ratio(r, 'compile')} | {ratio(r, 'triton')} | "
              f"{ratio(r, 'eager')} |")
    for s in report.get("skipped", []):
        print(f"| {s['case']} | skipped: {s['why']} | | | | | | |")
    print("\nLarge shapes: device time per call (data >> L2). Decode rows (one row): time per "
          "call over back-to-back calls, host launch cost included; a meTile launch waits for "
          "its kernel.")
    if report.get("aborted"):
        print(f"\nThe run was aborted {report['aborted']}.")
    overhead = report.get("launch_overhead")
    if overhead:
        print("\nHost time per launch, tiny vector add (1024 f32):\n")
        if "failed" in overhead:
            print(f"failed: {overhead['failed']}")
        else:
            print("| launch | median us |")
            print("|---|---|")
            for name, v in overhead.items():
                print(f"| {name} | {v['median_us']:.1f} |")


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
    parser.add_argument("--metile-block", type=int, default=1024, help="meTile's BLOCK")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            print_table(json.load(f))
        return
    measure(args)


if __name__ == "__main__":
    sys.exit(main())
