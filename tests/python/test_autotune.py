"""metile.Config and @metile.autotune on the host target with fake clocks: the fastest
configuration is chosen and cached by the tuning key (a new key, or another dtype, measures
again; a new process reads the stored winner), configurations that fail to compile are
reported and pruned, symmetries remove equivalent configurations, progress is shown."""

import sys

import numpy as np
import pytest

import metile


@pytest.fixture(autouse=True)
def tune_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("METILE_TUNE_CACHE", str(tmp_path))


def add_body(x, y, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask),
                 mask)


SECONDS = {16: 3.0, 32: 1.0, 64: 2.0}


class Clock:
    def __init__(self, seconds=SECONDS):
        self.seconds, self.calls = seconds, 0

    def __call__(self, config, dispatch):
        self.calls += 1
        return self.seconds[config.kwargs["BLOCK"]] / (config.num_simdgroups or 1)


def tuned(clock, configs=None, **kwargs):
    configs = configs or [metile.Config({"BLOCK": b}) for b in SECONDS]
    return metile.autotune(configs, key=["n"], timer=clock, samples=3, **kwargs)(
        metile.kernel(add_body))


def grid(args):
    return (metile.cdiv(args["n"], args["BLOCK"]),)


def launch(kernel, n, dtype=np.float32):
    x, y = np.arange(n, dtype=dtype), np.ones(n, dtype)
    out = np.zeros(n, dtype)
    kernel[grid](x, y, out, n)
    np.testing.assert_array_equal(out, x + y)


def test_the_fastest_config_is_chosen_and_cached_by_the_key():
    clock = Clock()
    kernel = tuned(clock)
    launch(kernel, 100)
    assert repr(kernel.best_config) == "BLOCK: 32"
    # The model ranks BLOCK: 32 (the least padded traffic at n = 100) first: the reference.
    assert kernel.report["measured"][0] == "BLOCK: 32"
    assert kernel.report["reason"].startswith("BLOCK: 32 kept: no candidate has the 0% headroom")
    timed = clock.calls
    launch(kernel, 100)
    assert clock.calls == timed and kernel.stats.memory_hits == 1
    launch(kernel, 200)  # a new key
    launch(kernel, 100, np.int32)  # another dtype
    assert kernel.stats.tunings == 3

    again = tuned(Clock())  # as a new process would: the stored winners
    launch(again, 100)
    assert (again.stats.tunings, again.stats.disk_hits) == (0, 1)
    assert repr(again.best_config) == "BLOCK: 32" and again.report["source"] == "disk"


def test_num_simdgroups_sets_the_simd_group_count():
    configs = [metile.Config({"BLOCK": 64}), metile.Config({"BLOCK": 64}, num_simdgroups=2)]
    kernel = tuned(Clock(), configs)
    launch(kernel, 300)
    assert kernel.best_config.num_simdgroups == 2
    assert configs[1].launch_options(kernel.kernel) == {"BLOCK": 64, "num_warps": 2}
    prepared = kernel[grid].prepare(np.zeros(4, np.float32), np.zeros(4, np.float32),
                                    np.zeros(4, np.float32), 300)
    assert prepared.abi["threads_per_threadgroup"][0] == 64


def test_configs_that_fail_to_compile_are_reported_and_pruned(capsys):
    configs = [metile.Config({"BLOCK": b}) for b in (3, 16, 32)]
    kernel = tuned(Clock({**SECONDS, 3: 0.1}), configs)
    launch(kernel, 100)
    assert repr(kernel.best_config) == "BLOCK: 32"
    assert "metile.autotune: add_body: config BLOCK: 3 pruned: it failed to compile: " in \
        capsys.readouterr().err
    assert kernel.report["pruned"][0]["config"] == "BLOCK: 3"
    assert kernel.report["measured"] == ["BLOCK: 32", "BLOCK: 16"]  # in the cost model's order

    broken = tuned(Clock(), [metile.Config({"BLOCK": 3})])
    with pytest.raises(metile.CompilationError, match="every configuration failed to compile"):
        launch(broken, 100)


def block_body(x, out, M, N, BLOCK_M: metile.constexpr, BLOCK_N: metile.constexpr):
    offsets = metile.program_id(0) * (BLOCK_M * BLOCK_N) + metile.arange(0, BLOCK_M * BLOCK_N)
    mask = offsets < M * N
    metile.store(out + offsets, metile.load(x + offsets, mask) * 3.0, mask)


@pytest.mark.parametrize("M, N, measured", [(64, 64, 2), (64, 32, 3)])
def test_symmetries_remove_equivalent_configs(M, N, measured):
    configs = [metile.Config({"BLOCK_M": a, "BLOCK_N": b}) for a, b in ((8, 16), (16, 8), (16, 16))]
    clock_calls = []

    def clock(config, dispatch):
        clock_calls.append(repr(config))
        return 1.0

    kernel = metile.autotune(configs, key=["M", "N"], timer=clock, samples=1,
                             symmetries=[metile.tune.swap("BLOCK_M", "BLOCK_N",
                                                          when=lambda a: a["M"] == a["N"])])(
        metile.kernel(block_body))
    x = np.arange(M * N, dtype=np.float32)
    out = np.zeros_like(x)
    kernel[lambda a: (metile.cdiv(a["M"] * a["N"], a["BLOCK_M"] * a["BLOCK_N"]),)](x, out, M, N)
    np.testing.assert_array_equal(out, x * 3)
    assert len(kernel.report["measured"]) == measured
    assert kernel.report["symmetry_removed"] == 3 - measured
    assert "BLOCK_M: 16, BLOCK_N: 8" not in clock_calls or measured == 3
    if measured == 2:
        assert kernel.report["symmetry_orbits"] == [
            {"config": "BLOCK_M: 16, BLOCK_N: 8", "equivalent_to": "BLOCK_M: 8, BLOCK_N: 16",
             "symmetries": ["swap BLOCK_M/BLOCK_N"]}]


def test_early_pruning_and_progress(monkeypatch, capsys):
    monkeypatch.setattr(sys.modules["metile.tune.autotune"], "_PROGRESS_AFTER_S", -1.0)
    kernel = tuned(Clock(), prune_configs_by={
        "early_config_prune": lambda configs, args: [c for c in configs if c.kwargs["BLOCK"] != 32]})
    launch(kernel, 100)
    assert repr(kernel.best_config) == "BLOCK: 64"
    err = capsys.readouterr().err
    assert "metile.autotune: add_body: measuring 2 configurations, " in err
    assert "metile.autotune: add_body: chose BLOCK: 64 after " in err


def test_config_and_autotune_arguments_are_checked():
    with pytest.raises(metile.NotSupportedError, match="num_ctas is not supported"):
        metile.Config({"BLOCK": 64}, num_ctas=2)
    # Triton's every-day settings: num_stages (a launch option) and num_ctas=1.
    config = metile.Config({"BLOCK": 64}, num_warps=2, num_stages=3, num_ctas=1)
    assert config.launch_options(metile.kernel(add_body)) == {"BLOCK": 64, "num_warps": 2,
                                                              "num_stages": 3}
    with pytest.raises(ValueError, match="num_simdgroups=4 and num_warps=2 disagree"):
        metile.Config({"BLOCK": 64}, num_simdgroups=4, num_warps=2)
    with pytest.raises(ValueError, match="key argument 'm' is not a parameter of add_body"):
        metile.autotune([metile.Config({"BLOCK": 64})], key=["m"])(metile.kernel(add_body))
    with pytest.raises(metile.NotSupportedError, match=r"prune_configs_by\['perf_model'\]"):
        metile.autotune([metile.Config({"BLOCK": 64})], key=["n"],
                        prune_configs_by={"perf_model": None})(metile.kernel(add_body))
    with pytest.raises(TypeError, match="put @metile.autotune above @metile.kernel"):
        metile.autotune([metile.Config({"BLOCK": 64})], key=["n"])(add_body)
    kernel = tuned(Clock())
    with pytest.raises(ValueError, match="BLOCK is set by the configurations and by the launch"):
        kernel[grid](np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32),
                     4, BLOCK=16)
