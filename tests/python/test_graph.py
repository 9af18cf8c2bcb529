"""GraphBuilder and plan_graph_fusion from Python (seed 000, run as written)."""

import json

import pytest

import metile


def test_seed_example_plans_one_region_with_two_outputs():
    builder = metile.GraphBuilder()
    values = builder.input("values", metile.TensorSpec((1, 2048), "f16"))
    residual = builder.input("residual", metile.TensorSpec((1, 2048), "f16"))
    weight = builder.input("weight", metile.TensorSpec((2048,), "f16"))
    summed = builder.add(values, residual)
    normalized = builder.rms_norm(summed, weight, 1e-5)
    graph = builder.build((summed, normalized))

    plan = metile.plan_graph_fusion(graph)

    assert len(plan.regions) == 1
    region = plan.regions[0]
    assert region.ops == ["add", "rms_norm"]
    assert region.inputs == ["%values", "%residual", "%weight"]
    assert len(region.outputs) == 2  # summed stays a graph output beside normalized
    report = json.loads(plan.explain())
    assert report["regions"][0]["ops"] == ["add", "rms_norm"]
    assert report["summary"]["kernels"] == 1
    assert plan.explain() == metile.plan_graph_fusion(graph).explain()  # deterministic


def test_shape_errors_name_the_op_and_shapes():
    builder = metile.GraphBuilder()
    a = builder.input("a", metile.TensorSpec((1, 2048), "f16"))
    b = builder.input("b", metile.TensorSpec((1, 1024), "f16"))
    with pytest.raises(metile.CompilationError, match=r"add: shapes \(1, 2048\) and \(1, 1024\)"):
        builder.add(a, b)
