"""python -m metile.fuzz [--seed S] [--count C] [--minutes M] [--timeout T] [--findings FILE]

Runs cases S, S+1, ... (even seeds valid programs, odd seeds misuses) until C cases ran or
M minutes passed, in a child process, so that a crash or a hang (a case running past T
seconds) is a finding too and the run goes on with the next seed. Prints each finding and a
summary; appends each failing seed to FILE. Exits 1 if anything was found.
"""

import argparse
import os
import random
import select
import subprocess
import sys
import tempfile
import time


def worker(first, count):
    """The child: runs cases and reports each on stdout (``start S``, then ``ok S`` or
    ``finding S`` followed by the finding's text and an ``end`` line)."""
    from .runner import Finding, run_case

    for seed in range(first, first + count):
        print(f"start {seed}", flush=True)
        try:
            run_case(seed)
            print(f"ok {seed}", flush=True)
        except Finding as finding:
            print(f"finding {seed}\n{finding}\nend", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m metile.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    parser.add_argument("--count", type=int, default=None, help="cases to run")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    parser.add_argument("--timeout", type=float, default=120, help="seconds a case may take")
    parser.add_argument("--findings", default=None, help="file the failing seeds go to")
    parser.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    count = args.count if args.count is not None else (None if args.minutes else 100)
    deadline = time.monotonic() + 60 * args.minutes if args.minutes else None
    print(f"fuzz: from seed {seed}", flush=True)
    ran, found, end = 0, [], None if count is None else seed + count

    def report(failing, text):
        found.append(failing)
        print(f"--- finding, seed {failing}:\n{text}", flush=True)
        if args.findings:
            with open(args.findings, "a") as out:
                out.write(f"{failing}\n")

    while (end is None or seed < end) and (deadline is None or time.monotonic() < deadline):
        batch = 1000 if end is None else end - seed
        seed, executed = _run_batch(seed, batch, args.timeout, deadline, report)
        ran += executed
    print(f"fuzz: {ran} cases, {len(found)} findings"
          + (f" (seeds {', '.join(map(str, found))})" if found else ""), flush=True)
    return 1 if found else 0


def _worker_command(first, count):
    return [sys.executable, "-m", "metile.fuzz", "--worker", str(first), str(count)]


def _run_batch(first, count, timeout, deadline, report):
    """Runs seeds first.. in one child until it ends, crashes or hangs, calling
    report(seed, text) for each finding. Returns the next seed to run and the cases run."""
    command = _worker_command(first, count)
    errors = tempfile.TemporaryFile("w+")
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors,
                             env=dict(os.environ, PYTHONFAULTHANDLER="1"))
    current, executed, buffer, collecting = None, 0, "", None
    started = time.monotonic()
    while True:
        ready = select.select([child.stdout], [], [], 0.1)[0]
        chunk = os.read(child.stdout.fileno(), 1 << 16).decode(errors="replace") if ready else ""
        if chunk:
            buffer += chunk
            *lines, buffer = buffer.split("\n")
            for line in lines:
                if collecting is not None:
                    if line == "end":
                        report(current, "\n".join(collecting))
                        executed, current, collecting = executed + 1, None, None
                    else:
                        collecting.append(line)
                elif line.startswith("start "):
                    current, started = int(line.split()[1]), time.monotonic()
                elif line.startswith("ok "):
                    executed, current = executed + 1, None
                elif line.startswith("finding "):
                    collecting = []
        elif ready or child.poll() is not None:  # ready and empty: the child closed stdout
            child.wait()
            break
        elif current is not None and time.monotonic() - started > timeout:
            child.kill()
            child.wait()
            report(current, f"hang: the case ran longer than {timeout:g} s")
            return current + 1, executed + 1
        elif deadline is not None and time.monotonic() > deadline:
            child.kill()
            child.wait()
            return (current if current is not None else first + executed), executed
    if child.returncode != 0 and current is not None:
        errors.seek(0)
        stderr = errors.read()[-4000:]
        report(current, f"crash: the process ended with status {child.returncode}\n{stderr}")
        return current + 1, executed + 1
    return first + count, executed


if __name__ == "__main__":
    sys.exit(main())
