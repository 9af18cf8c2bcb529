"""The host emulator's two execution strategies (docs/host_emulator.md, "Execution
strategies"): kernels that run as work-group functions (loops over the threads) give the
results numpy and the fibers give, on ragged sizes; METILE_HOST_EXECUTION chooses.

Race checking (on in the test suites) runs on fibers, so each strategy runs in a child
process with METILE_HOST_RACECHECK=0.
"""

import os
import subprocess
import sys

import numpy as np

KERNELS = '''
import sys
import numpy as np
import metile


@metile.kernel(num_threads=64)
def reverse_blocks(x, out, n):  # a barrier inside a loop with uniform bounds
    scratch = metile.shared(64, "f32")
    t = metile.thread_id()
    for start in metile.tile_range(0, n, 64):
        metile.store(scratch + t, metile.load(x + start + t, mask=start + t < n, other=-1.0))
        metile.barrier()
        metile.store(out + start + t, metile.load(scratch + (63 - t)), mask=start + t < n)
        metile.barrier()


@metile.kernel(num_threads=64)
def collectives(x, out, n):
    t = metile.thread_id()
    v = metile.load(x + t, mask=t < n, other=0.0)
    lane = metile.simd_lane_id()
    metile.store(out + t * 6, metile.simd_sum(v))
    metile.store(out + t * 6 + 1, metile.simd_max(v))
    metile.store(out + t * 6 + 2, metile.simd_min(v))
    metile.store(out + t * 6 + 3, metile.simd_shuffle_xor(v, 1))
    metile.store(out + t * 6 + 4, metile.simd_broadcast(v, 3))
    metile.store(out + t * 6 + 5, metile.simd_shuffle(v, 31 - lane))


@metile.kernel(num_threads=64)
def swap_carried(x, out, n, steps):  # a loop without barriers, each carried value yields another
    t = metile.thread_id()
    a = metile.load(x + t, mask=t < n, other=0.0)
    b = a * 2.0
    for i in metile.tile_range(0, steps, 1):
        a, b = b, a + b
    metile.store(out + t, a, mask=t < n)


@metile.kernel
def softmax(x_ptr, out_ptr, n_cols, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    m = -1e38
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        m = metile.maximum(m, metile.load(x_row + cols, mask=cols < n_cols, other=-1e38))
    m = metile.max(m)
    total = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=-1e38)
        total = total + metile.exp(x - m)
    total = metile.sum(total)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols)
        metile.store(out_ptr + row * n_cols + cols, metile.exp(x - m) / total, mask=cols < n_cols)


rng = np.random.default_rng(7)
x = rng.standard_normal(203).astype(np.float32)
reversed_ = np.zeros_like(x)
reverse_blocks[(1,)](x, reversed_, x.size)
v = rng.standard_normal(50).astype(np.float32)
lanes = np.zeros((64, 6), np.float32)
collectives[(1,)](v, lanes, v.size)
swapped = np.zeros_like(v)
swap_carried[(1,)](v, swapped, v.size, 5)
rows = rng.standard_normal((37, 781)).astype(np.float32)
probabilities = {}
for block in (256, 1024):
    probabilities[block] = np.zeros_like(rows)
    softmax[(rows.shape[0],)](rows, probabilities[block], rows.shape[1], BLOCK=block)
np.savez(sys.argv[1], x=x, reversed=reversed_, v=v, lanes=lanes, swapped=swapped, rows=rows,
         p256=probabilities[256], p1024=probabilities[1024])
'''


def run_kernels(tmp_path, execution):
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    out = tmp_path / f"{execution}.npz"
    env = dict(os.environ, METILE_DEVICE="host", METILE_HOST_RACECHECK="0",
               METILE_HOST_EXECUTION=execution)
    run = subprocess.run([sys.executable, str(script), str(out)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return np.load(out)


def test_work_group_functions_match_numpy_and_the_fibers(tmp_path):
    # workgroup fails unless every kernel has a work-group function: all of these do.
    wg = run_kernels(tmp_path, "workgroup")
    fibers = run_kernels(tmp_path, "fibers")
    for name in wg.files:
        np.testing.assert_array_equal(wg[name], fibers[name], err_msg=name)

    x, n = wg["x"], wg["x"].size
    expected = np.array([x[s + 63 - t] if s + 63 - t < n else -1.0
                         for s in range(0, n, 64) for t in range(64) if s + t < n], np.float32)
    np.testing.assert_array_equal(wg["reversed"], expected)

    v = np.concatenate([wg["v"], np.zeros(14, np.float32)]).reshape(2, 32)
    lanes = wg["lanes"].reshape(2, 32, 6)
    for g in range(2):
        np.testing.assert_allclose(lanes[g, :, 0], v[g].sum(), rtol=1e-5)
        np.testing.assert_array_equal(lanes[g, :, 1], v[g].max())
        np.testing.assert_array_equal(lanes[g, :, 2], v[g].min())
        np.testing.assert_array_equal(lanes[g, :, 3], v[g][np.arange(32) ^ 1])
        np.testing.assert_array_equal(lanes[g, :, 4], v[g][3])
        np.testing.assert_array_equal(lanes[g, :, 5], v[g][::-1])

    a, b = wg["v"], wg["v"] * 2
    for _ in range(5):
        a, b = b, a + b
    np.testing.assert_array_equal(wg["swapped"], a)

    rows = wg["rows"]
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    for block in ("p256", "p1024"):
        np.testing.assert_allclose(wg[block], e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                                   atol=1e-7)


def test_an_unknown_strategy_is_an_error_naming_the_choices(tmp_path):
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    env = dict(os.environ, METILE_DEVICE="host", METILE_HOST_RACECHECK="0",
               METILE_HOST_EXECUTION="threads")
    run = subprocess.run([sys.executable, str(script), str(tmp_path / "out.npz")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode != 0
    assert "METILE_HOST_EXECUTION is 'threads'; it must be auto, fibers or workgroup" in run.stderr


CHAIN = '''
import sys
import numpy as np
import metile


@metile.kernel
def chain(x, out, n, N_OPS: metile.constexpr):  # N_OPS reductions, each between barriers
    i = metile.arange(0, 256)
    acc = metile.load(x + i, mask=i < n, other=0.0)
    for _ in range(N_OPS):
        acc = acc - metile.sum(acc) * (1.0 / 256)
    metile.store(out + i, acc, mask=i < n)


x = np.random.default_rng(3).random(201, dtype=np.float32)
out = np.zeros_like(x)
chain[(1,)](x, out, x.size, N_OPS=int(sys.argv[2]))
np.save(sys.argv[1], out)
'''


def test_a_kernel_of_many_thread_loops_runs_on_fibers(tmp_path):
    # 150 reductions need about 450 thread loops, more than a work-group function is given
    # (the host compiler's time per loop grows with their number; docs/host_emulator.md).
    script = tmp_path / "chain.py"
    script.write_text(CHAIN)
    env = dict(os.environ, METILE_DEVICE="host", METILE_HOST_RACECHECK="0")
    out = tmp_path / "out.npy"
    run = subprocess.run([sys.executable, str(script), str(out), "150"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    acc = np.zeros(256, np.float32)
    x = np.random.default_rng(3).random(201, dtype=np.float32)
    acc[:201] = x
    for _ in range(150):
        acc = acc - acc.sum(dtype=np.float32) * np.float32(1.0 / 256)
    np.testing.assert_allclose(np.load(out), acc[:201], rtol=1e-4, atol=1e-5)

    env["METILE_HOST_EXECUTION"] = "workgroup"
    run = subprocess.run([sys.executable, str(script), str(out), "150"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode != 0
    assert "kernel 'chain' cannot run as a work-group function; it runs on fibers (it would " \
        "need" in run.stderr, run.stderr
    assert "thread loops, more than the 256 the host compiler builds in reasonable time)" \
        in run.stderr, run.stderr
