"""metile.Schedule end to end: each control's contract, each requirement plan_schedule
cannot meet (with its message), SCHEDULE on launch, prepare and kernel.compile, the
immutable schedule_plan and the execution report, METILE_DEBUG=schedule, and the integer
scalar specialisation of an explicit schedule."""

import json

import numpy as np
import pytest

import metile


@metile.kernel
def scale(x, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask=mask) * 2.0, mask=mask)


@metile.kernel(num_threads=64)
def staged(x, out):
    scratch = metile.shared(256, dtype="f32")
    offsets = metile.arange(0, 256)
    metile.store(scratch + offsets, metile.load(x + offsets))
    metile.barrier()
    metile.store(out + offsets, metile.load(scratch + offsets) + 1.0)


@metile.kernel
def product(a_ptr, b_ptr, c_ptr, M: metile.constexpr, N: metile.constexpr,
            K: metile.constexpr):
    a = metile.load(a_ptr + metile.arange(0, M)[:, None] * K + metile.arange(0, K)[None, :])
    b = metile.load(b_ptr + metile.arange(0, K)[:, None] * N + metile.arange(0, N)[None, :])
    c = metile.dot(a, b)
    metile.store(c_ptr + metile.arange(0, M)[:, None] * N + metile.arange(0, N)[None, :], c)


X = np.arange(256, dtype=np.float32)


def compile_scale(schedule, n=256):
    return scale.compile(X, np.zeros_like(X), n, BLOCK=256, SCHEDULE=schedule)


@pytest.mark.parametrize("controls, error, message", [
    (dict(backend="fast"), ValueError, "Schedule: backend must be one of auto, simdgroup, "
                                       "simdgroup_inline, tensor_ops, nax, elementwise, got 'fast'"),
    (dict(num_simdgroups=0), ValueError, "num_simdgroups is an integer from 1 through 32, got 0"),
    (dict(num_simdgroups=33), ValueError, "num_simdgroups is an integer from 1 through 32"),
    (dict(staging="shared"), ValueError, "staging must be one of auto, device, threadgroup"),
    (dict(vector_width=2), ValueError, "vector_width is None, 1 or 4, got 2"),
    (dict(vector_width=4, double_buffer=True), ValueError,
     "vector_width=4 and double_buffer=True cannot be combined"),
    (dict(double_buffer="yes"), TypeError, "double_buffer must be bool"),
    (dict(num_simdgroups=True), TypeError, "num_simdgroups must be int"),
])
def test_each_control_is_checked_against_its_contract(controls, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        metile.Schedule(**controls)


@pytest.mark.parametrize("controls, error, message", [
    (dict(num_simdgroups=4), metile.CompilationError,
     "Schedule(num_simdgroups=4) cannot be met for kernel 'scale': an elementwise kernel runs "
     "on its traced lane geometry, 64 threads per threadgroup = 2 SIMD groups of 32; declare "
     "num_threads=128"),
    (dict(staging="threadgroup"), metile.CompilationError,
     "Schedule(staging='threadgroup') cannot be met for kernel 'scale': elementwise staging "
     "must match the kernel's memory operations"),
    (dict(vector_width=4), metile.NotSupportedError,
     "Schedule(vector_width=4) cannot be met for kernel 'scale': vector_width=4 cannot be "
     "forced"),
    (dict(double_buffer=True), metile.CompilationError,
     "Schedule(double_buffer=True) cannot be met for kernel 'scale': an elementwise kernel has "
     "no software pipeline"),
    (dict(backend="nax"), metile.NotSupportedError,
     "Schedule(backend='nax') cannot be met for kernel 'scale': no meTile target has Apple's "
     "neural accelerator"),
    (dict(backend="simdgroup"), metile.CompilationError,
     "Schedule(backend='simdgroup') cannot be met for kernel 'scale': the kernel has no "
     "matrix work"),
    (dict(backend="tensor_ops"), metile.CompilationError,
     "Schedule(backend='tensor_ops') cannot be met for kernel 'scale': the kernel has no "
     "matrix work"),
])
def test_requirements_an_elementwise_kernel_cannot_meet(controls, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_scale(metile.Schedule(**controls))


def test_staging_must_match_a_kernel_that_declares_shared_memory():
    out = np.zeros_like(X)
    with pytest.raises(metile.CompilationError, match="Schedule\\(staging='device'\\) cannot be "
                       "met for kernel 'staged'.*the kernel stages through the 1024 bytes"):
        staged[(1,)](X, out, SCHEDULE=metile.Schedule(staging="device"))
    staged[(1,)](X, out, SCHEDULE=metile.Schedule(staging="threadgroup", num_simdgroups=2))
    np.testing.assert_array_equal(out, X + 1)


# The default device's matrix strategy and tensor backend: mma.sync, and wgmma_tma for the
# canonical descriptor GEMM only (docs/hopper.md), on the cuda device (sm90); simdgroup_matrix
# and Metal 4 tensor ops on the host target, whose matmul2d lowers only a descriptor GEMM's K
# loop (test_gemm_tensor_ops.py).
ON_CUDA = metile.device() == "cuda"
STRATEGY = "mma_sync" if ON_CUDA else "simdgroup_matrix"
NO_TENSOR_OPS = ("cannot be met for kernel 'product': target sm90's tensor backend (wgmma_tma) "
                 "cannot lower it" if ON_CUDA else
                 "cannot lower kernel 'product' on target host: '%32 = dot' at")


def _product(schedule, m=16, n=16, k=8):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    c = np.zeros((m, n), np.float32)
    dispatch = product[(1,)].prepare(a, b, c, M=m, N=n, K=k, SCHEDULE=schedule)
    dispatch()
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    return dispatch.schedule_plan


def test_dots_take_the_simdgroup_backend_where_the_simd_groups_tile_them():
    backend = _product(metile.Schedule())["backend"]
    assert (backend["value"], backend["strategy"]) == ("simdgroup", STRATEGY)
    assert backend["reason"].startswith("auto: the SIMD groups tile the output")
    width = _product(metile.Schedule(backend="simdgroup", vector_width=1))["vector_width"]
    assert width["value"] == 1
    generic = _product(metile.Schedule(backend="elementwise"))["backend"]
    assert (generic["value"], generic["strategy"]) == ("elementwise", "none")
    assert "lowered generically" in generic["reason"]


@pytest.mark.parametrize("controls, error, message", [
    (dict(double_buffer=True), metile.NotSupportedError,
     "Schedule(double_buffer=True) pipelines the accumulation of a K loop"),
    (dict(backend="simdgroup", staging="device", double_buffer=True), metile.CompilationError,
     "Schedule(staging='device') cannot be met for kernel 'product': staging='device' reads "
     "each operand fragment straight from device memory, so there is no threadgroup operand "
     "buffer for Schedule(double_buffer=True) to double-buffer"),
    (dict(backend="tensor_ops"), metile.NotSupportedError,
     "Schedule(backend='tensor_ops') " + NO_TENSOR_OPS),
    (dict(backend="simdgroup", num_simdgroups=8), metile.CompilationError,
     "Schedule(num_simdgroups=8) cannot be met for kernel 'product': 8 SIMD groups do not tile "
     "the dot's"),
])
def test_dot_requirements_not_met_are_errors(controls, error, message):
    a = np.ones(16 * 16, np.float32)
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        product.compile(a, a, a, M=16, N=16, K=16, SCHEDULE=metile.Schedule(**controls))


def test_schedule_on_prepare_reaches_the_plan_and_the_report():
    schedule = metile.Schedule(backend="elementwise", num_simdgroups=2, staging="device",
                               vector_width=1, double_buffer=False)
    out = np.zeros_like(X)
    dispatch = scale[(1,)].prepare(X, out, 256, BLOCK=256, SCHEDULE=schedule)
    dispatch()
    np.testing.assert_array_equal(out, 2 * X)
    plan = dispatch.schedule_plan
    assert plan["requested"] == {"backend": "elementwise", "num_simdgroups": 2,
                                 "staging": "device", "vector_width": 1, "double_buffer": False}
    assert plan["backend"]["reason"].startswith("required: the kernel has no matrix work")
    assert plan["geometry"]["num_simdgroups"] == 2
    assert plan["geometry"]["reason"].startswith("required and the traced lane geometry")
    assert plan["vector_width"] == {"value": 1, "reason": "required: no compiler vectorization "
                                                          "(every access scalar)"}
    report = json.loads(dispatch.explain())
    assert report == dispatch.execution_report
    assert report["schedule_plan"]["requested"] == dict(plan["requested"])
    assert (report["grouped_loads"], report["grouped_stores"]) == (0, 0)
    assert report["buffering"] == [] and report["fused_epilogues"] == []
    assert report["matrix_lane_map"].startswith("none")


def test_the_schedule_plan_is_read_only():
    plan = compile_scale(None).schedule_plan
    with pytest.raises(TypeError):
        plan["backend"] = "simdgroup"
    with pytest.raises(TypeError):
        plan["backend"]["value"] = "simdgroup"
    assert plan["staging"]["value"] == "device"
    assert plan["requested"] is None


def test_compile_returns_the_kernel_with_its_reports():
    compiled = compile_scale(metile.Schedule(vector_width=1))
    assert isinstance(compiled, metile.CompiledKernel)
    assert compiled.name == "scale"
    assert "scale" in compiled.source
    assert compiled.schedule_plan["vector_width"]["value"] == 1
    assert json.loads(compiled.explain())["schedule_plan"]["vector_width"]["value"] == 1


def test_an_explicit_schedule_specialises_integer_scalars():
    @metile.kernel
    def fill(out, n, BLOCK: metile.constexpr):
        offsets = metile.arange(0, BLOCK)
        metile.store(out + offsets, 3.0, mask=offsets < n)

    for n in (5, 7):
        out = np.zeros(16, np.float32)
        fill[(1,)](out, n, BLOCK=16, SCHEDULE=metile.Schedule())
        np.testing.assert_array_equal(out, np.where(np.arange(16) < n, 3.0, 0.0))
    assert fill.stats.compiles == 2
    fill[(1,)](np.zeros(16, np.float32), 5, BLOCK=16, SCHEDULE=metile.Schedule())
    assert fill.stats.compiles == 2  # the value's kernel is cached
    for n in (5, 7):
        fill[(1,)](np.zeros(16, np.float32), n, BLOCK=16)
    assert fill.stats.compiles == 3  # without SCHEDULE, one kernel for every value
    traced = fill.trace(np.zeros(16, np.float32), 5, BLOCK=16, SCHEDULE=metile.Schedule())
    assert "constant {value = 5}" in traced.print()


def test_debug_schedule_prints_and_saves_the_report(monkeypatch, tmp_path, capfd):
    @metile.kernel
    def debugged(x, out, n, BLOCK: metile.constexpr):
        offsets = metile.arange(0, BLOCK)
        metile.store(out + offsets, metile.load(x + offsets, mask=offsets < n) + 5.0,
                     mask=offsets < n)

    monkeypatch.setenv("METILE_DEBUG", "schedule")
    monkeypatch.setenv("METILE_DEBUG_DIR", str(tmp_path))
    compiled = debugged.compile(X, np.zeros_like(X), 256, BLOCK=128)
    printed = capfd.readouterr().err
    assert "METILE_DEBUG=schedule: kernel 'debugged'" in printed
    assert "schedule_plan:" in printed and "execution_report:" in printed
    (saved,) = (tmp_path / "schedule").glob("debugged-*.json")
    assert json.loads(saved.read_text()) == compiled.execution_report
