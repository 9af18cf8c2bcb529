"""Processes sharing one compile cache, as the ranks of torchrun on one host do: started
together on an empty cache, they compile a kernel once (the others wait on the entry's lock
and load what the first stored, metile/runtime/disk_cache.h), all compute the right result,
and the cache ends with one valid entry and nothing half-written. Runs on the host target."""

import os
import stat
import subprocess
import sys
import time

import pytest

CHILD = """
import os, sys, time
import numpy as np
import metile

@metile.kernel
def scale_shift(x, out, n, BLOCK: metile.constexpr):
    offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offs < n
    metile.store(out + offs, metile.load(x + offs, mask) * 3.0 + 1.0, mask)

start, rank = sys.argv[1], int(sys.argv[2])
open(start + f".ready{rank}", "w").close()
while not os.path.exists(start):  # every process compiles at the same moment
    time.sleep(0.002)
n = 1000  # a ragged tail of the 128-wide blocks
x = np.random.default_rng(rank).standard_normal(n).astype(np.float32)
out = np.zeros(n, np.float32)
scale_shift[(metile.cdiv(n, 128),)](x, out, n, BLOCK=128)
np.testing.assert_allclose(out, x * np.float32(3) + np.float32(1), rtol=1e-6)
print("ok", rank)
"""

# The host C++ compiler behind a wrapper that records which meTile process ran it for an
# object (its parent's pid) and takes a second, so that the others ask while it compiles.
WRAPPER = """#!/bin/sh
case " $* " in
  *" -o "*) echo "$PPID" >> "{log}"; sleep 1 ;;
esac
exec {cxx} "$@"
"""

PROCESSES = 4


def test_processes_compiling_one_kernel_at_once_compile_it_once(tmp_path):
    cache = tmp_path / "cache"
    log = tmp_path / "compiles.log"
    wrapper = tmp_path / "cxx"
    wrapper.write_text(WRAPPER.format(log=log, cxx=os.environ.get("METILE_HOST_CXX", "c++")))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    script = tmp_path / "scale_shift.py"
    script.write_text(CHILD)
    start = tmp_path / "start"
    env = dict(os.environ, METILE_CACHE_DIR=str(cache), METILE_DEVICE="host",
               METILE_TRACE_CACHE="off", METILE_HOST_CXX=str(wrapper))
    children = [subprocess.Popen([sys.executable, str(script), str(start), str(rank)], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for rank in range(PROCESSES)]
    try:
        deadline = time.monotonic() + 300
        while not all((tmp_path / f"start.ready{r}").exists() for r in range(PROCESSES)):
            assert time.monotonic() < deadline, "the processes did not start"
            assert all(c.poll() is None for c in children), [c.communicate() for c in children]
            time.sleep(0.01)
        start.touch()
        outputs = [c.communicate(timeout=600) for c in children]
    finally:
        for c in children:
            if c.poll() is None:
                c.kill()
    for rank, (c, (out, err)) in enumerate(zip(children, outputs)):
        assert c.returncode == 0, err
        assert out.split() == ["ok", str(rank)]
    compilers = log.read_text().split()
    # One process compiled (the race check links in a second step: same process).
    assert len(set(compilers)) == 1, compilers
    entries = sorted(p.name for p in (cache / "host").iterdir()
                     if not p.name.startswith("stdlib-"))
    [lock] = [e for e in entries if e.endswith(".lock")]
    key = lock[:-len(".lock")]
    assert entries == sorted([key, key + ".sum", lock]), entries
    assert key.endswith(".so")
