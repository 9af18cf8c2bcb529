"""The tensor-parallel decoder block of benchmarks/tp_decoder.py. On the host, without torch:
each rank's shard run through its two meTile graphs, the all-reduces done by summing the
ranks' partials, gives the whole block (numpy float64 reference). On two GPUs: the script
itself under `torchrun --nproc-per-node 2`, skipped without torch, NCCL or a second GPU."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import metile
from llama_block import decoder_inputs, decoder_reference

BENCHMARKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")
sys.path.insert(0, BENCHMARKS)
from tp_decoder import QUICK, TensorParallelBlock, rank_dims, shard  # noqa: E402


def simulated_step(block, shards):
    """TensorParallelBlock.step on every rank at once, an all-reduce being the sum over the
    ranks' partials (what NCCL computes)."""
    attn = sum(block.attention_partial(s) for s in shards)
    parts = [block.mlp_partial(s, attn) for s in shards]
    h2 = parts[0][0]
    for other, _ in parts[1:]:
        np.testing.assert_array_equal(other, h2)  # replicated: every rank has the same
    return h2 + sum(mlp for _, mlp in parts)


@pytest.mark.parametrize("world, dims", [
    (2, QUICK),
    # Four ranks, one K/V head each, a ragged intermediate share (37 columns).
    (4, dict(tokens=7, hidden=64, heads=8, kv_heads=4, head_dim=16, inter=148)),
])
def test_the_ranks_shards_sum_to_the_whole_block(world, dims):
    inputs = decoder_inputs(**dims, rng=np.random.default_rng(world))
    block = TensorParallelBlock(dims, world, "f32")  # every rank's graphs are the same
    got = simulated_step(block, [shard(inputs, dims, r, world) for r in range(world)])
    want = decoder_reference(inputs, dims["heads"], dims["kv_heads"], dims["head_dim"])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_shards_are_torchs_column_and_row_blocks():
    dims = dict(tokens=3, hidden=8, heads=4, kv_heads=2, head_dim=2, inter=6)
    inputs = decoder_inputs(**dims, rng=np.random.default_rng(0))
    s = shard(inputs, dims, 1, 2)
    np.testing.assert_array_equal(s["wq"], inputs["wq"][:, 4:8])   # query heads 2, 3
    np.testing.assert_array_equal(s["wk"], inputs["wk"][:, 2:4])   # their K/V head 1
    np.testing.assert_array_equal(s["wo"], inputs["wo"][4:8, :])
    np.testing.assert_array_equal(s["w_gate"], inputs["w_gate"][:, 3:6])
    np.testing.assert_array_equal(s["w_down"], inputs["w_down"][3:6, :])
    assert s["x"] is inputs["x"] and s["attn_norm"] is inputs["attn_norm"]
    assert rank_dims(dims, 2) == dict(dims, heads=2, kv_heads=1, inter=3)
    with pytest.raises(ValueError, match=r"needs kv_heads \(2\) divisible by 4"):
        rank_dims(dims, 4)


def test_torchrun_on_two_gpus_matches_the_one_gpu_block(tmp_path):
    torch = pytest.importorskip("torch")
    if metile.device() != "cuda" or not torch.cuda.is_available():
        pytest.skip("needs the cuda device and torch with CUDA")
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs 2 GPUs; torch sees {torch.cuda.device_count()}")
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_nccl_available():
        pytest.skip("this torch has no NCCL")
    out = tmp_path / "tp.json"
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         os.path.join(BENCHMARKS, "tp_decoder.py"), "--quick", "--out", str(out)],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    (case,) = json.loads(out.read_text())["cases"]
    assert case["world"] == 2 and "failed" not in case
    assert max(case["errors"].values()) <= case["tolerance"]
    assert len(case["times_ms"]["metile"]) == len(case["times_ms"]["torch_eager"]) == 3
    assert "torch/meTile" in done.stdout
