"""A tensor-parallel Llama decoder block: meTile kernels do each rank's work, NCCL the
all-reduces (issue 35).

    torchrun --nproc-per-node 2 benchmarks/tp_decoder.py [--quick] [--out FILE.json]

The block (tests/python/llama_block.py: RMSNorm, QKV, rotary, grouped-query causal attention,
output projection, residual, RMSNorm, SwiGLU MLP, residual) is split over the ranks as
torch's tensor-parallel API places it (ColwiseParallel / RowwiseParallel, Megatron-LM's
layout): the Q, K and V projections and the MLP's gate and up projections are column-parallel
(each rank holds heads / world query heads, kv_heads / world K/V heads and inter / world
intermediate columns), the output and down projections row-parallel, so each rank's product
is a partial sum that an all-reduce completes. Each rank runs two meTile graphs compiled by
plan.compile(): attention (RMSNorm .. the row-parallel output projection) and the MLP (the
residual, RMSNorm .. the row-parallel down projection); the all-reduces and the last
residual add are torch's.

Every rank checks the result against the same block on one GPU (the whole graph compiled by
meTile, rank 0's GPU, and in --quick mode the float64 numpy reference) before anything is
timed, then times a step (both all-reduces included, CUDA events, the slowest rank per round)
beside the same tensor-parallel block in torch (eager, SDPA), in interleaved rounds. Rank 0
prints the table and writes the raw figures to --out (benchmarks/results/<machine>-tp-decoder.json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

import metile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
from llama_block import (causal_attention, decoder_graph, decoder_inputs,  # noqa: E402
                         decoder_reference)

ROUNDS, WARMUP = 20, 3
QUICK = dict(tokens=13, hidden=128, heads=4, kv_heads=2, head_dim=32, inter=160)
# Llama 3 8B's block, at a decode step's and a prefill's token counts.
FULL = [dict(tokens=t, hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336)
        for t in (16, 2048)]


# ---- one rank's share of the block ------------------------------------------------------

def rank_dims(dims, world):
    """The per-rank sizes: heads, K/V heads and intermediate columns split over `world`."""
    for name in ("heads", "kv_heads", "inter"):
        if dims[name] % world:
            raise ValueError(f"tensor parallelism over {world} ranks needs {name} "
                             f"({dims[name]}) divisible by {world}")
    return dict(dims, heads=dims["heads"] // world, kv_heads=dims["kv_heads"] // world,
                inter=dims["inter"] // world)


def shard(inputs, dims, rank, world):
    """Rank `rank`'s inputs: column blocks of wq, wk, wv, w_gate and w_up, row blocks of wo
    and w_down, everything else whole. Query head h uses K/V head h // group, so a rank's
    query heads are those of its own K/V heads."""
    r = rank_dims(dims, world)
    d = dims["head_dim"]
    q, kv, inter = r["heads"] * d, r["kv_heads"] * d, r["inter"]
    out = dict(inputs)
    out["wq"] = inputs["wq"][:, rank * q:(rank + 1) * q]
    out["wk"] = inputs["wk"][:, rank * kv:(rank + 1) * kv]
    out["wv"] = inputs["wv"][:, rank * kv:(rank + 1) * kv]
    out["wo"] = inputs["wo"][rank * q:(rank + 1) * q, :]
    out["w_gate"] = inputs["w_gate"][:, rank * inter:(rank + 1) * inter]
    out["w_up"] = inputs["w_up"][:, rank * inter:(rank + 1) * inter]
    out["w_down"] = inputs["w_down"][rank * inter:(rank + 1) * inter, :]
    return out


def attention_graph(tokens, hidden, heads, kv_heads, head_dim, dtype, eps=1e-5, **_):
    """RMSNorm, this rank's Q/K/V heads, rotary, causal attention and its rows of the output
    projection: the rank's partial sum of attn @ wo."""
    b = metile.GraphBuilder()

    def inp(name, shape):
        return b.input(name, metile.TensorSpec(shape, dtype))

    x, attn_norm = inp("x", (tokens, hidden)), inp("attn_norm", (hidden,))
    wq, wk = inp("wq", (hidden, heads * head_dim)), inp("wk", (hidden, kv_heads * head_dim))
    wv, wo = inp("wv", (hidden, kv_heads * head_dim)), inp("wo", (heads * head_dim, hidden))
    cos, sin = inp("cos", (tokens, head_dim // 2)), inp("sin", (tokens, head_dim // 2))

    h = b.rms_norm(x, attn_norm, eps)
    attn = causal_attention(b, h, wq, wk, wv, cos, sin, tokens, heads, kv_heads, head_dim)
    return b.build([b.matmul(attn, wo)])


def mlp_graph(tokens, hidden, inter, dtype, eps=1e-5, **_):
    """The attention residual (x + the all-reduced attention), RMSNorm, this rank's gate and
    up columns, SiLU gating and its rows of the down projection: (h2, the rank's partial
    sum of the MLP)."""
    b = metile.GraphBuilder()

    def inp(name, shape):
        return b.input(name, metile.TensorSpec(shape, dtype))

    x, attn = inp("x", (tokens, hidden)), inp("attn", (tokens, hidden))
    mlp_norm = inp("mlp_norm", (hidden,))
    w_gate, w_up = inp("w_gate", (hidden, inter)), inp("w_up", (hidden, inter))
    w_down = inp("w_down", (inter, hidden))
    h2 = b.add(x, attn)
    n2 = b.rms_norm(h2, mlp_norm, eps)
    gated = b.multiply(b.silu(b.matmul(n2, w_gate)), b.matmul(n2, w_up))
    return b.build([h2, b.matmul(gated, w_down)])


class TensorParallelBlock:
    """One rank's block: the two graphs compiled for the default device."""

    def __init__(self, dims, world, dtype):
        r = rank_dims(dims, world)
        self.attention = metile.plan_graph_fusion(attention_graph(**r, dtype=dtype)).compile()
        self.mlp = metile.plan_graph_fusion(mlp_graph(**r, dtype=dtype)).compile()

    def attention_partial(self, s):
        (partial,) = self.attention(**{n: s[n] for n in self.attention.input_names})
        return partial

    def mlp_partial(self, s, attn):
        return self.mlp(attn=attn, **{n: s[n] for n in self.mlp.input_names if n != "attn"})

    def step(self, s, all_reduce):
        """The block on this rank's shard `s`; all_reduce(t) sums t over the ranks in place."""
        attn = self.attention_partial(s)
        all_reduce(attn)
        h2, mlp = self.mlp_partial(s, attn)
        all_reduce(mlp)
        return h2 + mlp


# ---- the same block in torch, and the launcher's side ------------------------------------

def torch_step(s, r, all_reduce, eps=1e-5):
    """The same tensor-parallel block in torch eager (SDPA with repeated K/V heads)."""
    import torch
    import torch.nn.functional as F

    d, t = r["head_dim"], s["x"].shape[0]

    def rms(x, w):
        y = x.float()
        return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w

    def rope(x):
        x1, x2 = x[..., :d // 2], x[..., d // 2:]
        return torch.cat([x1 * s["cos"] - x2 * s["sin"], x2 * s["cos"] + x1 * s["sin"]], -1)

    h = rms(s["x"], s["attn_norm"])
    q = rope((h @ s["wq"]).view(t, r["heads"], d).transpose(0, 1))
    k = rope((h @ s["wk"]).view(t, r["kv_heads"], d).transpose(0, 1))
    v = (h @ s["wv"]).view(t, r["kv_heads"], d).transpose(0, 1)
    group = r["heads"] // r["kv_heads"]
    k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
    attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    partial = attn.transpose(0, 1).reshape(t, -1) @ s["wo"]
    all_reduce(partial)
    h2 = s["x"] + partial
    n2 = rms(h2, s["mlp_norm"])
    mlp = (F.silu(n2 @ s["w_gate"]) * (n2 @ s["w_up"])) @ s["w_down"]
    all_reduce(mlp)
    return h2 + mlp


def relative_error(got, want):
    got = np.asarray(got.float().cpu() if hasattr(got, "cpu") else got, np.float64)
    want = np.asarray(want.float().cpu() if hasattr(want, "cpu") else want, np.float64)
    return float(np.max(np.abs(got - want)) / max(1e-6, np.max(np.abs(want))))


def run_case(dims, dtype, rounds, quick, torch, dist):
    rank, world = dist.get_rank(), dist.get_world_size()
    torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    full = {k: torch.from_numpy(v).to("cuda", torch_dtype)
            for k, v in decoder_inputs(**dims, rng=np.random.default_rng(35)).items()}
    s = {k: v.contiguous() for k, v in shard(full, dims, rank, world).items()}
    block = TensorParallelBlock(dims, world, dtype)
    r = rank_dims(dims, world)

    def all_reduce(t):
        dist.all_reduce(t)

    candidates = {"metile": lambda: block.step(s, all_reduce),
                  "torch_eager": lambda: torch_step(s, r, all_reduce)}
    record = {"case": "tp_decoder", "world": world, "dtype": dtype, **dims}
    # Checked first: every rank against the whole block on one GPU (meTile, and torch).
    (one_gpu,) = metile.plan_graph_fusion(decoder_graph(**dims, dtype=dtype)).compile()(**full)
    tolerance = {"f32": 1e-3, "f16": 2e-2, "bf16": 5e-2}[dtype]
    errors = {"metile_vs_one_gpu_metile": relative_error(candidates["metile"](), one_gpu),
              "torch_vs_one_gpu_metile": relative_error(candidates["torch_eager"](), one_gpu)}
    if quick:
        numpy_inputs = {k: v.float().cpu().numpy() for k, v in full.items()}
        want = decoder_reference(numpy_inputs, dims["heads"], dims["kv_heads"], dims["head_dim"])
        errors["one_gpu_metile_vs_numpy"] = relative_error(one_gpu, want)
        errors["metile_vs_numpy"] = relative_error(candidates["metile"](), want)
    worst = torch.tensor([max(errors.values())], device="cuda")
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    record["errors"] = errors  # rank 0's; the check is every rank's
    record["tolerance"] = tolerance
    if worst.item() > tolerance:
        record["failed"] = f"a rank's result is off by {worst.item():.3g} > {tolerance}"
        return record
    times = {c: [] for c in candidates}
    for _ in range(WARMUP):
        for c in candidates:
            candidates[c]()
    for i in range(rounds):
        for c in (list(candidates) if i % 2 == 0 else list(candidates)[::-1]):
            dist.barrier()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            candidates[c]()
            end.record()
            end.synchronize()
            times[c].append(start.elapsed_time(end))
    # A step takes as long as its slowest rank.
    for c in times:
        slowest = torch.tensor(times[c], device="cuda", dtype=torch.float64)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        times[c] = slowest.tolist()
    record["times_ms"] = times
    record["median_ms"] = {c: statistics.median(t) for c, t in times.items()}
    record["torch_over_metile"] = record["median_ms"]["torch_eager"] / record["median_ms"]["metile"]
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small f32 shapes (the test's)")
    parser.add_argument("--out", default="", help="path of the raw JSON results (rank 0)")
    args = parser.parse_args()
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    try:
        if metile.device() != "cuda":
            raise SystemExit(f"rank {dist.get_rank()}: meTile runs on '{metile.device()}', "
                             "not the cuda device")
        cases = [(QUICK, "f32")] if args.quick else [(d, "bf16") for d in FULL]
        rounds = 3 if args.quick else ROUNDS
        records = [run_case(dims, dtype, rounds, args.quick, torch, dist)
                   for dims, dtype in cases]
        if dist.get_rank() == 0:
            for rec in records:
                shape = (f"T={rec['tokens']} hidden={rec['hidden']} heads={rec['heads']}/"
                         f"{rec['kv_heads']} inter={rec['inter']} {rec['dtype']}")
                if "failed" in rec:
                    print(f"{shape}: FAILED {rec['failed']} {rec['errors']}")
                    continue
                m = rec["median_ms"]
                print(f"{shape} on {rec['world']} GPUs: meTile {m['metile']:.3f} ms, torch "
                      f"{m['torch_eager']:.3f} ms per step (torch/meTile "
                      f"{rec['torch_over_metile']:.2f}); errors {rec['errors']}")
            if args.out:
                with open(args.out, "w") as f:
                    json.dump({"gpu": torch.cuda.get_device_name(), "cases": records}, f,
                              indent=1)
        if any("failed" in rec for rec in records):
            raise SystemExit(1)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
