"""The paired regression harness's pure parts (benchmarks/regression/paired.py): the ABBA
order, per-sample means, the verdicts, the pairing checks and the report's JSON. Nothing is
timed and no GPU is needed; the GPU side runs on the H200 (docs/cuda.md)."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.regression import paired  # noqa: E402
from benchmarks.regression.export import use_checkout  # noqa: E402


def entry(source="src", device="cuda", grid=(4, 1, 1), n_dtype="i32"):
    abi = {"kernel_name": "k", "body_name": "k_body", "threads_per_threadgroup": [256, 1, 1],
           "threadgroup_bytes": 64, "grid_rule": "one threadgroup per program",
           "params": [{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read"},
                      {"name": "n", "kind": "scalar", "dtype": n_dtype, "access": ""}]}
    return {"case": "c", "kernel_name": "k", "device": device, "source": source, "abi": abi,
            "grid": list(grid)}


def test_each_sample_is_baseline_candidate_candidate_baseline():
    assert paired.abba_order(2) == [(0, "baseline"), (0, "candidate"), (0, "candidate"),
                                    (0, "baseline"), (1, "baseline"), (1, "candidate"),
                                    (1, "candidate"), (1, "baseline")]


def test_a_sample_is_the_mean_of_its_two_slots():
    slots = [(0, "baseline", 1.0), (0, "candidate", 2.0), (0, "candidate", 4.0),
             (0, "baseline", 3.0), (1, "baseline", 5.0), (1, "candidate", 6.0),
             (1, "candidate", 6.0), (1, "baseline", 7.0)]
    assert paired.per_sample_ms(slots) == {"baseline": [2.0, 6.0], "candidate": [3.0, 6.0]}


@pytest.mark.parametrize("baseline, candidate, verdict", [
    (1.0, 1.2, "regression"), (1.0, 0.8, "improvement"), (1.0, 1.1, "within"),
    (1.0, 0.9, "within"), (1.0, 1.15, "within"), (2.0, 1.5, "improvement"),
])
def test_changes_beyond_the_threshold_are_regressions_or_improvements(baseline, candidate,
                                                                       verdict):
    change, got = paired.classify(baseline, candidate, 0.15)
    assert got == verdict
    assert change == pytest.approx(candidate / baseline - 1)


def test_exports_pair_only_as_cuda_sources_of_the_same_parameters_and_grid():
    assert paired.pairing_problem(entry(), entry(source="other")) is None
    assert "emitted for the 'host' device" in paired.pairing_problem(entry(device="host"),
                                                                     entry())
    assert paired.pairing_problem(entry(device="host"), entry(device="host"), "host") is None
    assert "different parameters" in paired.pairing_problem(entry(), entry(n_dtype="i64"))
    assert "the grids differ" in paired.pairing_problem(entry(), entry(grid=(8, 1, 1)))


def test_the_report_holds_every_case_its_verdict_and_the_summary():
    order = paired.abba_order(3)
    slow = [(s, arm, 1.0 if arm == "baseline" else 1.5) for s, arm in order]
    same = [(s, arm, 1.0) for s, arm in order]
    results = [paired.timed_result("slower", entry(), entry(source="new"), slow, 0.15),
               paired.timed_result("same", entry(), entry(), same, 0.15),
               paired.failed_result("broken", "the candidate kernel's relative errors ...")]
    assert [r["verdict"] for r in results] == ["regression", "within", "failed"]
    assert results[0]["change"] == pytest.approx(0.5)
    assert results[1]["same_source"] and not results[0]["same_source"]
    assert results[0]["candidate"]["samples_ms"] == [1.5, 1.5, 1.5]
    assert results[0]["baseline"]["threads_per_threadgroup"] == [256, 1, 1]
    report = json.loads(json.dumps(paired.report({"threshold": 0.15}, {"baseline": {}},
                                                 results)))
    assert report["order"] == "ABBA" and report["threshold"] == 0.15
    assert report["summary"] == {"regression": ["slower"], "improvement": [], "within": ["same"],
                                 "failed": ["broken"]}
    assert paired.exit_status(results) == 1
    assert paired.exit_status(results[1:2]) == 0
    assert "+50.0% regression" in paired.case_line(results[0])
    assert "(same source)" in paired.case_line(results[1])
    assert paired.summary_lines(results, 0.15)[0] == (
        "3 cases, threshold 15%: 1 regression, 0 improvement, 1 within, 1 failed")


def test_a_baseline_that_is_not_a_built_checkout_is_named(tmp_path):
    with pytest.raises(SystemExit, match=f"{tmp_path} is not a built meTile checkout"):
        use_checkout(tmp_path)
