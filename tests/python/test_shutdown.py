"""Interpreter shutdown: no nanobind leak report when something outside meTile keeps a
module's kernels alive past the bindings' teardown, as torch.compile's guards keep the
globals of the modules they compiled from (benchmarks/h200_memory_bound.py printed
"leaked function ..." at exit)."""

import os
import subprocess
import sys
import textwrap

KERNELS = textwrap.dedent("""
    import metile

    @metile.kernel
    def scale(x, out, n, BLOCK: metile.constexpr):
        offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
        mask = offsets < n
        metile.store(out + offsets, metile.load(x + offsets, mask) * 2.0, mask)
""")

SCRIPT = textwrap.dedent("""
    import ctypes
    import numpy as np
    import kernels

    def run():
        x = np.arange(100, dtype=np.float32)
        out = np.zeros_like(x)
        kernels.scale[(1,)](x, out, 100, BLOCK=128)
        assert np.array_equal(out, 2 * x)
        kernels.scale.compile(x, out, 100, BLOCK=128)
        kernels.scale[(1,)].prepare(x, out, 100, BLOCK=128)()

    run()
    # A reference that shutdown never drops, as an extension's static storage holds one.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(vars(kernels)))
""")


def test_no_leak_report_at_exit(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "main.py").write_text(SCRIPT)
    env = dict(os.environ, METILE_LEAK_WARNINGS="1")
    done = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr, done.stderr


HELD = textwrap.dedent("""
    import ctypes
    import metile

    LAYOUT = metile.ThreadLayout.identity(32)
    # A third party's reference that shutdown never drops (torch.compile's guards hold the
    # globals of the modules they compiled): a user's layout outlives the bindings.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(globals()))
""")


def test_what_others_keep_alive_is_reported_only_when_asked(tmp_path):
    (tmp_path / "held.py").write_text(HELD)

    def stderr(**env):
        done = subprocess.run([sys.executable, "held.py"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300, env=dict(os.environ, **env))
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert "leaked" not in stderr()
    assert 'leaked instance' in stderr(METILE_LEAK_WARNINGS="1")
