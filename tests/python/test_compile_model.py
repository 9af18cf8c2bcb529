"""metile.compile(model) on MLX models (mlx-lm's llama and qwen3 with random weights, float and
4-bit) on the default device: every region's kernel is gated against MLX's own module, and the
compiled model is verified against the MLX model by its logits and greedy next tokens."""

import json

import numpy as np
import pytest

import metile

mx = pytest.importorskip("mlx.core")
nn = pytest.importorskip("mlx.nn")
pytest.importorskip("mlx_lm")
from mlx_lm.models import llama, qwen3  # noqa: E402

PROMPT = [1, 5, 9, 3, 7, 2, 11]  # 7 tokens: a ragged prefill
# 40 tokens, then 32 steps: the keys grow past 64, the attention region's padding bucket
LONG_PROMPT = [(7 * i + 3) % 96 for i in range(40)]


def _llama(layers=2):
    return llama.Model(llama.ModelArgs(
        model_type="llama", hidden_size=64, num_hidden_layers=layers, intermediate_size=128,
        num_attention_heads=4, rms_norm_eps=1e-5, vocab_size=96, num_key_value_heads=2))


def _qwen3():
    return qwen3.Model(qwen3.ModelArgs(
        model_type="qwen3", hidden_size=64, num_hidden_layers=2, intermediate_size=128,
        num_attention_heads=4, rms_norm_eps=1e-6, vocab_size=96, num_key_value_heads=2,
        max_position_embeddings=256, rope_theta=1e6, head_dim=16, tie_word_embeddings=True))


def _model(arch, quantized):
    mx.random.seed(7)
    model = _llama() if arch == "llama" else _qwen3()
    if quantized:
        nn.quantize(model, group_size=64, bits=4)
    return model


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
@pytest.mark.parametrize("quantized", [False, True], ids=["float", "4bit"])
def test_compiled_model_matches_mlx(arch, quantized):
    model = _model(arch, quantized)
    compiled = metile.compile(model, (mx.array([PROMPT]),), decide="generated", persist=False,
                              progress=False)
    kinds = {r.kind for r in compiled.regions}
    expected = {"rms_norm", "rotary", "attention"} | (
        {"quantized_linear", "quantized_mlp"} if quantized
        else {"linear", "swiglu_mlp", "embedding"})
    assert expected <= kinds
    result = compiled.verify(LONG_PROMPT, steps=32)
    assert result["passed"], result
    assert result["agreement"] >= 31
    # Every region ran meTile's kernel after passing its gate: the logits above are theirs.
    decisions = compiled.decisions()
    assert decisions and all(d[2] == "metile" for d in decisions), decisions
    report = compiled.report()
    assert report["verification"]["passed"] and report["kernels_compiled"] > 0
    assert all(r["kernels"] for r in report["regions"])
    if arch == "qwen3":
        assert any(r["region"].endswith("self_attn.q_norm") for r in report["regions"])


def test_measured_decisions_are_recorded(capsys):
    model = _model("llama", quantized=False)
    compiled = metile.compile(model, (mx.array([PROMPT]),), persist=False, progress=False)
    assert compiled.verify(PROMPT, steps=4)["passed"]
    decisions = compiled.decisions()
    assert len(decisions) >= len(compiled.regions)
    assert {d[2] for d in decisions} <= {"native", "metile"}
    for r in compiled.report()["regions"]:
        for d in r["decisions"]:
            assert d["source"] == "measured" or d["source"] in ("memory", "disk")
            assert d["reason"]
    with capsys.disabled():  # the decisions in the test output (issue 31)
        print("\nmetile.compile(llama) on the host target, measured decisions:")
        for path, kind, winner, reason in decisions:
            print(f"  {path:40s} {kind:12s} {winner:7s} {reason}")


def test_explain_names_unsupported_ops_and_the_model_still_runs():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(32)
            self.proj = nn.Linear(32, 48)
            self.act = nn.GELU()
            self.out = nn.RMSNorm(48)

        def __call__(self, x):
            return self.out(self.act(self.proj(self.norm(x))))

    mx.random.seed(3)
    model = Block()
    x = mx.random.normal((5, 32))
    expected = np.array(model(x))
    compiled = metile.compile(model, (x,), decide="generated", persist=False, progress=False)
    np.testing.assert_allclose(np.array(compiled(x)), expected, rtol=1e-5, atol=1e-5)
    report = json.loads(compiled.explain())
    kept = {k["path"]: k["reason"] for k in report["kept_in_framework"]}
    assert kept["norm"] == "no meTile region for LayerNorm"
    assert kept["act"] == "no meTile region for GELU"
    assert {r["region"]: r["kind"] for r in report["regions"]} == {"proj": "linear",
                                                                   "out": "rms_norm"}
    assert "capture" in report["compile_phases_s"] and "kernels" in report["compile_phases_s"]


def test_a_model_failing_verification_falls_back_and_names_the_regions():
    model = _model("llama", quantized=False)
    compiled = metile.compile(model, (mx.array([PROMPT]),), decide="generated", persist=False,
                              progress=False)
    # A KL bound of zero no kernel can meet: each region alone fails the model and goes back
    # to MLX; the model then runs MLX's modules only and passes.
    result = compiled.verify(PROMPT, steps=2, kl_limit=0.0)
    assert not result["first_attempt"]["passed"]
    fallen = {f["region"] for f in compiled.fallbacks}
    assert "model.layers.0.mlp" in fallen and "model.norm" in fallen
    assert all(r.runner.disabled for r in compiled.regions if r.path in fallen)
    assert result["max_abs_error"] == 0.0 and result["agreement"] == 2


def test_restore_gives_back_the_mlx_model():
    from metile.model import file_patches, mlx_attention

    model = _model("llama", quantized=False)
    classes = {path: type(m) for path, m in model.named_modules()}
    users = file_patches.users(llama.__name__, mlx_attention.NAME)
    compiled = metile.compile(model, decide="native", persist=False, progress=False)
    assert any(type(m) is not classes[p] for p, m in model.named_modules())
    assert llama.scaled_dot_product_attention is mlx_attention.dispatch
    # Each attention module holds the patch once; restore lets go of this model's.
    assert file_patches.users(llama.__name__, mlx_attention.NAME) == users + 2
    compiled.restore()
    assert all(type(m) is classes[p] for p, m in model.named_modules())
    assert file_patches.users(llama.__name__, mlx_attention.NAME) == users


def test_attention_with_an_array_mask_and_keys_before_the_queries():
    """A second chunk of a prompt (keys before the queries: mlx-lm's "causal" mask aligned
    bottom-right) and a decode step, through the attention region, against MLX."""
    from mlx_lm.models.cache import make_prompt_cache

    model = _model("llama", quantized=False)
    first, second = mx.array([PROMPT]), mx.array([[4, 8, 15, 16]])
    cache = make_prompt_cache(model)
    model(first, cache=cache)
    expected = np.array(model(second, cache=cache))
    compiled = metile.compile(model, decide="generated", persist=False, progress=False)
    cache = make_prompt_cache(model)
    compiled(first, cache=cache)
    got = np.array(compiled(second, cache=cache))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    attention = [r for r in compiled.regions if r.kind == "attention"]
    winners = [d["winner"] for r in attention for d in r.runner.decisions.values()]
    assert winners and set(winners) == {"metile"}


def test_a_saved_checkpoint_loads_and_compiles(tmp_path):
    from mlx_lm.utils import load_model, save_config, save_model

    model = _model("llama", quantized=False)
    save_model(tmp_path, model)
    save_config(vars(model.args), tmp_path / "config.json")
    loaded, _ = load_model(tmp_path)
    compiled = metile.compile(loaded, decide="generated", persist=False, progress=False)
    assert compiled.verify(PROMPT, steps=4)["passed"]
    np.testing.assert_array_equal(np.array(loaded.model.layers[0].mlp.gate_proj.weight),
                                  np.array(model.model.layers[0].mlp.gate_proj.weight))


def test_bad_arguments_are_errors():
    with pytest.raises(TypeError, match="expected an mlx.nn.Module or a torch.nn.Module, got list"):
        metile.compile([1, 2])
    with pytest.raises(ValueError, match="decide must be one of measured, generated, native"):
        metile.compile(_llama(1), decide="fastest")


def test_mlx_arrays_are_kernel_outputs_in_place():
    from metile_kernels.vector_add import vector_add as add

    x, y = mx.arange(100).astype(mx.float32), mx.ones((100,))
    out = mx.zeros((100,))
    add[(1,)](x, y, out, 100, BLOCK=128)
    np.testing.assert_array_equal(np.array(out), np.arange(100) + 1.0)
    # A transposed (not contiguous) MLX array: staged and copied back.
    out_t = mx.zeros((10, 12)).T
    add[(1,)](mx.ones((12, 10)), mx.ones((12, 10)) * 2, out_t, 120, BLOCK=128)
    np.testing.assert_array_equal(np.array(out_t), np.full((12, 10), 3.0))


def test_calls_a_region_cannot_take_are_counted_in_explain():
    mx.random.seed(5)
    layer = nn.Linear(16, 8)
    x = mx.random.normal((3, 16))
    compiled = metile.compile(layer, (x,), decide="generated", persist=False, progress=False)
    np.testing.assert_allclose(np.array(layer(x=x)), np.array(x @ layer.weight.T + layer.bias),
                               rtol=1e-5, atol=1e-5)
    (region,) = compiled.report()["regions"]
    assert region["calls_kept_in_framework"] == {"called with keyword arguments": 1}
