"""A host module without a work-group function (race checking, or a kernel too large for one)
is compiled with METILE_HOST_SCALAR_MATH: its math functions, min and max are calls, which keep
the host compiler's time linear in a large kernel (docs/host_emulator.md, "How a kernel is
built"). Its results must be the bits the work-group function's inline and vectorised math
gives, on the values where min, max, where and exp have rules of their own: NaNs, signed zeros,
infinities, overflow and underflow.
"""

import os
import subprocess
import sys

import numpy as np

import metile

SPECIAL = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 88.7, 88.8, -103.9,
                    -104.0, 1e-30, 1e-45], np.float32)


@metile.kernel
def special_math(x, y, out, n):
    i = metile.arange(0, 256)
    a = metile.load(x + i, mask=i < n, other=0.0)
    b = metile.load(y + i, mask=i < n, other=0.0)
    metile.store(out + i, metile.exp(a), mask=i < n)
    metile.store(out + n + i, metile.maximum(a, b), mask=i < n)
    metile.store(out + 2 * n + i, metile.minimum(a, b), mask=i < n)
    metile.store(out + 3 * n + i, metile.where(a > b, a, b), mask=i < n)


def operands():
    # Every pair of special values (196), then random ones: a ragged 201-element tile.
    a, b = np.meshgrid(SPECIAL, SPECIAL)
    rng = np.random.default_rng(7)
    x = np.concatenate([a.ravel(), rng.normal(0, 30, 201 - a.size)]).astype(np.float32)
    y = np.concatenate([b.ravel(), rng.normal(0, 30, 201 - b.size)]).astype(np.float32)
    return x, y


def run_special_math():
    x, y = operands()
    out = np.zeros(4 * x.size, np.float32)
    special_math[(1,)](x, y, out, x.size)
    return out


RUN = f'''
import sys
import numpy as np
sys.path.insert(0, {os.path.dirname(__file__)!r})
import test_host_scalar_math as t
np.save(sys.argv[1], t.run_special_math())
'''


def test_scalar_math_gives_the_work_group_functions_bits(tmp_path):
    on_fibers = run_special_math()  # the suites check races: fibers, scalar math
    out_path = tmp_path / "workgroup.npy"
    env = dict(os.environ, METILE_HOST_RACECHECK="0", METILE_HOST_EXECUTION="workgroup")
    run = subprocess.run([sys.executable, "-c", RUN, str(out_path)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    in_workgroup = np.load(out_path)
    np.testing.assert_array_equal(on_fibers.view(np.uint32), in_workgroup.view(np.uint32))

    x, y = operands()
    exp, maximum, minimum, where = on_fibers.reshape(4, x.size)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(exp, np.exp(x), rtol=1e-6)
    # A NaN operand gives the other one; equal operands (signed zeros) the second.
    take_x = (x > y) | (np.isnan(y) & ~np.isnan(x))
    np.testing.assert_array_equal(maximum.view(np.uint32), np.where(take_x, x, y).view(np.uint32))
    take_x = (x < y) | (np.isnan(y) & ~np.isnan(x))
    np.testing.assert_array_equal(minimum.view(np.uint32), np.where(take_x, x, y).view(np.uint32))
    np.testing.assert_array_equal(where.view(np.uint32), np.where(x > y, x, y).view(np.uint32))


CHAIN = '''
import sys
import numpy as np
import metile


@metile.kernel
def chain(x, out, n, N_OPS: metile.constexpr):
    i = metile.arange(0, 256)
    acc = metile.load(x + i, mask=i < n, other=0.0)
    for k in range(N_OPS):
        acc = metile.maximum(acc * 0.5, metile.exp(acc - 4.0)) if k % 2 else acc + 0.25
    metile.store(out + i, acc, mask=i < n)


x = np.random.default_rng(3).random(201, dtype=np.float32)
out = np.zeros_like(x)
chain[(1,)](x, out, x.size, N_OPS=int(sys.argv[2]))
np.save(sys.argv[1], out)
'''


def test_a_kernel_too_large_for_a_work_group_function_runs_on_fibers(tmp_path):
    # 4,500 tile ops of 4 elements per thread: more than 16,384 ops in the thread loops.
    script = tmp_path / "chain.py"
    script.write_text(CHAIN)
    out_path = tmp_path / "out.npy"
    env = dict(os.environ, METILE_HOST_RACECHECK="0")
    run = subprocess.run([sys.executable, str(script), str(out_path), "1800"], env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    acc = np.zeros(256, np.float32)
    acc[:201] = np.random.default_rng(3).random(201, dtype=np.float32)
    for k in range(1800):
        if k % 2:
            acc = np.maximum(acc * np.float32(0.5), np.exp(acc - np.float32(4.0)))
        else:
            acc = acc + np.float32(0.25)
    np.testing.assert_allclose(np.load(out_path), acc[:201], rtol=1e-5)

    env["METILE_HOST_EXECUTION"] = "workgroup"
    run = subprocess.run([sys.executable, str(script), str(out_path), "1800"], env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode != 0
    assert "kernel 'chain' cannot run as a work-group function; it runs on fibers (its thread " \
        "loops would hold" in run.stderr, run.stderr
    assert "ops, more than the 16384 the host compiler builds in reasonable time)" in run.stderr
