"""plan.compile(dispatch="measured"): each region's fused kernels against the unfused ops run
by numpy, through metile.select's gate and tournament with the graph boundary's 10% headroom;
decisions in explain() and persisted (issue 29)."""

import json

import numpy as np
import pytest

import metile


def test_each_region_is_decided_and_the_decision_persists(tmp_path, monkeypatch):
    monkeypatch.setenv("METILE_TUNE_CACHE", str(tmp_path))
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((4, 96), "f32"))
    w = b.input("w", metile.TensorSpec((96,), "f32"))
    wt = b.input("wt", metile.TensorSpec((40, 96), "f32"))
    summed = b.add(x, x)
    normed = b.rms_norm(summed, w, 1e-5)
    projected = b.matmul(normed, b.transpose(wt))
    graph = b.build([summed, projected])
    plan = metile.plan_graph_fusion(graph)

    run = plan.compile(dispatch="measured")
    before = json.loads(run.explain())
    assert all(r["decision"]["decision"] in (None, "native") for r in before["regions"])
    rng = np.random.default_rng(5)
    xv, wv, wtv = rng.standard_normal((4, 96)), rng.standard_normal(96), \
        rng.standard_normal((40, 96))
    xv, wv, wtv = (a.astype(np.float32) for a in (xv, wv, wtv))
    got_sum, got_proj = run(xv, wv, wt=wtv)
    s = 2 * xv.astype(np.float64)
    n = s / np.sqrt((s * s).mean(-1, keepdims=True) + 1e-5) * wv
    np.testing.assert_allclose(got_sum, s, rtol=1e-6)
    np.testing.assert_allclose(got_proj, n @ wtv.T, rtol=1e-4, atol=1e-4)

    report = json.loads(run.explain())
    assert report["boundary"] == "graph"
    decided = [r for r in report["regions"] if r["decision"].get("source") == "measured"]
    view = [r for r in report["regions"] if r["ops"][0].endswith("transpose")]
    assert view and view[0]["decision"]["decision"] == "native"
    assert len(decided) == len(report["regions"]) - 1
    for r in decided:
        d = r["decision"]
        assert d["boundary"] == "graph" and d["winner"] in ("native", "fused")
        assert d["gate"]["fused"][0]["passed"]  # the fused kernels passed the numerical gate
        assert d["selector"]["reason"] and d["persisted"]

    # A new executor for the same plan reads the decisions back instead of measuring.
    again = plan.compile(dispatch="measured")
    again(xv, wv, wtv)
    sources = {r["decision"]["source"] for r in json.loads(again.explain())["regions"]
               if "source" in r["decision"]}
    assert sources == {"disk"}


def test_swiglu_schedules_are_separate_candidates(tmp_path, monkeypatch):
    monkeypatch.setenv("METILE_TUNE_CACHE", str(tmp_path))
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((1, 64), "f32"))
    w_gate = b.input("w_gate", metile.TensorSpec((64, 96), "f32"))
    w_up = b.input("w_up", metile.TensorSpec((64, 96), "f32"))
    w_down = b.input("w_down", metile.TensorSpec((96, 64), "f32"))
    hidden = b.multiply(b.silu(b.matmul(x, w_gate)), b.matmul(x, w_up))
    run = metile.plan_graph_fusion(b.build([b.add(b.matmul(hidden, w_down), x)])).compile(
        dispatch="measured")
    rng = np.random.default_rng(8)
    xv = rng.standard_normal((1, 64)).astype(np.float32)
    wg, wu = (rng.standard_normal((64, 96)).astype(np.float32) / 8 for _ in range(2))
    wd = rng.standard_normal((96, 64)).astype(np.float32) / 8
    (out,) = run(xv, wg, wu, wd)
    g = xv.astype(np.float64) @ wg
    np.testing.assert_allclose(out, (g / (1 + np.exp(-g)) * (xv @ wu)) @ wd + xv, rtol=1e-4,
                               atol=1e-4)
    (region,) = json.loads(run.explain())["regions"]
    decision = region["decision"]
    assert set(decision["gate"]) == {"register_fused", "scratch_spilled"}
    assert all(g[0]["passed"] for g in decision["gate"].values())
    assert decision["winner"] in ("native", "register_fused", "scratch_spilled")


def test_measured_inputs_are_checked_by_name():
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((4, 8), "f32"))
    run = metile.plan_graph_fusion(b.build([b.exp(x)])).compile(dispatch="measured")
    with pytest.raises(metile.CompilationError,
                       match=r"graph input 'x' \(\(4, 8\) f32\) is missing"):
        run()
    with pytest.raises(metile.CompilationError,
                       match=r"graph input 'x': expected \(4, 8\) f32, got \(8, 4\) float32"):
        run(np.zeros((8, 4), np.float32))
    with pytest.raises(metile.CompilationError, match=r"graph input 'y' is not an input"):
        run(np.zeros((4, 8), np.float32), y=1)


def test_decoder_block_runs_by_measured_dispatch(tmp_path, monkeypatch):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from llama_block import decoder_graph, decoder_inputs, decoder_reference

    monkeypatch.setenv("METILE_TUNE_CACHE", str(tmp_path))
    dims = dict(tokens=11, hidden=64, heads=4, kv_heads=2, head_dim=16, inter=96)
    run = metile.plan_graph_fusion(decoder_graph(**dims)).compile(dispatch="measured")
    inputs = decoder_inputs(**dims, rng=np.random.default_rng(12))
    (got,) = run(**inputs)
    want = decoder_reference(inputs, dims["heads"], dims["kv_heads"], dims["head_dim"])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    regions = json.loads(run.explain())["regions"]
    measured = [r for r in regions if r["decision"].get("source") == "measured"]
    # Every region but the views was gated and timed, the attention region among them (its
    # fused side rediscovers flash_attention from the written-out chain).
    assert any(r["ops"] == ["%28 = flash_attention"] for r in measured)
    for r in measured:
        assert all(g[0]["passed"] for g in r["decision"]["gate"].values()), r["ops"]
