"""metile.compile(model) on Hugging Face transformers models (Llama and Qwen3 configs with random
weights): on the host target with CPU tensors, on the cuda device with CUDA tensors. Skipped
where torch or transformers is not installed (CI installs neither; the GPU machine has both)."""

import json

import pytest

import metile

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PROMPT = [1, 5, 9, 3, 7, 2, 11]
# 40 tokens, then 32 steps: the keys grow past 64, the attention region's padding bucket
LONG_PROMPT = [(7 * i + 3) % 96 for i in range(40)]


def _device():
    return "cuda" if metile.device() == "cuda" else "cpu"


def _model(arch, dtype):
    torch.manual_seed(0)
    sizes = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, vocab_size=96,
                 max_position_embeddings=256)
    if arch == "qwen3":
        model = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(head_dim=16, **sizes))
    else:
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**sizes))
    return model.eval().to(device=_device(), dtype=dtype)


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_compiled_model_matches_torch(arch, dtype):
    model = _model(arch, getattr(torch, dtype))
    ids = torch.tensor([PROMPT], device=_device())
    compiled = metile.compile(model, (ids,), decide="generated", persist=False, progress=False)
    kinds = {r.kind for r in compiled.regions}
    assert {"rms_norm", "linear", "swiglu_mlp", "embedding", "attention", "rotary"} <= kinds
    result = compiled.verify(LONG_PROMPT, steps=32)
    assert result["passed"] and result["agreement"] >= 31, result
    decisions = compiled.decisions()
    assert decisions and all(d[2] == "metile" for d in decisions), decisions
    report = json.loads(compiled.explain())
    assert report["framework"] == "torch"
    assert any(k["module"].endswith("Attention") and "KV cache update runs in torch" in k["reason"]
               for k in report["kept_in_framework"])
    for kind in ("attention", "rotary"):
        regions = [r for r in report["regions"] if r["kind"] == kind]
        assert regions and all(any(k.startswith(kind + " ") for k in r["kernels"])
                               for r in regions)


def test_attention_with_a_padding_mask_over_a_batch():
    """Two prompts, the first left-padded: the region's additive mask and the key padding to a
    multiple of 64 give sdpa's logits at every real position."""
    model = _model("llama", torch.float32)
    ids = torch.tensor([[0, 0, 0, 4, 8, 15], [16, 23, 42, 7, 9, 1]], device=_device())
    mask = torch.tensor([[0, 0, 0, 1, 1, 1], [1] * 6], device=_device())
    with torch.no_grad():
        expected = model(input_ids=ids, attention_mask=mask).logits
    compiled = metile.compile(model, decide="generated", persist=False, progress=False)
    with torch.no_grad():
        got = compiled(input_ids=ids, attention_mask=mask).logits
    attention = [r for r in compiled.regions if r.kind == "attention"]
    assert all(d["winner"] == "metile" for r in attention for d in r.runner.decisions.values())
    torch.testing.assert_close(got[0, 3:], expected[0, 3:], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got[1], expected[1], rtol=1e-4, atol=1e-4)


def test_a_saved_checkpoint_loads_and_compiles(tmp_path):
    model = _model("llama", torch.float32)
    model.save_pretrained(tmp_path)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path).eval().to(_device())
    compiled = metile.compile(loaded, decide="generated", persist=False, progress=False)
    assert compiled.verify(PROMPT, steps=4)["passed"]


def test_measured_decisions_and_restore():
    from transformers.models.llama import modeling_llama

    from metile.model import file_patches

    users = file_patches.users(modeling_llama.__name__, "apply_rotary_pos_emb")
    model = _model("llama", torch.float32)
    compiled = metile.compile(model, (torch.tensor([PROMPT], device=_device()),),
                              persist=False, progress=False)
    assert compiled.verify(PROMPT, steps=4)["passed"]
    assert {d[2] for d in compiled.decisions()} <= {"native", "metile"}
    compiled.restore()
    assert not any(hasattr(m, "_metile_region") for m in model.modules())
    assert file_patches.users(modeling_llama.__name__, "apply_rotary_pos_emb") == users
    assert model.config._attn_implementation != "metile"


def test_torch_compile_backend_runs_the_regions_of_dynamos_graph():
    from metile.model import dynamo_backend as tb

    model = _model("llama", torch.float32)
    ids = torch.tensor([PROMPT], device=_device())
    with torch.no_grad():
        expected = model(input_ids=ids, use_cache=False).logits
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=metile.torch_backend(decide="generated",
                                                                persist=False))
    with torch.no_grad():
        got = compiled(input_ids=ids, use_cache=False).logits
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    kinds = {kind for _, kind, _ in tb.LAST}
    assert {"embedding", "rms_norm", "linear", "swiglu_mlp"} <= kinds
    paths = {path for path, _, _ in tb.LAST}
    assert "model.layers.0.mlp" in paths and "lm_head" in paths
    winners = {d["winner"] for _, _, r in tb.LAST for d in r.decisions.values()}
    assert winners == {"metile"}
    # The registered name: the same backend with measured decisions.
    tb.register()
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(model, backend="metile")(input_ids=ids, use_cache=False).logits
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    torch._dynamo.reset()


def _static_decode(model, cache, prompt, token):
    """Prefill `prompt` into a StaticCache, then one decode step's logits for `token`."""
    device = _device()
    ids = torch.tensor([prompt], device=device)
    kw = {"cache" if "cache" in __import__("inspect").signature(type(model).forward).parameters
          else "past_key_values": cache}
    with torch.no_grad():
        model(input_ids=ids, use_cache=True, **kw)
        step = torch.tensor([[token]], device=device)
        return model(input_ids=step, use_cache=True, **kw).logits[0, -1]


def test_a_static_cache_decode_step_and_its_cuda_graph_replay():
    """Static shapes (transformers' StaticCache): the attention region's key length is the
    cache's, so one decision and one kernel serve every step; on the cuda device the decided
    step is captured in a CUDA graph and replayed."""
    model = _model("llama", torch.float32)
    make = lambda: transformers.StaticCache(config=model.config, max_cache_len=80)  # noqa: E731
    expected = _static_decode(model, make(), PROMPT, 13)
    compiled = metile.compile(model, decide="generated", persist=False, progress=False)
    got = _static_decode(compiled.model, make(), PROMPT, 13)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    attention = [r for r in compiled.regions if r.kind == "attention"]
    assert all(d["winner"] == "metile" for r in attention for d in r.runner.decisions.values())
    if _device() != "cuda":
        return
    cache = make()
    _static_decode(model, cache, PROMPT, 13)  # warm: every shape decided before the capture
    step = torch.tensor([[13]], device="cuda")
    kw = {"past_key_values": cache, "use_cache": True}
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        model(input_ids=step, **kw)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph), torch.no_grad():
        captured = model(input_ids=step, **kw).logits[0, -1]
    graph.replay()
    torch.cuda.synchronize()
    # The captured step is the third 13 after the prompt (one warm step, one on the side stream).
    with compiled.native():
        reference = _static_decode(model, make(), PROMPT + [13, 13], 13)
    torch.testing.assert_close(captured, reference, rtol=1e-4, atol=1e-4)
