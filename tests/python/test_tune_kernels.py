"""The library's RMSNorm, add+RMSNorm and softmax kernels as metile.select candidates on the
host target, against numpy and MLX-CPU: they pass the numerical gate on ragged rows in f32 and
f16, and the decision (on a fake clock, so the test does not time) calls the chosen one."""

import numpy as np
import pytest

import metile
from metile_kernels import candidates

mx = pytest.importorskip("mlx.core")

EPS = 1e-5
SHAPE = (5, 300)  # rows longer than a block and not a multiple of it


@pytest.fixture(autouse=True)
def tune_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("METILE_TUNE_CACHE", str(tmp_path))


def numpy_rms_norm(x, w):
    xf = x.astype(np.float32)
    y = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS) * w.astype(np.float32)
    return y.astype(x.dtype)


def numpy_add_rms_norm(x, residual, w):
    h = x + residual
    return numpy_rms_norm(h, w), h


def numpy_softmax(x):
    xf = x.astype(np.float32)
    e = np.exp(xf - xf.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def mlx_rms_norm(x, w):
    return mx.fast.rms_norm(mx.array(x), mx.array(w), EPS)


def mlx_add_rms_norm(x, residual, w):
    h = mx.array(x) + mx.array(residual)
    return mx.fast.rms_norm(h, mx.array(w), EPS), h


def mlx_softmax(x):
    return mx.softmax(mx.array(x), axis=-1, precise=True)


FAMILIES = {
    "rms_norm": (numpy_rms_norm, mlx_rms_norm, candidates.rms_norm(EPS, 128), 2),
    "add_rms_norm": (numpy_add_rms_norm, mlx_add_rms_norm, candidates.add_rms_norm(EPS, 128), 3),
    "softmax": (numpy_softmax, mlx_softmax, candidates.softmax(128), 1),
}


def arguments(count, dtype, rng):
    x = rng.standard_normal(SHAPE).astype(dtype)
    rest = [rng.standard_normal(SHAPE).astype(dtype)] if count == 3 else []
    return [x] + rest + ([rng.standard_normal(SHAPE[-1]).astype(dtype)] if count > 1 else [])


@pytest.mark.parametrize("framework", ["numpy", "mlx"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_kernel_passes_the_gate_and_is_called_when_chosen(family, dtype, framework, rng):
    numpy_native, mlx_native, candidate, count = FAMILIES[family]
    native = numpy_native if framework == "numpy" else mlx_native
    args = arguments(count, dtype, rng)
    times = {"native": 2.0, candidate.name: 1.0}
    selected = metile.select(native=native, candidates=[candidate], family=family,
                             timer=lambda name, fn, a: times[name], example_args=args)
    gates = selected.report["gate"][candidate.name]
    assert all(g["passed"] for g in gates), gates
    assert selected.report["decision"] == "generated"
    result = selected(*args)
    expected = numpy_native(*args)
    for got, want in zip(result if count == 3 else [result], expected if count == 3 else
                         [expected]):
        assert got.dtype == dtype
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=0, atol=8e-3 if dtype == np.float16 else 1e-5)


def test_a_slower_kernel_keeps_mlx_as_a_native_decision(rng):
    args = arguments(2, np.float32, rng)
    times = {"native": 1.0, candidates.rms_norm(EPS, 128).name: 30.0}
    selected = metile.select(native=mlx_rms_norm, candidates=[candidates.rms_norm(EPS, 128)],
                             family="rms_norm", timer=lambda name, fn, a: times[name],
                             example_args=args)
    assert selected.report["decision"] == "native"
    assert selected.report["reason"].startswith(
        "native kept: no candidate has the 5% headroom in the provisional round: the fastest "
        "candidate rms_norm_rows[BLOCK=128] took 3e+04 ms against native 1000 ms (0.0333x)")
    assert isinstance(selected(*args), mx.array)


def test_an_autotuned_kernel_is_one_candidate_whose_best_config_meets_the_native_op(rng):
    from metile_kernels.rmsnorm import rms_norm_rows

    config_seconds = {64: 2.0, 128: 1.0}
    tuned = metile.autotune([metile.Config({"BLOCK": b}) for b in config_seconds], key=["n_cols"],
                            timer=lambda config, d: config_seconds[config.kwargs["BLOCK"]],
                            samples=1)(rms_norm_rows)

    def autotuned(x, w):
        y = np.empty_like(x)
        tuned[(x.shape[0],)](x, w, y, x.shape[1], x.shape[1], EPS)
        return y

    args = arguments(2, np.float32, rng)
    times = {"native": 2.0, "autotuned": 1.0}
    selected = metile.select(native=numpy_rms_norm, candidates=[autotuned], family="rms_norm",
                             timer=lambda name, fn, a: times[name], example_args=args)
    assert repr(tuned.best_config) == "BLOCK: 128"
    assert selected.report["decision"] == "generated"
    assert selected.report["gate"]["autotuned"][0]["passed"]
