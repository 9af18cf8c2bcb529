"""Graphs run through plan.compile() on an NVIDIA GPU (the H200), beside torch (issue 29):

    python benchmarks/h200_graph.py OUT.json            # on the GPU machine
    METILE_DEVICE=host python benchmarks/h200_graph.py OUT.json --quick   # smoke check, no GPU

Cases, each a GraphBuilder graph planned by plan_graph_fusion and compiled by plan.compile():

- seed000: add + rms_norm with both results as outputs (seed 000's example, (1, 2048) f16,
  and (8192, 4096) f16), one two-output kernel; peer: torch eager;
- attention: q @ k^T, scale, [causal mask], softmax, @ v at 4 x 32 x 4096 x 128 bf16, rewritten
  to flash_attention (kt = transpose(k) is read in place through its strides); peers:
  torch SDPA (cuDNN / flash) and torch eager; TFLOP/s counts 4*B*H*L*S*D (half when causal);
- swiglu: (silu(x @ w_gate) * (x @ w_up)) @ w_down, hidden 4096, intermediate 14336, bf16,
  M = 1, 16, 2048; peers: torch eager and torch.compile;
- decoder: a Llama-style decoder block (RMSNorm, QKV, rotary, grouped-query causal attention,
  output projection + residual, RMSNorm, SwiGLU MLP, residual) over T tokens, bf16, at
  Llama 3.2 1B's sizes (hidden 2048, 32 heads, 8 KV heads, head dim 64, intermediate 8192) and
  Llama 3 8B's (hidden 4096, 32 / 8 heads, head dim 128, intermediate 14336), T = 16 and 2048;
  peers: the same block in torch (SDPA with repeated K/V heads) eager and torch.compile.

With --no-views, transposes, reshapes and slices are copied by kernels of their own instead
of being read in place through strides (plan.compile(views=False)), to compare the two.

With --measured, each case also runs through plan.compile(dispatch="measured") (every region
decided by metile.select against torch's unfused ops, 10% headroom) and the per-region
decisions with their timings are recorded under "measured_dispatch".

Every output is checked against the torch (or, on host, numpy) reference before anything is
timed; a case that fails is recorded with its error and never timed. Times are CUDA-event
medians over rounds that interleave the candidates; raw per-round times go to OUT.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import metile

# The decoder block and its numpy reference, as the graph tests build them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from llama_block import decoder_graph, decoder_reference  # noqa: E402

ROUNDS, WARMUP = 20, 3


def seed_graph(rows, cols, dtype):
    b = metile.GraphBuilder()
    values = b.input("values", metile.TensorSpec((rows, cols), dtype))
    residual = b.input("residual", metile.TensorSpec((rows, cols), dtype))
    weight = b.input("weight", metile.TensorSpec((cols,), dtype))
    summed = b.add(values, residual)
    return b.build((summed, b.rms_norm(summed, weight, 1e-5)))


def attention_graph(shape, causal, dtype):
    b = metile.GraphBuilder()
    q, k, v = (b.input(n, metile.TensorSpec(shape, dtype)) for n in ("q", "k", "v"))
    scores = b.scale(b.matmul(q, b.transpose(k)), shape[-1] ** -0.5)
    if causal:
        scores = b.causal_mask(scores)
    return b.build([b.matmul(b.softmax(scores), v)])


def swiglu_graph(m, hidden, inter, dtype):
    b = metile.GraphBuilder()
    x = b.input("x", metile.TensorSpec((m, hidden), dtype))
    wg = b.input("w_gate", metile.TensorSpec((hidden, inter), dtype))
    wu = b.input("w_up", metile.TensorSpec((hidden, inter), dtype))
    wd = b.input("w_down", metile.TensorSpec((inter, hidden), dtype))
    h = b.multiply(b.silu(b.matmul(x, wg)), b.matmul(x, wu))
    return b.build([b.matmul(h, wd)])


def decoder_cases(quick, dt):
    if quick:
        dims = dict(tokens=13, hidden=128, heads=4, kv_heads=2, head_dim=32, inter=160)
        yield "decoder", dims, decoder_graph(**dims, dtype=dt)
        return
    for hidden, head_dim, inter in ((2048, 64, 8192), (4096, 128, 14336)):
        for tokens in (16, 2048):
            dims = dict(tokens=tokens, hidden=hidden, heads=32, kv_heads=8, head_dim=head_dim,
                        inter=inter)
            yield "decoder", dims, decoder_graph(**dims, dtype=dt)


def cases(quick, on_gpu):
    dt = "bf16" if on_gpu else "f32"
    if quick:
        yield "seed000", dict(rows=1, cols=2048), seed_graph(1, 2048, "f16")
        yield "attention", dict(shape=(1, 2, 80, 32), causal=False), attention_graph((1, 2, 80, 32), False, dt)
        yield "attention", dict(shape=(1, 2, 80, 32), causal=True), attention_graph((1, 2, 80, 32), True, dt)
        yield "swiglu", dict(m=3, hidden=64, inter=96), swiglu_graph(3, 64, 96, dt)
        yield from decoder_cases(True, dt)
        return
    for rows, cols in ((1, 2048), (8192, 4096)):
        yield "seed000", dict(rows=rows, cols=cols), seed_graph(rows, cols, "f16")
    for causal in (False, True):
        yield "attention", dict(shape=(4, 32, 4096, 128), causal=causal), attention_graph(
            (4, 32, 4096, 128), causal, "bf16")
    for m in (1, 16, 2048):
        yield "swiglu", dict(m=m, hidden=4096, inter=14336), swiglu_graph(m, 4096, 14336, "bf16")
    yield from decoder_cases(False, "bf16")


# ---- references and peers -------------------------------------------------------------------

def torch_peers(name, params, inputs):
    import torch
    import torch.nn.functional as F
    if name == "seed000":
        def eager(values, residual, weight):
            s = values + residual
            x = s.float()
            return s, (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)).to(s.dtype) * weight
        return {"torch_eager": eager}
    if name == "attention":
        causal = params["causal"]

        def sdpa(q, k, v):
            return (F.scaled_dot_product_attention(q, k, v, is_causal=causal),)

        def eager(q, k, v):
            s = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
            if causal:
                n = s.shape[-1]
                s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1),
                                  float("-inf"))
            return (torch.softmax(s, -1) @ v,)
        return {"torch_sdpa": sdpa, "torch_eager": eager}

    if name == "decoder":
        heads, kv_heads, head_dim = params["heads"], params["kv_heads"], params["head_dim"]

        def rms(x, w):
            y = x.float()
            return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

        def rope(x, cos, sin):
            half = head_dim // 2
            x1, x2 = x[..., :half], x[..., half:]
            return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)

        def block(x, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down, cos, sin):
            t = x.shape[0]
            h = rms(x, attn_norm)
            q = rope((h @ wq).view(t, heads, head_dim).transpose(0, 1), cos, sin)
            k = rope((h @ wk).view(t, kv_heads, head_dim).transpose(0, 1), cos, sin)
            v = (h @ wv).view(t, kv_heads, head_dim).transpose(0, 1)
            group = heads // kv_heads
            k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            h2 = x + a.transpose(0, 1).reshape(t, -1) @ wo
            n2 = rms(h2, mlp_norm)
            return (h2 + (F.silu(n2 @ w_gate) * (n2 @ w_up)) @ w_down,)
        return {"torch_eager": block, "torch_compile": torch.compile(block)}

    def mlp(x, w_gate, w_up, w_down):
        return ((F.silu(x @ w_gate) * (x @ w_up)) @ w_down,)
    return {"torch_eager": mlp, "torch_compile": torch.compile(mlp)}


def numpy_reference(name, params, inputs):
    a = {k: np.asarray(v, np.float64) for k, v in inputs.items()}
    if name == "seed000":
        s = a["values"] + a["residual"]
        return s, s / np.sqrt((s * s).mean(-1, keepdims=True) + 1e-5) * a["weight"]
    if name == "attention":
        s = a["q"] @ np.swapaxes(a["k"], -1, -2) / np.sqrt(a["q"].shape[-1])
        if params["causal"]:
            s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        return ((p / p.sum(-1, keepdims=True)) @ a["v"],)
    if name == "decoder":
        return (decoder_reference(a, params["heads"], params["kv_heads"], params["head_dim"]),)
    g = a["x"] @ a["w_gate"]
    return ((g / (1 + np.exp(-g)) * (a["x"] @ a["w_up"])) @ a["w_down"],)


def make_inputs(graph_inputs, specs, on_gpu, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for name, spec in zip(graph_inputs, specs):
        scale = 1.0 if name in ("values", "residual", "weight", "q", "k", "v", "x") else \
            spec.shape[0] ** -0.5
        data = rng.standard_normal(spec.shape).astype(np.float32) * scale
        if name in ("attn_norm", "mlp_norm"):
            data = (1 + 0.1 * rng.standard_normal(spec.shape)).astype(np.float32)
        if name in ("cos", "sin"):  # rotary tables, base 10000
            tokens, half = spec.shape
            angles = np.arange(tokens)[:, None] * 10000.0 ** (-np.arange(half) / half)
            data = (np.cos(angles) if name == "cos" else np.sin(angles)).astype(np.float32)
        if on_gpu:
            import torch
            out[name] = torch.from_numpy(data).to("cuda", getattr(torch, {
                "bf16": "bfloat16", "f16": "float16", "f32": "float32"}[spec.dtype]))
        else:
            out[name] = data.astype({"f16": np.float16, "f32": np.float32}[spec.dtype])
    return out


def check(got, want, dtype):
    tol = {"f32": 1e-3, "f16": 2e-2, "bf16": 5e-2}[dtype]
    for g, w in zip(got, want):
        g = np.asarray(g.float().cpu() if hasattr(g, "cpu") else g, np.float64)
        w = np.asarray(w.float().cpu() if hasattr(w, "cpu") else w, np.float64)
        err = np.max(np.abs(g - w)) / max(1e-6, np.max(np.abs(w)))
        if not err <= tol:
            raise AssertionError(f"max error {err:.3g} relative to the largest |reference| "
                                 f"exceeds {tol}")


def timed(fn, inputs, on_gpu):
    if on_gpu:
        import torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(**inputs)
        end.record()
        end.synchronize()
        return start.elapsed_time(end)
    t = time.perf_counter()
    fn(**inputs)
    return (time.perf_counter() - t) * 1e3


def measured_dispatch(plan, inputs, want, dtype):
    """plan.compile(dispatch="measured") on the case's inputs: output checked, then the
    decisions (winner, reason, gate, per-round timings) of every region."""
    run = plan.compile(dispatch="measured")
    try:
        check(run(**inputs), want, dtype)
    except Exception as e:
        return {"failed": f"{type(e).__name__}: {e}"}
    return [{"ops": r["ops"], "decision": {k: r["decision"].get(k) for k in (
        "decision", "winner", "reason", "source", "persisted", "selector")}}
        for r in json.loads(run.explain())["regions"]]


def run_case(name, params, graph, on_gpu, rounds, measured=False, views=True):
    plan = metile.plan_graph_fusion(graph)
    run = plan.compile(views=views)
    inputs = make_inputs(run.input_names, run.compiled.input_specs, on_gpu, seed=len(name))
    dtype = run.compiled.output_specs[0].dtype
    record = {"case": name, **{k: list(v) if isinstance(v, tuple) else v for k, v in params.items()},
              "dtype": dtype, "views": views, "kernels": json.loads(run.explain())["kernels"]}
    candidates = {"metile": run}
    if on_gpu:
        candidates.update(torch_peers(name, params, inputs))
        want = candidates.get("torch_sdpa", candidates["torch_eager"])(**inputs)
    else:
        want = numpy_reference(name, params, inputs)
    for label, fn in candidates.items():
        try:
            check(fn(**inputs), want, dtype)
        except Exception as e:  # recorded, never timed
            record.setdefault("failed", {})[label] = f"{type(e).__name__}: {e}"
    alive = [c for c in candidates if c not in record.get("failed", {})]
    times = {c: [] for c in alive}
    for _ in range(WARMUP):
        for c in alive:
            candidates[c](**inputs)
    for r in range(rounds):
        order = alive if r % 2 == 0 else alive[::-1]
        for c in order:
            times[c].append(timed(candidates[c], inputs, on_gpu))
    record["times_ms"] = times
    if measured:
        record["measured_dispatch"] = measured_dispatch(plan, inputs, want, dtype)
    record["median_ms"] = {c: statistics.median(t) for c, t in times.items() if t}
    if name == "attention" and record["median_ms"]:
        b, h, length, d = params["shape"]
        flops = 4 * b * h * length * length * d / (2 if params["causal"] else 1)
        record["tflops"] = {c: flops / (ms * 1e-3) / 1e12 for c, ms in record["median_ms"].items()}
    if "metile" in record["median_ms"]:
        base = record["median_ms"]["metile"]
        record["speed_vs"] = {c: ms / base for c, ms in record["median_ms"].items() if c != "metile"}
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="path of the raw JSON results")
    parser.add_argument("--quick", action="store_true", help="small shapes (the host smoke check)")
    parser.add_argument("--measured", action="store_true",
                        help="also decide every region by measured dispatch (metile.select)")
    parser.add_argument("--only", default="", help="comma-separated case names to run")
    parser.add_argument("--no-views", action="store_true",
                        help="copy every transpose/reshape/slice with its own kernel instead of "
                             "reading it in place (plan.compile(views=False)), to compare")
    args = parser.parse_args()
    on_gpu = metile.device() == "cuda"
    rounds = 3 if args.quick else ROUNDS
    results = {"device": metile.device(), "rounds": rounds, "cases": []}
    only = set(filter(None, args.only.split(",")))
    for name, params, graph in cases(args.quick, on_gpu):
        if only and name not in only:
            continue
        print(f"{name} {params} ...", file=sys.stderr, flush=True)
        record = run_case(name, params, graph, on_gpu, rounds, args.measured, not args.no_views)
        results["cases"].append(record)
        print(json.dumps({k: record.get(k) for k in ("case", "failed", "median_ms", "tflops",
                                                      "speed_vs")}), flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
