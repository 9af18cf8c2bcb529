"""The harness's GPU side: both trees' exports, both sources built by this tree's cuda
device, outputs checked, then ABBA timing with CUDA events (see the package docstring)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.regression import paired
from benchmarks.regression.export import HERE, export, use_checkout

DEVICE = "cuda"  # the device that builds and runs both trees' sources


def log(line):
    print(line, flush=True)


def baseline_python(root, chosen):
    if chosen:
        return chosen
    venv = Path(root) / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def export_baseline(args):
    """The baseline tree's export, made by its Python with its metile in a subprocess."""
    python = baseline_python(args.baseline_root, args.baseline_python)
    with tempfile.TemporaryDirectory(prefix="metile-regression-") as folder:
        out = os.path.join(folder, "baseline.json")
        command = [python, str(HERE / "benchmarks" / "regression" / "export.py"),
                   "--root", args.baseline_root, "--build", args.baseline_build,
                   "--metile-block", str(args.metile_block), "--out", out]
        if args.quick:
            command.append("--quick")
        log(f"exporting the baseline: {' '.join(command)}")
        # Each tree traces with its own tracer: no traced IR shared through the disk cache.
        # METILE_COMMIT names this tree's commit, not the baseline's (git says that one).
        env = dict(os.environ, METILE_TRACE_CACHE="off")
        env.pop("METILE_COMMIT", None)
        done = subprocess.run(command, env=env)
        if done.returncode != 0:
            raise SystemExit(f"regression: the baseline's export failed (exit status "
                             f"{done.returncode}); its messages are above")
        with open(out) as f:
            return json.load(f)


def time_slots(arms, order, rounds, flush, shield_cycles):
    """[(sample, arm, ms per launch)]: per slot of `order`, the L2 flushed (when `flush`),
    the GPU held asleep while the host queues the launches (so that host launch cost stays
    out), then `rounds` back-to-back launches between two CUDA events."""
    import torch

    recorded = []
    for sample, arm in order:
        if flush is not None:
            flush.zero_()
        if shield_cycles:
            torch.cuda._sleep(shield_cycles)
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(rounds):
            arms[arm]()
        stop.record()
        recorded.append((sample, arm, start, stop))
    torch.cuda.synchronize()
    return [(sample, arm, start.elapsed_time(stop) / rounds)
            for sample, arm, start, stop in recorded]


def context_lost():
    """Why the CUDA context cannot be used any more (a sticky fault), or None."""
    import torch

    try:
        torch.cuda.synchronize()
    except Exception as e:
        return f"{type(e).__name__}: {e}"[:500]
    return None


def run_case(case, baseline, candidate, args, flush):
    import metile
    import torch
    from memory_bound.cases import TOLERANCE, relative_errors, within_tolerance
    from memory_bound.timing import SHIELD_CYCLES

    name = case.name()
    problem = paired.pairing_problem(baseline, candidate, DEVICE)
    if problem:
        return paired.failed_result(name, problem)
    inputs = case.make_inputs()
    references = case.references(inputs)
    arms, outputs = {}, {}
    for arm, entry in zip(paired.ARMS, (baseline, candidate)):
        built = metile._core.build_kernel(DEVICE, entry["source"], entry["abi"])
        outputs[arm] = case.outputs()
        arms[arm] = case.metile_launch(inputs, outputs[arm]).with_kernel(built)
        if list(arms[arm].grid) != list(entry["grid"]):
            return paired.failed_result(name, f"the {arm} tree exported the grid "
                                        f"{entry['grid']}, this tree's case launches "
                                        f"{list(arms[arm].grid)}")
    for arm in paired.ARMS:
        arms[arm]()
    metile.synchronize()
    for arm in paired.ARMS:
        errors = relative_errors(outputs[arm], references)
        if not within_tolerance(errors, case.dtype):
            return paired.failed_result(name, f"the {arm} kernel's relative errors {errors} are "
                                        f"over the {case.dtype} tolerance {TOLERANCE[case.dtype]}")
    del references
    for arm in paired.ARMS:  # warm-up: caches and clocks settle before the timed slots
        arms[arm]()
    slots = time_slots(arms, paired.abba_order(args.samples), args.rounds_per_sample,
                       flush if case.flush else None, SHIELD_CYCLES)
    del inputs, outputs
    torch.cuda.empty_cache()
    return paired.timed_result(name, baseline, candidate, slots, args.threshold)


def measure(args):
    started = time.perf_counter()
    use_checkout(HERE, args.build)  # this tree's metile, never an installed one
    import metile

    try:
        import torch
        import triton  # noqa: F401  (the cases import it)
    except ImportError as e:
        raise SystemExit(f"regression: needs torch and triton ({e}); run it on the GPU "
                         "machine") from None

    if metile.device() != DEVICE or not torch.cuda.is_available():
        raise SystemExit(f"regression: needs the {DEVICE} device and torch with CUDA (metile "
                         f"runs on '{metile.device()}')")
    baseline = export_baseline(args)
    log("exporting the candidate (this tree)")
    os.environ["METILE_TRACE_CACHE"] = "off"
    candidate = export(HERE, args.build, args.quick, args.metile_block,
                       lambda line: log(f"  [candidate] {line}"))
    from memory_bound.cases import case_list
    from memory_bound.timing import L2_BYTES

    exported = {arm: {e["case"]: e for e in tree["cases"]}
                for arm, tree in zip(paired.ARMS, (baseline, candidate))}
    cases = case_list(args.quick, args.metile_block)
    flush = torch.empty(2 * L2_BYTES // 4, device="cuda")
    results = []
    for i, case in enumerate(cases):
        name = case.name()
        missing = [arm for arm in paired.ARMS if name not in exported[arm]]
        try:
            result = (paired.failed_result(name, f"not exported by the {' and '.join(missing)}")
                      if missing else run_case(case, exported["baseline"][name],
                                               exported["candidate"][name], args, flush))
        except metile.KernelFaultError as e:  # the CUDA context is gone: nothing else can run
            results.append(paired.failed_result(name, f"KernelFaultError: {e}"))
            log(f"[{i + 1}/{len(cases)}] {paired.case_line(results[-1])}")
            results += [paired.failed_result(c.name(), "not run: an earlier kernel faulted")
                        for c in cases[i + 1:]]
            break
        except Exception as e:  # recorded; the other cases go on, if the GPU still can
            result = paired.failed_result(name, f"{type(e).__name__}: {e}"[:2000])
            lost = context_lost()
            if lost:
                result["why"] += f"; the CUDA context is unusable now ({lost})"
                results.append(result)
                log(f"[{i + 1}/{len(cases)}] {paired.case_line(result)}")
                results += [paired.failed_result(c.name(), "not run: the CUDA context is lost")
                            for c in cases[i + 1:]]
                break
        results.append(result)
        log(f"[{i + 1}/{len(cases)}] {time.perf_counter() - started:5.0f} s  "
            f"{paired.case_line(result)}")
    settings = {"threshold": args.threshold, "rounds_per_sample": args.rounds_per_sample,
                "samples": args.samples, "quick": args.quick, "metile_block": args.metile_block,
                "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                "elapsed_s": time.perf_counter() - started}
    trees = {"baseline": baseline["tree"], "candidate": candidate["tree"]}
    with open(args.out, "w") as f:
        json.dump(paired.report(settings, trees, results), f, indent=1)
    for line in paired.summary_lines(results, args.threshold):
        log(line)
    log(f"raw figures: {args.out}")
    return paired.exit_status(results)


def main():
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.regression",
                                     description="meTile's memory-bound kernels from two trees, "
                                     "paired in one process (ABBA, CUDA events)")
    parser.add_argument("--baseline-root", required=True, help="the other (built) checkout")
    parser.add_argument("--baseline-build", default="build", help="its build folder")
    parser.add_argument("--baseline-python", help="its Python (default: its .venv's if it has "
                        "one, else this one)")
    parser.add_argument("--build", default="build", help="this tree's build folder")
    parser.add_argument("--rounds-per-sample", type=int, default=5,
                        help="back-to-back launches per timed slot")
    parser.add_argument("--samples", type=int, default=10, help="ABBA samples per case")
    parser.add_argument("--threshold", type=float, default=0.15,
                        help="a change beyond this fraction is a regression or an improvement")
    parser.add_argument("--quick", action="store_true", help="the few small cases of --quick")
    parser.add_argument("--metile-block", type=int, default=1024, help="the kernels' BLOCK")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(),
                                                      "metile-paired-regression.json"),
                        help="the raw JSON (default: in the temporary folder, never a tracked "
                        "file)")
    args = parser.parse_args()
    if args.rounds_per_sample < 1 or args.samples < 1 or args.threshold <= 0:
        parser.error("--rounds-per-sample and --samples must be positive, --threshold above 0")
    return measure(args)
