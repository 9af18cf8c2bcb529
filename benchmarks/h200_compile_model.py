"""metile.compile(model) on an NVIDIA GPU (the H200), beside torch eager and torch.compile on the
same model in one run (issue 31):

    python benchmarks/h200_compile_model.py OUT.json [--layers 16] [--arch llama|qwen3]
    python benchmarks/h200_compile_model.py OUT.json --small     # smoke check (CPU tensors on host)

The model: transformers' LlamaForCausalLM from LlamaConfig(hidden_size=2048,
intermediate_size=8192, num_hidden_layers=16, num_attention_heads=16, num_key_value_heads=8)
(1.14 B parameters) with random weights, bf16 (--arch qwen3: the same sizes as a Qwen3Config,
head_dim 128, with its q/k norms). No tokenizer: the prompt is random token ids.

Recorded, each peer on the same model object (metile.restore() between them):
- cold compile: torch.compile's first prefill call (its compile) and metile.compile's
  capture + first prefill + first decode step (kernel compiles, gates and measured decisions);
- prefill of 512 tokens and one decode step (batch 1, 128 cached tokens, the cache rebuilt
  for each sample), CUDA events, medians of interleaved samples;
- the compiled model's verification against eager (logits error, KL, greedy agreement over 32
  steps) and its decisions (how many regions run meTile's kernels).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

import torch
import transformers

import metile

PREFILL, CACHED = 512, 128


def model_for(arch, layers, small, device):
    sizes = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=layers,
                 num_attention_heads=16, num_key_value_heads=8, vocab_size=32000)
    if small:
        sizes = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, vocab_size=96)
    torch.manual_seed(0)
    if arch == "qwen3":
        head_dim = sizes["hidden_size"] // sizes["num_attention_heads"]
        config = transformers.Qwen3Config(head_dim=head_dim, **sizes)
        model = transformers.Qwen3ForCausalLM(config)
    else:
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**sizes))
    dtype = torch.float32 if small else torch.bfloat16
    return model.eval().to(device=device, dtype=dtype)


def cache_kw(model, cache):
    import inspect

    name = "cache" if "cache" in inspect.signature(type(model).forward).parameters \
        else "past_key_values"
    return {name: cache}


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn):
    sync()
    started = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - started


def steps(model, call, prompt, device):
    """(prefill(), decode()) closures: a 512-token prefill, and one decode step after 128 cached
    tokens (the cache made outside the timed part)."""
    ids = torch.tensor([prompt], device=device)
    cached = torch.tensor([prompt[:CACHED]], device=device)
    one = torch.tensor([[prompt[CACHED]]], device=device)

    def prefill():
        with torch.no_grad():
            call(input_ids=ids, use_cache=False)

    def decode_with(cache):
        with torch.no_grad():
            call(input_ids=one, use_cache=True, **cache_kw(model, cache))

    def fresh_cache():
        cache = transformers.DynamicCache(config=model.config)
        with torch.no_grad():
            call(input_ids=cached, use_cache=True, **cache_kw(model, cache))
        return cache

    return prefill, decode_with, fresh_cache


def sample(prefill, decode_with, fresh_cache, samples):
    prefill_s, decode_s = [], []
    for _ in range(samples):
        prefill_s.append(timed(prefill))
        cache = fresh_cache()
        decode_s.append(timed(lambda: decode_with(cache)))
    return statistics.median(prefill_s), statistics.median(decode_s)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--arch", default="llama", choices=["llama", "qwen3"])
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--no-torch-compile", action="store_true")
    a = parser.parse_args()
    device = "cuda" if metile.device() == "cuda" else "cpu"
    model = model_for(a.arch, a.layers, a.small, device)
    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, vocab, (PREFILL,), generator=generator).tolist()
    record = {"arch": a.arch, "layers": a.layers, "small": a.small, "device": device,
              "gpu": torch.cuda.get_device_name() if device == "cuda" else "host",
              "torch": torch.__version__, "transformers": transformers.__version__,
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                       capture_output=True, text=True).stdout.strip(),
              "parameters": sum(p.numel() for p in model.parameters()),
              "prefill_tokens": PREFILL, "cached_tokens": CACHED, "samples": a.samples}

    eager = steps(model, model, prompt, device)
    eager[0]()  # warm cuBLAS / cuDNN
    record["eager_prefill_s"], record["eager_decode_s"] = sample(*eager, a.samples)
    print(f"eager: prefill {record['eager_prefill_s'] * 1e3:.2f} ms, decode "
          f"{record['eager_decode_s'] * 1e3:.2f} ms", flush=True)

    if not a.no_torch_compile:
        compiled_torch = torch.compile(model)
        tc = steps(model, compiled_torch, prompt, device)
        record["torch_compile_cold_s"] = timed(tc[0])
        cache = tc[2]()
        record["torch_compile_cold_decode_s"] = timed(lambda: tc[1](cache))
        record["torch_compile_prefill_s"], record["torch_compile_decode_s"] = sample(*tc, a.samples)
        print(f"torch.compile: cold {record['torch_compile_cold_s']:.1f} s, prefill "
              f"{record['torch_compile_prefill_s'] * 1e3:.2f} ms, decode "
              f"{record['torch_compile_decode_s'] * 1e3:.2f} ms", flush=True)
        torch._dynamo.reset()

    started = time.perf_counter()
    compiled = metile.compile(model, persist=False)
    mt = steps(model, model, prompt, device)
    mt[0]()
    cache = mt[2]()
    mt[1](cache)
    sync()
    record["metile_cold_s"] = time.perf_counter() - started
    record["metile_prefill_s"], record["metile_decode_s"] = sample(*mt, a.samples)
    record["verification"] = compiled.verify(prompt[:16], steps=32)
    record["metile_report"] = compiled.report()
    decisions = compiled.decisions()
    record["metile_decisions"] = {"total": len(decisions),
                                  "metile": sum(1 for d in decisions if d[2] == "metile")}
    print(f"metile.compile: cold {record['metile_cold_s']:.1f} s, prefill "
          f"{record['metile_prefill_s'] * 1e3:.2f} ms, decode "
          f"{record['metile_decode_s'] * 1e3:.2f} ms; {record['metile_decisions']['metile']} of "
          f"{len(decisions)} decisions run meTile's kernels; verification "
          f"{ {k: record['verification'][k] for k in ('agreement', 'kl', 'passed')} }", flush=True)
    compiled.restore()
    with open(a.out, "w") as f:
        json.dump(record, f, indent=1, default=str)


if __name__ == "__main__":
    sys.exit(main())
