"""Interpreter shutdown: no nanobind leak report when something outside meTile keeps a
module's kernels alive past the bindings' teardown, as torch.compile's guards keep the
globals of the modules they compiled from (benchmarks/h200_memory_bound.py printed
"leaked function ..." at exit)."""

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
    done = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr, done.stderr
