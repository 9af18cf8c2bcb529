"""Ranks an autotuner's surviving configurations before they are measured (seed 001, "Kernel
Compilation"): the target operation-cost model (metile/tune/cost_model.h, through
CompiledKernel.estimate_cost) estimates each prepared dispatch's time on its device's Target
from its Metal IR's per-thread operation counts and its launch grid; equal estimates are
ordered by description length, the zlib-compressed size of the Metal IR text (the shorter
program first), then by the configurations' order. The facts come from the compiled kernel
the autotuner already prepared, so ranking compiles nothing."""

import json
import math
import zlib

_DIGITS = 6  # estimates equal to a picosecond are a tie


def describe(config, dispatch):
    """The model's entry for one prepared configuration."""
    compiled = dispatch._compiled
    facts = json.loads(compiled.estimate_cost(math.prod(dispatch.grid)))
    return {"config": repr(config), "estimate_us": round(facts["estimate"]["microseconds"], _DIGITS),
            "terms": facts["estimate"], "counts_per_thread": facts["counts_per_thread"],
            "threadgroups": math.prod(dispatch.grid),
            "threads_per_threadgroup": math.prod(compiled.abi["threads_per_threadgroup"]),
            "description_length": len(zlib.compress(compiled.metal_ir.encode(), 9)),
            "target": facts["target"]}


def _why(first, second):
    if first["estimate_us"] == second["estimate_us"]:
        return (f"{first['config']} before {second['config']}: equal estimates "
                f"({first['estimate_us']} us), the shorter description "
                f"({first['description_length']} <= {second['description_length']} bytes)")
    bound = first["terms"]["bound"]
    return (f"{first['config']} before {second['config']}: {first['estimate_us']} us < "
            f"{second['estimate_us']} us ({bound}-bound: {first['terms'][bound + '_us']:.6g} us "
            f"against {second['terms'][bound + '_us']:.6g} us)")


def check_top(top):
    """`top`, checked: None (measure every configuration) or a positive integer."""
    if top is not None and (not isinstance(top, int) or isinstance(top, bool) or top < 1):
        raise ValueError(f"metile.autotune: cost_model_top is a positive integer or None, not "
                         f"{top!r}")
    return top


def rank(entries, top):
    """(the indices of the entries to measure, in the model's order, and the report): the
    order of (estimate, description length, position), its first `top` (None: all)."""
    order = sorted(range(len(entries)), key=lambda i: (entries[i]["estimate_us"],
                                                       entries[i]["description_length"], i))
    measured = order if top is None else order[:top]
    ranked = [entries[i] for i in order]
    report = {"target": ranked[0]["target"], "top": top,
              "ranking": ranked,
              "reason": [_why(a, b) for a, b in zip(ranked, ranked[1:])],
              "not_measured": [entries[i]["config"] for i in order[len(measured):]]}
    return measured, report
