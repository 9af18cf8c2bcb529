"""plan_graph_fusion's certified attention rewrite and the SwiGLU rule, from Python."""

import json

import pytest

import metile


def attention(causal=False, probabilities_out=False, axis=-1):
    b = metile.GraphBuilder()
    q = b.input("q", metile.TensorSpec((2, 128, 64), "f16"))
    kt = b.input("kt", metile.TensorSpec((2, 64, 128), "f16"))
    v = b.input("v", metile.TensorSpec((2, 128, 64), "f16"))
    scores = b.scale(b.matmul(q, kt), 0.125)
    if causal:
        scores = b.causal_mask(scores)
    p = b.softmax(scores, axis)
    outputs = [b.matmul(p, v)] + ([p] if probabilities_out else [])
    return b.build(outputs)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_becomes_flash_attention_with_its_certificate(causal):
    plan = metile.plan_graph_fusion(attention(causal=causal))
    assert [r.ops for r in plan.regions] == [["flash_attention"]]
    assert plan.regions[0].rule == "flash_attention"
    (rewrite,) = plan.rewrites
    assert rewrite.causal == causal
    assert rewrite.certificate.law == "weighted_softmax"
    assert [o.name for o in rewrite.certificate.obligations][2] == "associativity"
    assert "flash_attention(%q, %kt, %v)" in str(plan.graph)
    report = json.loads(plan.explain())
    assert report["discovery"]["laws"][0]["law"] == "weighted_softmax"
    assert report["discovery"]["laws"][0]["cases"] == rewrite.certificate.cases


def test_attention_kept_with_the_reason():
    plan = metile.plan_graph_fusion(attention(probabilities_out=True))
    assert plan.rewrites == []
    (kept,) = plan.rejected_rewrites
    assert kept.reason == "escaping intermediate: %5 = softmax is a graph output"
    assert "flash_attention" not in str(plan.graph)

    (axis,) = metile.plan_graph_fusion(attention(axis=1)).rejected_rewrites
    assert axis.reason.startswith("unsupported reduction axis: softmax over axis 1")


def test_a_refuted_law_keeps_the_attention_chain():
    law = metile.ReductionLaw.weighted_softmax()
    wrong = metile.ReductionLaw(
        "weighted_softmax_unscaled", state=law.state, element=law.element,
        identity=law.identity, merge=[law.merge[0], "a.d + b.d", "a.n + b.n"], lift=law.lift,
        finalise=law.finalise, reference=law.reference)
    plan = metile.plan_graph_fusion(attention(), attention_law=wrong)
    (kept,) = plan.rejected_rewrites
    assert kept.reason.startswith(
        "failed obligation: reduction law 'weighted_softmax_unscaled' fails pair_homomorphism")


def swiglu(silu_first=True, gate_out=False):
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((64, 512), "f16"))
    w_gate = b.input("w_gate", metile.TensorSpec((512, 1024), "f16"))
    w_up = b.input("w_up", metile.TensorSpec((512, 1024), "f16"))
    w_down = b.input("w_down", metile.TensorSpec((1024, 512), "f16"))
    gate, up = b.matmul(x, w_gate), b.matmul(x, w_up)
    hidden = b.multiply(b.silu(gate), up) if silu_first else b.multiply(up, b.silu(gate))
    return b.build([b.matmul(hidden, w_down)] + ([gate] if gate_out else []))


@pytest.mark.parametrize("silu_first", [True, False])
def test_swiglu_plans_one_region_in_either_order(silu_first):
    plan = metile.plan_graph_fusion(swiglu(silu_first))
    (region,) = plan.regions
    assert region.ops == ["matmul", "matmul", "silu", "multiply", "matmul"]
    assert region.rule == "parallel_epilogue"
    assert region.form == ("silu(gate) * up" if silu_first else "up * silu(gate)")
    assert region.roles["gate"] == "%4 = matmul" and region.roles["down"] == "%8 = matmul"


def test_swiglu_with_an_escaping_gate_is_rejected_with_the_reason():
    plan = metile.plan_graph_fusion(swiglu(gate_out=True))
    assert all(r.rule != "parallel_epilogue" for r in plan.regions)
    reasons = [r["reason"] for r in json.loads(plan.explain())["rejected"] if r["stage"] == "rule"]
    assert reasons == ["parallel_epilogue: escaping intermediate: %4 = matmul (gate) is a graph "
                       "output"]
    assert len(metile.plan_graph_fusion(swiglu(), parallel_epilogue=False).regions) == 2
