"""Batched tile transposes on an NVIDIA GPU (the H200): meTile's ownership conversion against
the same kernel as a scalar scatter and against torch's transpose copy (issue 11):

    python benchmarks/h200_transpose.py [--quick] [--out FILE.json]
    METILE_DEVICE=host python benchmarks/h200_transpose.py --quick   # smoke check, no GPU

A batch of square TILE x TILE tiles (8, 16, 32) in f16 and f32, at a small batch and at one
of 256 MiB per tensor, is transposed tile by tile, one program per tile:

- owned: seed 004's transpose8 generalised to TILE: load in input order, convert_layout to
  the layout that swaps the row and column bits of the index (ThreadLayout((3, 4, 5, 0, 1, 2))
  for 8x8), store each thread's value at its transposed coordinates;
- registers (16x16 and 32x32): four adjacent elements per thread on both sides: loaded in
  runs of four input columns, converted to runs of four output columns (lanes and registers
  trade bits inside each SIMD group: shuffles and selects, no threadgroup memory);
- scatter: the same kernel without convert_layout: each thread stores the value it loaded
  at the transposed coordinates (a strided scalar store);
- torch_contiguous: x.transpose(-1, -2).contiguous(); torch_copy: out.copy_(x.transpose(-1,
  -2)) into a preallocated output.

Every candidate's output is first checked bit for bit (viewed as integers, so signed zeros
count) against torch's; one that fails is recorded and never timed. Timing reuses
memory_bound's: CUDA events, candidates interleaved in ABBA rounds, medians, inputs resident,
meTile's outputs preallocated, a flushed L2 for the small batch; the copy bandwidth of the
same run is the yardstick. On the host device (no torch) numpy is the reference and the
times are wall-clock medians of interleaved calls: a smoke check, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import metile
import numpy as np

TILES = (8, 16, 32)
DTYPES = ("f16", "f32")
ITEMSIZE = {"f16": 2, "f32": 4}
LARGE_BYTES = 256 << 20  # per tensor: several times the H200's 60 MB L2
SMALL_TILES = 1024
CANDIDATES = ("owned", "registers", "scatter", "torch_contiguous", "torch_copy")
HOST_CANDIDATES = ("owned", "registers", "scatter")
REGISTERS = 4  # values per thread of the registers candidate


@metile.kernel
def transpose_owned(source, destination, batches, TILE: metile.constexpr,
                    OUTPUT_LAYOUT: metile.constexpr):
    # With TILE=8 and ThreadLayout((3, 4, 5, 0, 1, 2)) this is seed 004's transpose8.
    inputs = metile.tensor(source, shape=(batches, TILE, TILE), access="read")
    outputs = metile.tensor(destination, shape=(batches, TILE, TILE), access="write")
    batch = metile.program_id(0)
    positions = metile.arange(0, TILE * TILE)
    values = inputs.load((batch, positions // TILE, positions % TILE))
    converted = metile.convert_layout(values, OUTPUT_LAYOUT)
    owned = metile.arange(0, TILE * TILE, layout=OUTPUT_LAYOUT)
    outputs.store((batch, owned % TILE, owned // TILE), converted)


@metile.kernel
def transpose_scatter(source, destination, batches, TILE: metile.constexpr):
    inputs = metile.tensor(source, shape=(batches, TILE, TILE), access="read")
    outputs = metile.tensor(destination, shape=(batches, TILE, TILE), access="write")
    batch = metile.program_id(0)
    positions = metile.arange(0, TILE * TILE)
    values = inputs.load((batch, positions // TILE, positions % TILE))
    outputs.store((batch, positions % TILE, positions // TILE), values)


@metile.kernel
def transpose_registers(source, destination, batches, TILE: metile.constexpr,
                        INPUT_LAYOUT: metile.constexpr, OUTPUT_LAYOUT: metile.constexpr):
    inputs = metile.tensor(source, shape=(batches, TILE, TILE), access="read")
    outputs = metile.tensor(destination, shape=(batches, TILE, TILE), access="write")
    batch = metile.program_id(0)
    positions = metile.arange(0, TILE * TILE, layout=INPUT_LAYOUT)
    values = inputs.load((batch, positions // TILE, positions % TILE))
    converted = metile.convert_layout(values, OUTPUT_LAYOUT)
    owned = metile.arange(0, TILE * TILE, layout=OUTPUT_LAYOUT)
    outputs.store((batch, owned % TILE, owned // TILE), converted)


def transpose_layout(tile):
    """The ownership whose thread t holds the element at the transpose of t's (row, column):
    the index's column bits and row bits swap places, one value per thread."""
    bits = tile.bit_length() - 1
    return metile.ThreadLayout(tuple(range(bits, 2 * bits)) + tuple(range(bits)))


def register_layouts(tile):
    """The registers candidate's input and output ownership: four values per thread, the
    register bits at the low column bits (four adjacent input elements) and then at the low
    row bits (four adjacent output elements); None below 16x16 (fewer than 32 threads)."""
    bits = tile.bit_length() - 1
    threads = 2 * bits - 2  # physical thread bits; the two register bits follow them
    if tile * tile // REGISTERS < 32:
        return None
    registers = (threads, threads + 1)
    source = registers + tuple(range(threads))
    destination = tuple(range(bits)) + registers + tuple(range(bits, threads))
    return (metile.ThreadLayout(source, elements_per_thread=REGISTERS),
            metile.ThreadLayout(destination, elements_per_thread=REGISTERS))


def prepare(name, tile, x, out, batches):
    """A prepared meTile candidate (owned, registers or scatter), or None where it does not
    apply."""
    if name == "owned":
        return transpose_owned[(batches,)].prepare(x, out, batches, TILE=tile,
                                                   OUTPUT_LAYOUT=transpose_layout(tile))
    if name == "registers":
        layouts = register_layouts(tile)
        return layouts and transpose_registers[(batches,)].prepare(
            x, out, batches, TILE=tile, INPUT_LAYOUT=layouts[0], OUTPUT_LAYOUT=layouts[1])
    return transpose_scatter[(batches,)].prepare(x, out, batches, TILE=tile)


def case_list(quick, host):
    if host:  # the emulator runs every thread: a few tiles
        return [(tile, dtype, batches) for tile in TILES for dtype in DTYPES for batches in (3,)]
    if quick:
        return [(tile, dtype, batches) for tile in TILES for dtype in DTYPES
                for batches in (SMALL_TILES, (32 << 20) // (tile * tile * ITEMSIZE[dtype]))]
    return [(tile, dtype, batches) for tile in TILES for dtype in DTYPES
            for batches in (SMALL_TILES, LARGE_BYTES // (tile * tile * ITEMSIZE[dtype]))]


def signed_values(shape, dtype):
    """Distinct-looking values with negative zeros among them (never all zero: a zero output
    would hide an unwritten one)."""
    rng = np.random.default_rng(11)
    x = (rng.integers(-1000, 1000, size=shape) / 8).astype(np.dtype(
        {"f16": np.float16, "f32": np.float32}[dtype]))
    x.reshape(-1)[::7] = -0.0
    return x


def integer_view(array):
    return array.view({2: np.uint16, 4: np.uint32}[array.dtype.itemsize])


def result_head(tile, dtype, batches):
    return {"kernel": f"transpose {tile}x{tile}", "dtype": dtype, "shape": [batches, tile, tile],
            "bytes_moved": 2 * batches * tile * tile * ITEMSIZE[dtype], "failures": {},
            "setup_s": {}}


def finish(result, times):
    """Bandwidth of each candidate and owned's time over the others' (below 1: owned faster)."""
    result["times"] = times
    owned = times["owned"]["median_ms"]
    result["GBps"] = {n: result["bytes_moved"] / (t["median_ms"] * 1e-3) / 1e9
                      for n, t in times.items()}
    result["metile_GBps"] = result["GBps"]["owned"]
    result["owned_over"] = {n: owned / t["median_ms"] for n, t in times.items() if n != "owned"}
    result["status"] = "ok"
    return result


# ---------------------------------------------------------------------------------------------
# The host device: numpy in, metile.Buffer out, wall-clock (runs on any device).


def numpy_case(tile, dtype, batches, rounds):
    result = result_head(tile, dtype, batches)
    x = signed_values((batches, tile, tile), dtype)
    want = integer_view(np.ascontiguousarray(x.transpose(0, 2, 1)))
    launches = {}
    for name in HOST_CANDIDATES:
        out = metile.Buffer.from_numpy(np.full_like(x, np.nan))
        start = time.perf_counter()
        try:
            launch = prepare(name, tile, x, out, batches)
            if launch is None:
                continue
            launch()
            if name == "owned":
                result["conversions"] = launch.execution_report["layout_conversions"]
            if not np.array_equal(integer_view(out.numpy()), want):
                raise AssertionError("output differs from numpy's transpose (bitwise)")
            launches[name] = launch
        except Exception as e:  # recorded; the other candidate goes on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
        result["setup_s"][name] = time.perf_counter() - start
    if "owned" not in launches:
        result["status"] = "failed"
        return result
    samples = {name: [] for name in launches}
    names = list(launches)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            start = time.perf_counter()
            launches[name]()
            samples[name].append((time.perf_counter() - start) * 1e3)
    return finish(result, {n: {"median_ms": statistics.median(s), "samples_ms": s}
                           for n, s in samples.items()})


# ---------------------------------------------------------------------------------------------
# The cuda device: torch tensors, CUDA events (memory_bound's timing).


def cuda_case(tile, dtype, batches, rounds, flush):
    import torch
    from memory_bound.timing import L2_BYTES, time_interleaved

    result = result_head(tile, dtype, batches)
    small = result["bytes_moved"] < 4 * L2_BYTES
    result.update({"l2": "flushed before each sample" if small else "data >> L2",
                   "rounds": rounds})
    x = (torch.randint(-1000, 1000, (batches, tile, tile), device="cuda") / 8).to(
        {"f16": torch.float16, "f32": torch.float32}[dtype])
    x.view(-1)[::7] = -0.0  # signed zeros among distinct values, as on the host
    int_dtype = {"f16": torch.int16, "f32": torch.int32}[dtype]
    want = x.transpose(-1, -2).contiguous().view(int_dtype)
    launches, outputs = {}, {}

    def poisoned():
        return torch.full_like(x, float("nan"))

    def ours(name):
        def make():
            out = poisoned()
            dispatch = prepare(name, tile, x, out, batches)
            if dispatch is not None and name == "owned":
                result["conversions"] = dispatch.execution_report["layout_conversions"]
            return dispatch, out
        return make

    def contiguous():
        holder = {}

        def call():
            holder["out"] = x.transpose(-1, -2).contiguous()
        return call, holder

    def copy():
        out = poisoned()
        return (lambda: out.copy_(x.transpose(-1, -2))), out

    makers = (ours("owned"), ours("registers"), ours("scatter"), contiguous, copy)
    for name, make in zip(CANDIDATES, makers):
        start = time.perf_counter()
        try:
            launches[name], outputs[name] = make()
            if launches[name] is None:  # the registers candidate below 16x16
                del launches[name]
                continue
            for _ in range(2):  # warm-up: compiles stay out of the timed region
                launches[name]()
            torch.cuda.synchronize()
            got = outputs[name]
            got = got["out"] if isinstance(got, dict) else got
            if not torch.equal(got.view(int_dtype), want):
                raise AssertionError("output differs from torch's transpose (bitwise)")
        except Exception as e:  # recorded; the other candidates go on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
            launches.pop(name, None)
        result["setup_s"][name] = time.perf_counter() - start
    del want
    if "owned" not in launches:
        result["status"] = "failed"
        return result
    return finish(result, time_interleaved(launches, rounds, 1, flush if small else None, True))


# ---------------------------------------------------------------------------------------------
# The run, its progress lines and its table.


def host_info():
    import platform
    import socket
    return {"host": socket.gethostname(), "python": platform.python_version(),
            "metile_device": metile.device()}


def mechanism(result):
    """How the compiler moved owned's values between threads (seed 004's table)."""
    return ", ".join(c["mechanism"] for c in result.get("conversions", [])) or "-"


def print_table(report):
    copy = report.get("copy_bandwidth", {}).get("GBps")
    if copy:
        print(f"Copy bandwidth (torch device-to-device, read + write): {copy:.0f} GB/s")
    print(f"Machine: {report['machine'].get('gpu', report['machine'].get('host'))}; "
          f"device {report['machine'].get('metile_device')}\n")
    names = [n for n in report["candidates"] if n != "owned"]
    print("| tile | dtype | batch | exchange | owned GB/s | of copy | "
          + " | ".join(f"owned/{n}" for n in names) + " |")
    print("|---" * (6 + len(names)) + "|")
    for r in report["cases"]:
        head = f"| {r['kernel'].split()[-1]} | {r['dtype']} | {r['shape'][0]} | {mechanism(r)} |"
        if r.get("status") != "ok":
            why = "; ".join(f"{n}: {m.splitlines()[0]}" for n, m in r["failures"].items())
            print(f"{head} failed: {why} |" + " |" * (1 + len(names)))
            continue
        of_copy = f"{r['metile_GBps'] / copy:.2f}" if copy else "-"
        ratios = " | ".join(f"{r['owned_over'][n]:.2f}" if n in r["owned_over"] else
                            "failed" if n in r["failures"] else "-" for n in names)
        print(f"{head} {r['metile_GBps']:.0f} | {of_copy} | {ratios} |")
    print("\nRatios are owned's median time over the other's (below 1: ownership conversion "
          "is faster)." + (" Host device: wall-clock, a smoke check." if not copy else ""))


def measure(args):
    started = time.perf_counter()
    host = metile.device() == "host"
    if not host:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import h200_memory_bound
        h200_memory_bound.import_gpu_stack()  # torch, triton, metile on cuda, or a clear exit
        import torch
        from memory_bound.timing import L2_BYTES, copy_bandwidth
    if args.out is None:
        args.out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                "host-transpose-quick.json" if host else "h200-transpose.json")
    cases = case_list(args.quick, host)
    rounds = 6 if args.quick else args.rounds
    candidates = HOST_CANDIDATES if host else CANDIDATES
    report = {"benchmark": "h200_transpose", "quick": args.quick, "candidates": candidates,
              "machine": host_info() if host else h200_memory_bound.machine_info(),
              "cases": []}
    print(f"h200_transpose: {len(cases)} cases x {len(candidates)} candidates on "
          f"{metile.device()}", flush=True)

    def save():
        report["elapsed_s"] = time.perf_counter() - started
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)

    if not host:
        report["copy_bandwidth"] = copy_bandwidth(LARGE_BYTES, 2 * rounds)
        print(f"copy bandwidth: {report['copy_bandwidth']['GBps']:.0f} GB/s", flush=True)
        flush = torch.empty(2 * L2_BYTES // 4, device="cuda")
    for i, (tile, dtype, batches) in enumerate(cases):
        try:
            result = (numpy_case(tile, dtype, batches, rounds) if host else
                      cuda_case(tile, dtype, batches, rounds, flush))
        except Exception as e:  # e.g. out of memory making inputs: recorded, the run goes on
            result = result_head(tile, dtype, batches)
            result.update(status="failed", failures={"case": f"{type(e).__name__}: {e}"[:2000]})
        report["cases"].append(result)
        line = f"{result['kernel']} {result['dtype']} x{batches} ({mechanism(result)}): "
        if result["status"] == "ok":
            line += " ".join(f"{n} {t['median_ms'] * 1e3:.1f}us ({result['GBps'][n]:.0f} GB/s)"
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
                raise SystemExit(f"h200_transpose: {report['aborted']}; partial results in "
                                 f"{args.out}")
            torch.cuda.empty_cache()
        save()
    print(f"raw figures: {args.out} ({report['elapsed_s']:.0f} s)\n", flush=True)
    print_table(report)
    return 0 if all(r["status"] == "ok" and not r["failures"] for r in report["cases"]) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small batches (smoke test)")
    parser.add_argument("--out", help="the raw JSON (default: results/h200-transpose.json, "
                        "on the host device results/host-transpose-quick.json)")
    parser.add_argument("--rounds", type=int, default=20, help="ABBA rounds per case")
    parser.add_argument("--table", metavar="FILE.json", help="print the table of a result file")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            print_table(json.load(f))
        return 0
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
