"""Timing: CUDA events in ABBA rounds, the copy bandwidth, host time per launch."""

from __future__ import annotations

import statistics
import time

import torch

from memory_bound.kernels import METILE_KERNELS, TRITON_KERNELS

# GPU sleep before a timed call: 0.5 ms at 1.98 GHz. torch.cuda._sleep is private in torch:
# without it, time without the shield.
SHIELD_CYCLES = 1_000_000 if hasattr(torch.cuda, "_sleep") else 0
L2_BYTES = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 60 * 2**20)


def time_interleaved(launches, rounds, inner, flush, shield):
    """Median milliseconds per call of each launch: CUDA events around `inner` back-to-back
    calls, the candidates in ABBA order round after round (drift hits all alike). With
    `shield`, the GPU sleeps before the start event while the host queues the calls, so
    the host's launch cost stays out (meTile's launches on torch tensors do not wait for
    their kernel, as Triton's do not)."""
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
    dispatch, an unprepared meTile call, a Triton launch, a torch
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
