"""A Llama-style decoder block as one graph (RMSNorm, QKV projections, rotary, grouped-query
causal attention, output projection, residual, RMSNorm, SwiGLU MLP, residual), run through
plan.compile() on the host and matched against numpy (issue 29)."""

import json

import numpy as np

import metile
from llama_block import decoder_graph, decoder_inputs, decoder_reference


def test_llama_decoder_block_matches_numpy():
    dims = dict(tokens=13, hidden=128, heads=4, kv_heads=2, head_dim=32, inter=160)
    plan = metile.plan_graph_fusion(decoder_graph(**dims))
    assert len(plan.rewrites) == 1  # the attention chain became flash_attention
    run = plan.compile()
    report = json.loads(run.explain())
    forms = [k["form"] for k in report["kernels"]]
    # Head splits and kt are views; the attention kernel writes the heads' merge before wo in
    # place (its result is a view of the merged buffer): no copy, no transpose kernel.
    assert forms.count("copy") == 0 and forms.count("transpose") == 0
    (attention,) = [k for k in report["kernels"] if k["form"] == "flash_attention"]
    assert "written in place as %31" in attention["decision"]
    assert forms.count("rotary") == 2 and forms.count("flash_attention") == 1
    inputs = decoder_inputs(**dims, rng=np.random.default_rng(7))
    (got,) = run(**inputs)
    want = decoder_reference(inputs, dims["heads"], dims["kv_heads"], dims["head_dim"])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_llama_decoder_block_in_f16():
    dims = dict(tokens=9, hidden=64, heads=4, kv_heads=1, head_dim=16, inter=96)  # MQA
    run = metile.plan_graph_fusion(decoder_graph(**dims, dtype="f16")).compile()
    inputs = {k: v.astype(np.float16)
              for k, v in decoder_inputs(**dims, rng=np.random.default_rng(11)).items()}
    (got,) = run(**inputs)
    assert got.dtype == np.float16
    want = decoder_reference(inputs, dims["heads"], dims["kv_heads"], dims["head_dim"])
    # f16 storage between kernels: errors relative to the output's scale.
    err = np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want))
    assert err < 1e-2, err
