"""plan.compile(): graphs run on the host device, checked against numpy (issue 29)."""

import json

import numpy as np
import pytest

import metile


def rms_norm(x, w, eps):
    x = x.astype(np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def test_seed_example_runs_as_one_kernel_with_two_outputs():
    builder = metile.GraphBuilder()
    values = builder.input("values", metile.TensorSpec((1, 2048), "f16"))
    residual = builder.input("residual", metile.TensorSpec((1, 2048), "f16"))
    weight = builder.input("weight", metile.TensorSpec((2048,), "f16"))
    summed = builder.add(values, residual)
    normalized = builder.rms_norm(summed, weight, 1e-5)
    graph = builder.build((summed, normalized))

    plan = metile.plan_graph_fusion(graph)
    run = plan.compile()
    assert run.kernel_count == 1
    rng = np.random.default_rng(0)
    v, r, w = (rng.standard_normal(s).astype(np.float16) for s in ((1, 2048), (1, 2048), (2048,)))
    got_sum, got_norm = run(v, r, weight=w)
    want_sum = v.astype(np.float32) + r.astype(np.float32)
    np.testing.assert_allclose(got_sum.astype(np.float32), want_sum, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(got_norm.astype(np.float32), rms_norm(want_sum, w, 1e-5),
                               rtol=1e-2, atol=1e-2)
    report = json.loads(run.explain())
    (kernel,) = report["kernels"]
    assert kernel["form"] == "row" and kernel["ops"] == ["%3 = add", "%4 = rms_norm"]


def test_ragged_rows_and_broadcasting():
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((3, 5, 100), "f32"))
    bias = b.input("bias", metile.TensorSpec((5, 1), "f32"))
    y = b.softmax(b.scale(b.add(x, bias), 0.5))
    total = b.sum(b.exp(x), -1, keepdims=True)
    graph = b.build([y, total])
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((3, 5, 100)).astype(np.float32)
    bv = rng.standard_normal((5, 1)).astype(np.float32)
    got_y, got_total = metile.plan_graph_fusion(graph).compile()(xv, bv)
    z = (xv + bv) * 0.5
    want = np.exp(z - z.max(-1, keepdims=True))
    np.testing.assert_allclose(got_y, want / want.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_total, np.exp(xv).sum(-1, keepdims=True), rtol=1e-5)


def attention_graph(batch, length, dim, causal, dtype="f32"):
    b = metile.GraphBuilder()
    q = b.input("q", metile.TensorSpec((batch, length, dim), dtype))
    k = b.input("k", metile.TensorSpec((batch, length, dim), dtype))
    v = b.input("v", metile.TensorSpec((batch, length, dim), dtype))
    scores = b.scale(b.matmul(q, b.transpose(k)), dim ** -0.5)
    if causal:
        scores = b.causal_mask(scores)
    return b.build([b.matmul(b.softmax(scores), v)])


def attention_reference(q, k, v, causal):
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("causal", [False, True])
def test_attention_is_rewritten_and_runs(causal):
    graph = attention_graph(2, 70, 32, causal)  # 70: a ragged sequence length
    plan = metile.plan_graph_fusion(graph)
    assert len(plan.rewrites) == 1
    run = plan.compile()
    forms = [k["form"] for k in json.loads(run.explain())["kernels"]]
    assert forms == ["flash_attention"]  # kt = transpose(k) is read in place (a view)
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 70, 32)).astype(np.float32) for _ in range(3))
    (out,) = run(q=q, k=k, v=v)
    np.testing.assert_allclose(out, attention_reference(q, k, v, causal), rtol=1e-4, atol=1e-4)


def test_swiglu_mlp_runs_fused():
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((5, 64), "f32"))
    w_gate = b.input("w_gate", metile.TensorSpec((64, 96), "f32"))
    w_up = b.input("w_up", metile.TensorSpec((64, 96), "f32"))
    w_down = b.input("w_down", metile.TensorSpec((96, 64), "f32"))
    hidden = b.multiply(b.silu(b.matmul(x, w_gate)), b.matmul(x, w_up))
    graph = b.build([b.matmul(hidden, w_down)])
    plan = metile.plan_graph_fusion(graph)
    assert plan.regions[0].rule == "parallel_epilogue"
    run = plan.compile()
    assert run.kernel_count == 2  # gate/up with the SwiGLU epilogue, then the down projection
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((5, 64)).astype(np.float32)
    wg, wu = (rng.standard_normal((64, 96)).astype(np.float32) / 8 for _ in range(2))
    wd = rng.standard_normal((96, 64)).astype(np.float32) / 8
    (out,) = run(xv, wg, wu, wd)
    g = xv.astype(np.float64) @ wg
    want = (g / (1 + np.exp(-g)) * (xv @ wu)) @ wd
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("schedule", ["register-fused", "scratch-spilled"])
def test_swiglu_schedules_match_numpy(schedule):
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((19, 40), "f32"))  # ragged rows, K and N
    w_gate = b.input("w_gate", metile.TensorSpec((40, 70), "f32"))
    w_up = b.input("w_up", metile.TensorSpec((40, 70), "f32"))
    w_down = b.input("w_down", metile.TensorSpec((70, 40), "f32"))
    hidden = b.multiply(b.matmul(x, w_up), b.silu(b.matmul(x, w_gate)))  # up * silu(gate)
    plan = metile.plan_graph_fusion(b.build([b.matmul(hidden, w_down)]))
    run = plan.compile(schedule=schedule)
    decision = json.loads(run.explain())["kernels"][0]["decision"]
    assert ("scratch-spilled" in decision) == (schedule == "scratch-spilled")
    rng = np.random.default_rng(6)
    xv = rng.standard_normal((19, 40)).astype(np.float32)
    wg, wu = (rng.standard_normal((40, 70)).astype(np.float32) / 6 for _ in range(2))
    wd = rng.standard_normal((70, 40)).astype(np.float32) / 8
    (out,) = run(xv, wg, wu, wd)
    g = xv.astype(np.float64) @ wg
    np.testing.assert_allclose(out, ((xv @ wu) * (g / (1 + np.exp(-g)))) @ wd, rtol=1e-4,
                               atol=1e-4)
    with pytest.raises(metile.CompilationError, match="schedule 'spilled' is neither"):
        plan.compile(schedule="spilled")


def test_swiglu_residual_is_the_down_projections_epilogue():
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((1, 64), "f32"))  # one-row decode
    w_gate = b.input("w_gate", metile.TensorSpec((64, 96), "f32"))
    w_up = b.input("w_up", metile.TensorSpec((64, 96), "f32"))
    w_down = b.input("w_down", metile.TensorSpec((96, 64), "f32"))
    hidden = b.multiply(b.silu(b.matmul(x, w_gate)), b.matmul(x, w_up))
    graph = b.build([b.add(b.matmul(hidden, w_down), x)])
    plan = metile.plan_graph_fusion(graph)
    (region,) = plan.regions
    assert region.rule == "parallel_epilogue" and region.roles["residual"] == "%9 = add"
    run = plan.compile()
    kernels = json.loads(run.explain())["kernels"]
    assert len(kernels) == 2 and kernels[1]["ops"] == ["%8 = matmul", "%9 = add"]
    rng = np.random.default_rng(4)
    xv = rng.standard_normal((1, 64)).astype(np.float32)
    wg, wu = (rng.standard_normal((64, 96)).astype(np.float32) / 8 for _ in range(2))
    wd = rng.standard_normal((96, 64)).astype(np.float32) / 8
    (out,) = run(xv, wg, wu, wd)
    g = xv.astype(np.float64) @ wg
    np.testing.assert_allclose(out, (g / (1 + np.exp(-g)) * (xv @ wu)) @ wd + xv, rtol=1e-4,
                               atol=1e-4)


def test_inputs_are_checked_by_name():
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((4, 8), "f32"))
    run = metile.plan_graph_fusion(b.build([b.exp(x)])).compile()
    with pytest.raises(metile.CompilationError, match=r"graph input 'x' \(\(4, 8\) f32\) is missing"):
        run()
    with pytest.raises(metile.CompilationError,
                       match=r"graph input 'x': expected \(4, 8\) f32, .*shape differs"):
        run(np.zeros((8, 4), np.float32))
    with pytest.raises(metile.CompilationError,
                       match=r"graph input 'x': expected \(4, 8\) f32, .*dtype differs"):
        run(np.zeros((4, 8), np.float16))
    x_in = np.zeros((4, 8), np.float32)
    with pytest.raises(TypeError, match=r"the graph takes 1 inputs \(x\), got 2 positional"):
        run(x_in, x_in)
    with pytest.raises(TypeError, match=r"graph input 'x' given twice"):
        run(x_in, x=x_in)


def test_parse_graph_errors_name_the_node():
    with pytest.raises(metile.CompilationError, match=r"line 2: unknown op 'gelu' in %1 = gelu"):
        metile.parse_graph("%x = input : (4, 8) f32\n%1 = gelu(%x) : (4, 8) f32\noutputs(%1)\n")
    with pytest.raises(metile.CompilationError, match=r"a cycle: %2 depends on itself"):
        metile.parse_graph("%x = input : (4, 8) f32\n%1 = add(%x, %2) : (4, 8) f32\n"
                           "%2 = exp(%1) : (4, 8) f32\noutputs(%2)\n")
    with pytest.raises(metile.CompilationError, match=r"%bias is neither an input.*missing input"):
        metile.parse_graph("%x = input : (4, 8) f32\n%1 = add(%x, %bias) : (4, 8) f32\n"
                           "outputs(%1)\n")
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((4, 8), "f16"))
    w = b.input("w", metile.TensorSpec((8,), "f32"))
    with pytest.raises(metile.CompilationError,
                       match=r"rms_norm: weight dtype f32 differs from x dtype f16, in "
                             r"%2 = rms_norm\(%x, %w\)"):
        b.rms_norm(x, w, 1e-5)
