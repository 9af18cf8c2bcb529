"""Register reductions (FP32 sums at a kernel's top level) publish their SIMD groups' partials
in two threadgroup slots taken in turn (ThreadgroupAllocator::allocate_reduction_slot): one
reduction's publication barrier releases the slot of the reduction before it, so a kernel of
any number of them needs 32 bytes, not 16 bytes each (issue 34: more than 2,048 overran the
host's 32 KB). The test suites check races (conftest.py), so a slot reused too early fails
here as a threadgroup memory race.
"""

import os
import subprocess
import sys

import numpy as np

import metile


@metile.kernel
def chain(x, out, n, N_OPS: metile.constexpr):  # N_OPS reductions, each between barriers
    i = metile.arange(0, 256)
    acc = metile.load(x + i, mask=i < n, other=0.0)
    for k in range(N_OPS):
        acc = acc - metile.sum(acc) * (1.0 / 256) + (k % 3)
    metile.store(out + i, acc, mask=i < n)


def reference(x, reductions):
    acc = np.zeros(256, np.float32)  # the tile's tail past n starts from the loads' 0
    acc[:x.size] = x
    for k in range(reductions):
        acc = acc - acc.sum(dtype=np.float32) * np.float32(1.0 / 256) + np.float32(k % 3)
    return acc[:x.size]


def test_register_reductions_take_two_slots_in_turn():
    x = np.random.default_rng(5).random(201, dtype=np.float32)  # a ragged tile
    out = np.zeros_like(x)
    dispatch = chain[(1,)].prepare(x, out, x.size, N_OPS=40)
    dispatch()
    np.testing.assert_allclose(out, reference(x, 40), rtol=1e-4, atol=1e-4)
    report = dispatch.execution_report
    slots = [a["offset"] for a in report["allocations"] if "private scratch" in a["purpose"]]
    assert slots == [0, 16] * 20
    assert report["threadgroup_bytes"] == 32


def test_more_reductions_than_a_slot_each_would_fit():
    # 2,100 reductions of 16 bytes each would need 33,600 bytes, more than the host's 32 KB.
    script = f'''
import sys
import numpy as np
sys.path.insert(0, {os.path.dirname(__file__)!r})
from test_reduction_scratch import chain
x = np.random.default_rng(5).random(201, dtype=np.float32)
out = np.zeros_like(x)
dispatch = chain[(1,)].prepare(x, out, x.size, N_OPS=2100)
dispatch()
assert dispatch.execution_report["threadgroup_bytes"] == 32
np.save(sys.argv[1], out)
'''
    out_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"reductions-{os.getpid()}.npy")
    # Without race checking: its instrumentation makes the host compile of a large kernel slow.
    env = dict(os.environ, METILE_HOST_RACECHECK="0")
    run = subprocess.run([sys.executable, "-c", script, out_path], env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    x = np.random.default_rng(5).random(201, dtype=np.float32)
    np.testing.assert_allclose(np.load(out_path), reference(x, 2100), rtol=1e-3, atol=1e-3)
    os.remove(out_path)
