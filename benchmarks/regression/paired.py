"""The pure parts of the paired regression harness (no torch, no GPU): the ABBA order, one
case's figures from its timed slots, the verdict against the threshold, the checks that two
exports can be paired, the report's JSON and its lines."""

from __future__ import annotations

import hashlib
import statistics

ARMS = ("baseline", "candidate")
VERDICTS = ("regression", "improvement", "within")


def abba_order(samples):
    """[(sample, arm)]: baseline, candidate, candidate, baseline for each sample, so that a
    drift of the machine within a sample weighs on both arms alike."""
    a, b = ARMS
    return [(sample, arm) for sample in range(samples) for arm in (a, b, b, a)]


def per_sample_ms(slots):
    """{arm: [ms per sample]} from [(sample, arm, ms)]: each sample's value is the mean of the
    arm's two slots in it."""
    times = {arm: {} for arm in ARMS}
    for sample, arm, ms in slots:
        times[arm].setdefault(sample, []).append(ms)
    return {arm: [statistics.fmean(v) for _, v in sorted(by_sample.items())]
            for arm, by_sample in times.items()}


def classify(baseline_ms, candidate_ms, threshold):
    """(change, verdict): change = candidate / baseline - 1 (0.2: 20% slower); a regression
    above +threshold, an improvement below -threshold, else within."""
    change = candidate_ms / baseline_ms - 1.0
    if change > threshold:
        return change, "regression"
    if change < -threshold:
        return change, "improvement"
    return change, "within"


def source_digest(source):
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _params(abi):
    return [(p["name"], p["kind"], p["dtype"]) for p in abi["params"]]


def pairing_problem(baseline, candidate, device="cuda"):
    """Why two exports of one case cannot be timed against each other in this process, or
    None. Both sources must be emitted for `device` (built by this tree's device of that
    name: never one compiled another way), bind the same parameters and run over the same
    grid."""
    for arm, entry in zip(ARMS, (baseline, candidate)):
        if entry["device"] != device:
            return (f"the {arm} tree emitted for the '{entry['device']}' device; the harness "
                    f"builds sources for this tree's {device} device only")
    if _params(baseline["abi"]) != _params(candidate["abi"]):
        return (f"the kernels take different parameters: baseline {_params(baseline['abi'])}, "
                f"candidate {_params(candidate['abi'])}")
    if list(baseline["grid"]) != list(candidate["grid"]):
        return f"the grids differ: baseline {baseline['grid']}, candidate {candidate['grid']}"
    return None


def _arm_summary(entry, samples_ms):
    abi = entry["abi"]
    return {"median_ms": statistics.median(samples_ms), "min_ms": min(samples_ms),
            "max_ms": max(samples_ms), "samples_ms": samples_ms,
            "threads_per_threadgroup": list(abi["threads_per_threadgroup"]),
            "threadgroup_bytes": abi["threadgroup_bytes"],
            "source_sha256": source_digest(entry["source"]), "source": entry["source"]}


def timed_result(case, baseline, candidate, slots, threshold):
    """One case's result from its entries (exports) and its timed slots [(sample, arm, ms)]."""
    samples = per_sample_ms(slots)
    arms = {arm: _arm_summary(entry, samples[arm])
            for arm, entry in zip(ARMS, (baseline, candidate))}
    change, verdict = classify(arms["baseline"]["median_ms"], arms["candidate"]["median_ms"],
                               threshold)
    return {"case": case, "status": "timed", "verdict": verdict, "change": change,
            "same_source": baseline["source"] == candidate["source"],
            "grid": list(candidate["grid"]), **arms}


def failed_result(case, why):
    """A case that was not timed: it could not be paired, built or checked."""
    return {"case": case, "status": "failed", "verdict": "failed", "why": why}


def summary(results):
    """The case names by verdict (failed included)."""
    return {verdict: [r["case"] for r in results if r["verdict"] == verdict]
            for verdict in VERDICTS + ("failed",)}


def exit_status(results):
    """0 when every case was timed and none regressed; 1 otherwise."""
    return 0 if all(r["verdict"] in ("improvement", "within") for r in results) else 1


def report(settings, trees, results):
    """The raw JSON: the settings (threshold, rounds, samples, ...), both trees' export
    metadata, every case and the summary."""
    return {"benchmark": "paired_regression", "order": "ABBA", **settings, "trees": trees,
            "cases": results, "summary": summary(results)}


def case_line(result):
    if result["status"] != "timed":
        return f"{result['case']}: FAILED {result['why']}"
    same = " (same source)" if result["same_source"] else ""
    return (f"{result['case']}: baseline {result['baseline']['median_ms'] * 1e3:.1f} us, "
            f"candidate {result['candidate']['median_ms'] * 1e3:.1f} us, "
            f"{result['change'] * 100:+.1f}% {result['verdict']}{same}")


def summary_lines(results, threshold):
    groups = summary(results)
    lines = [f"{len(results)} cases, threshold {threshold * 100:.0f}%: "
             + ", ".join(f"{len(groups[v])} {v}" for v in VERDICTS + ("failed",))]
    for verdict in ("regression", "improvement", "failed"):
        for name in groups[verdict]:
            lines.append(f"  {verdict}: {name}")
    return lines
