#!/usr/bin/env python3
"""Reproduce the max-flow solver crossover (seed 000): runs the C++ benchmark max_flow_bench.

    python benchmarks/max_flow.py [--build-dir build] [--quick] [--repeats N] [--out PATH]

Builds nothing itself: configure and build the target first, e.g.
    cmake -S . -B build -G Ninja && ninja -C build max_flow_bench
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_binary(build_dir):
    candidates = [build_dir] if build_dir else []
    candidates += [os.path.join(ROOT, d) for d in sorted(os.listdir(ROOT)) if d.startswith("build")]
    for d in candidates:
        path = os.path.join(d, "benchmarks", "max_flow", "max_flow_bench")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", help="CMake build directory holding benchmarks/max_flow/max_flow_bench")
    parser.add_argument("--quick", action="store_true", help="small sizes only (1e4 and 1e5 arcs)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", help="JSON path (default benchmarks/results/<hostname>-max_flow.json)")
    args = parser.parse_args()
    binary = find_binary(args.build_dir)
    if binary is None:
        sys.exit("max_flow.py: max_flow_bench not found; build it with: ninja -C <build> max_flow_bench")
    command = [binary, "--repeats", str(args.repeats)]
    if args.quick:
        command.append("--quick")
    if args.out:
        command += ["--out", args.out]
    sys.exit(subprocess.call(command, cwd=ROOT))


if __name__ == "__main__":
    main()
