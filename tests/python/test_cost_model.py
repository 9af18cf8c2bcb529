"""The target operation-cost model that orders @metile.autotune's configurations (docs/tuning.md,
"Bounded schedule search"): more memory traffic ranks lower, equal estimates are ordered by
description length, cost_model_top=k measures only the model's first k, and the report says
per configuration its estimate, terms and description length, and why the model ranked them."""

import numpy as np
import pytest

import metile


@pytest.fixture(autouse=True)
def tune_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("METILE_TUNE_CACHE", str(tmp_path))


def sum_body(x, y, out, n, BLOCK: metile.constexpr, LOADS: metile.constexpr,
             OFFSET: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    value = metile.load(x + offsets, mask) + OFFSET
    if LOADS == 2:
        value = value + metile.load(y + offsets, mask)
    metile.store(out + offsets, value, mask)


class Clock:
    def __init__(self):
        self.measured = []

    def __call__(self, config, dispatch):
        self.measured.append(repr(config))
        return 1.0


def tuned(configs, clock, **kwargs):
    return metile.autotune(configs, key=["n"], timer=clock, samples=3, **kwargs)(
        metile.kernel(sum_body))


def launch(kernel, n=256):
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    kernel[lambda a: (metile.cdiv(a["n"], a["BLOCK"]),)](x, y, out, n)
    return x, y, out


def config(loads=1, offset=1.0):
    return metile.Config({"BLOCK": 64, "LOADS": loads, "OFFSET": offset})


def test_more_memory_traffic_ranks_lower():
    two, one = config(loads=2), config(loads=1)
    kernel = tuned([two, one], Clock())
    x, y, out = launch(kernel)
    np.testing.assert_array_equal(out, x + 1.0)  # the tie in time keeps the model's first
    model = kernel.report["cost_model"]
    assert [e["config"] for e in model["ranking"]] == [repr(one), repr(two)]
    first, second = model["ranking"]
    assert first["counts_per_thread"]["device_bytes"] < second["counts_per_thread"]["device_bytes"]
    assert first["estimate_us"] < second["estimate_us"]
    assert first["terms"]["bound"] == "memory"
    assert model["reason"] == [
        f"{one!r} before {two!r}: {first['estimate_us']} us < {second['estimate_us']} us "
        f"(memory-bound: {first['terms']['memory_us']:.6g} us against "
        f"{second['terms']['memory_us']:.6g} us)"]
    assert kernel.report["measured"] == [repr(one), repr(two)]


def test_equal_estimates_are_ordered_by_description_length():
    long, short = config(offset=1.2345678), config(offset=1.0)
    kernel = tuned([long, short], Clock())
    launch(kernel)
    first, second = kernel.report["cost_model"]["ranking"]
    assert first["config"] == repr(short)
    assert first["estimate_us"] == second["estimate_us"]
    assert first["counts_per_thread"] == second["counts_per_thread"]
    assert first["description_length"] < second["description_length"]
    assert kernel.report["cost_model"]["reason"] == [
        f"{short!r} before {long!r}: equal estimates ({first['estimate_us']} us), the shorter "
        f"description ({first['description_length']} <= {second['description_length']} bytes)"]


def test_cost_model_top_measures_only_the_first_k():
    two, short, long = config(loads=2), config(offset=1.0), config(offset=1.2345678)
    clock = Clock()
    kernel = tuned([two, long, short], clock, cost_model_top=2)
    x, y, out = launch(kernel)
    np.testing.assert_array_equal(out, x + 1.0)
    assert set(clock.measured) == {repr(short), repr(long)}
    assert kernel.report["measured"] == [repr(short), repr(long)]
    assert kernel.report["cost_model"]["not_measured"] == [repr(two)]
    assert kernel.report["cost_model"]["top"] == 2
    clock = Clock()
    kernel = tuned([two, long, short], clock, cost_model_top=1)
    launch(kernel)
    assert clock.measured == []  # one configuration: nothing to time it against
    assert kernel.report["measured"] == [repr(short)]
    assert repr(kernel.best_config) == repr(short)


def test_the_report_fields():
    kernel = tuned([config()], Clock())
    launch(kernel, n=200)
    model = kernel.report["cost_model"]
    target = "sm90" if metile.device() == "cuda" else "host"  # the default device's Target
    assert model["target"] == target and model["top"] is None and model["not_measured"] == []
    (entry,) = model["ranking"]
    assert entry["threadgroups"] == 4  # cdiv(200, 64)
    assert entry["description_length"] > 0
    assert set(entry["terms"]) == {"microseconds", "launch_us", "memory_us", "issue_us", "bound"}
    assert entry["estimate_us"] == pytest.approx(
        entry["terms"]["launch_us"] + max(entry["terms"]["memory_us"], entry["terms"]["issue_us"]))
    # a load and a store of 4 bytes for each element a thread owns
    counts = entry["counts_per_thread"]
    assert counts["device_bytes"] == 8 * 64 / entry["threads_per_threadgroup"]
    assert counts["dynamic_loops"] == 0 and counts["transcendental"] == 0


def test_cost_model_top_is_checked():
    with pytest.raises(ValueError, match="cost_model_top is a positive integer or None, not 0"):
        tuned([config()], Clock(), cost_model_top=0)
