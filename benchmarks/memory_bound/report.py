"""Reporting: a line per case while measuring, and the table of a result file (no torch)."""

from __future__ import annotations

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


def specialised_over_compile(result):
    """The specialised launch's time over torch.compile's ("-" in runs without it)."""
    times = result.get("times", {})
    if "metile_specialised" in times and "compile" in times:
        return f"{times['metile_specialised']['median_ms'] / times['compile']['median_ms']:.2f}"
    return "failed" if "metile_specialised" in result.get("failures", {}) else "-"


def print_table(report):
    copy = report["copy_bandwidth"]["GBps"]
    print(f"Copy bandwidth (torch device-to-device, read + write): {copy:.0f} GB/s"
          + (f" at the start, {report['copy_bandwidth_end']['GBps']:.0f} GB/s at the end"
             if "copy_bandwidth_end" in report else ""))
    print(f"GPU: {report['machine'].get('gpu')}, driver {report['machine'].get('driver')}, "
          f"torch {report['machine'].get('torch')}, triton {report['machine'].get('triton')}\n")
    print("| case | dtype | shape | ours GB/s | of copy | ours/compile | ours/triton "
          "| ours/eager | specialised/compile |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in report["cases"]:
        shape = "x".join(map(str, r["shape"]))
        if r.get("status") != "ok":
            why = "; ".join(f"{n}: {m.splitlines()[0] if m else m}"
                            for n, m in r.get("failures", {}).items())
            print(f"| {r['kernel']} | {r['dtype']} | {shape} | failed: {why} | | | | | |")
            continue
        print(f"| {r['kernel']} | {r['dtype']} | {shape} | {r['metile_GBps']:.0f} | "
              f"{r['metile_GBps'] / copy:.2f} | {ratio(r, 'compile')} | {ratio(r, 'triton')} | "
              f"{ratio(r, 'eager')} | {specialised_over_compile(r)} |")
    for s in report.get("skipped", []):
        print(f"| {s['case']} | skipped: {s['why']} | | | | | | | |")
    # Runs before meTile's launches became asynchronous did not record how they launched.
    waits = ("meTile's launches, like Triton's, do not wait for their kernel"
             if report.get("metile_launches") == "asynchronous" else
             "a meTile launch waits for its kernel")
    print("\nLarge shapes: device time per call (data >> L2). Decode rows (one row): time per "
          f"call over back-to-back calls, host launch cost included; {waits}.")
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
