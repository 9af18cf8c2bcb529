"""Caches that cannot lie, and limits that fail fast: a damaged or foreign trace-cache entry
is traced again, and a kernel or grid too large for the device is OutOfResources."""

import os

import numpy as np
import pytest

import metile


@metile.kernel
def triple(x, out, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + i, metile.load(x + i, mask=i < n) * 3.0, mask=i < n)


@metile.kernel
def twice(x, out, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + i, metile.load(x + i, mask=i < n) * 2.0, mask=i < n)


def run(kernel, n=40):
    fresh = metile.KernelFunction(kernel.fn)  # a new process, in effect
    x, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    fresh[(1,)](x, out, n, BLOCK=64)
    return fresh, out


def entries(tmp_path):
    return sorted((tmp_path / "python-ir").glob("*.tir"))


def damage_non_utf8(path):
    path.write_bytes(path.read_bytes() + b"\xff\xfe")


def damage_digit(path):
    data = path.read_bytes()
    assert b"3.0" in data
    path.write_bytes(data.replace(b"3.0", b"2.0"))


def damage_truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("damage", [damage_non_utf8, damage_digit, damage_truncate])
def test_a_damaged_trace_cache_entry_is_traced_again(monkeypatch, tmp_path, damage):
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    run(triple)
    [entry] = entries(tmp_path)
    damage(entry)
    k, out = run(triple)
    assert (k.stats.traces, k.stats.disk_hits) == (1, 0)
    np.testing.assert_array_equal(out, np.arange(40, dtype=np.float32) * 3)
    k, out = run(triple)  # rebuilt: the next process hits it
    assert (k.stats.traces, k.stats.disk_hits) == (0, 1)


def test_another_kernels_entry_under_this_key_is_traced_again(monkeypatch, tmp_path):
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    run(triple)
    [mine] = entries(tmp_path)
    run(twice)
    [other] = [e for e in entries(tmp_path) if e != mine]
    mine.write_bytes(other.read_bytes())
    k, out = run(triple)
    assert (k.stats.traces, k.stats.disk_hits) == (1, 0)
    np.testing.assert_array_equal(out, np.arange(40, dtype=np.float32) * 3)


def test_an_edited_tracer_does_not_read_the_ir_an_older_one_wrote(monkeypatch, tmp_path):
    # The tracer's own sources are part of the key: an edit of python/metile (a checkout
    # needs no rebuild for one) used to keep serving the IR the previous code traced.
    from metile import disk_cache

    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    run(triple)
    k, _ = run(triple)
    assert k.stats.disk_hits == 1
    monkeypatch.setattr(disk_cache, "_package_stamp", lambda: "another tracer")
    k, out = run(triple)
    assert (k.stats.traces, k.stats.disk_hits) == (1, 0)
    np.testing.assert_array_equal(out, np.arange(40, dtype=np.float32) * 3)
    tracer = tmp_path / "tracer"
    (tracer / "sub").mkdir(parents=True)
    (tracer / "sub" / "values.py").write_text("x = 1\n")
    before = disk_cache.source_stamp(tracer)
    (tracer / "sub" / "values.py").write_text("x = 22\n")
    assert disk_cache.source_stamp(tracer) != before


@metile.kernel
def copy(x, out, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + i, metile.load(x + i, mask=i < n), mask=i < n)


@pytest.mark.parametrize("block", [2**20, 2**24, 2**30])
def test_a_huge_block_is_out_of_resources(block):
    x, out = np.zeros(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(metile.OutOfResources) as e:
        copy[(1,)](x, out, 4, BLOCK=block)
    assert isinstance(e.value, metile.CompilationError)
    assert f"kernel 'copy': a tile<{block}xi32>" in str(e.value)
    assert f"has {block} elements; target " in str(e.value)
    assert "allows at most 32768 elements per tile" in str(e.value)


def test_a_huge_grid_is_out_of_resources():
    x, out = np.zeros(4, np.float32), np.zeros(4, np.float32)
    grid = (2**20,) * 3
    with pytest.raises(metile.OutOfResources) as e:
        copy[grid](x, out, 4, BLOCK=64)
    assert "launch of copy with grid (1048576, 1048576, 1048576)" in str(e.value)
    assert "allows at most" in str(e.value)


def test_tile_range_step_must_be_positive():
    @metile.kernel
    def loop(out, STEP: metile.constexpr):
        acc = metile.zeros((32,), metile.float32)
        for _ in metile.tile_range(0, 8, STEP):
            acc = acc + 1.0
        metile.store(out + metile.arange(0, 32), acc)

    for step in (0, -1):
        with pytest.raises(metile.CompilationError, match=f"the step must be positive, got {step}"):
            loop[(1,)](np.zeros(32, np.float32), STEP=step)


def test_an_offset_that_would_wrap_is_refused_at_launch():
    x, out = np.zeros(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(metile.CompilationError) as e:
        copy[(2**24,)](x, out, 4, BLOCK=256)
    message = str(e.value)
    assert "launch of copy with grid (16777216, 1, 1): the offset `program_id(0) * 256" in message
    assert "reaches 0..4294967040, beyond i32" in message
    assert "the address would wrap" in message
