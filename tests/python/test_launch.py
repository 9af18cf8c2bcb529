"""Launching, dispatches, caches, Buffer, the host helpers and the bindings themselves."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import metile
from metile import _core


@metile.kernel
def scale(x, out, n, factor, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + i, metile.load(x + i, mask=i < n) * factor, mask=i < n)


def fresh(kernel):
    """The same function as a new kernel object: empty in-process cache, zero counters."""
    return metile.KernelFunction(kernel.fn)


def test_second_call_neither_traces_nor_compiles(monkeypatch, tmp_path):
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    k = fresh(scale)
    x, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    k[(1,)](x, out, 100, 2.0, BLOCK=128)
    assert (k.stats.traces, k.stats.compiles, k.stats.hits) == (1, 1, 0)
    k[(1,)](x, out, 100, 3.0, BLOCK=128)  # new runtime values, same signature
    assert (k.stats.traces, k.stats.compiles, k.stats.hits) == (1, 1, 1)
    np.testing.assert_array_equal(out, x * 3)
    k[(1,)](x, out, 100, 3.0, BLOCK=64)  # a new constexpr: a new specialisation
    k[(1,)](x, out, 100, 3.0, BLOCK=64, STRICT_MATH=True)  # new options: compile, no trace
    assert (k.stats.traces, k.stats.compiles) == (2, 3)


@metile.kernel
def strided_copy(x, out, n, stride, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + i, metile.load(x + i * stride, mask=i < n), mask=i < n)


def test_an_integer_equal_to_one_is_specialised_as_in_triton(monkeypatch, tmp_path):
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    k = fresh(strided_copy)
    x = np.arange(300, dtype=np.float32)
    ir_unit = str(k.trace(x, np.zeros(100, np.float32), 100, 1, BLOCK=128))
    ir_two = str(k.trace(x, np.zeros(100, np.float32), 100, 2, BLOCK=128))
    # stride 1 is the constant 1 (n = 100 stays a runtime scalar); stride 2 is the parameter.
    assert "constant {value = 1} : i32" in ir_unit and "constant {value = 100}" not in ir_unit
    assert "constant {value = 1} : i32" not in ir_two
    for stride in (1, 2, 3, 1):
        out = np.zeros(100, np.float32)
        k[(1,)](x, out, 100, stride, BLOCK=128)
        np.testing.assert_array_equal(out, x[:300:stride][:100])
    # Strides 2 and 3 share one specialisation; stride 1 has its own.
    assert k.stats.compiles == 2


@metile.kernel
def add_optional_bias(x, bias, out, n, BLOCK: metile.constexpr):
    offsets = metile.arange(0, BLOCK)
    mask = offsets < n
    values = metile.load(x + offsets, mask)
    if bias is not None:
        values += metile.load(bias + offsets, mask)
    metile.store(out + offsets, values, mask)


def test_none_is_a_constexpr_argument_as_in_triton():
    # An optional pointer passed as None specialises the kernel (Triton's `bias_ptr is not None`
    # idiom): no parameter, and a compile of its own beside the one with a buffer.
    x = np.arange(10, dtype=np.float32)
    bias = np.full(10, 0.5, np.float32)
    out = np.zeros(10, np.float32)
    launch = add_optional_bias[(1,)]
    launch(x, None, out, 10, BLOCK=16)
    np.testing.assert_array_equal(out, x)
    launch(x, bias, out, 10, BLOCK=16)
    np.testing.assert_array_equal(out, x + 0.5)
    assert add_optional_bias.stats.compiles == 2
    params = [p["name"] for p in launch.prepare(x, None, out, 10, BLOCK=16).abi["params"]]
    assert "bias" not in params and "x" in params


def test_a_multiple_of_16_is_specialised_as_in_triton(monkeypatch, tmp_path):
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    k = fresh(strided_copy)
    x = np.arange(2000, dtype=np.float32)
    # n = 96 and stride 32 are multiples of 16: the parameters carry the fact; 100 and 3 do not.
    ir_even = str(k.trace(x, np.zeros(100, np.float32), 96, 32, BLOCK=128))
    ir_odd = str(k.trace(x, np.zeros(100, np.float32), 100, 3, BLOCK=128))
    assert "%n: i32 {divisibility = 16}" in ir_even
    assert "%stride: i32 {divisibility = 16}" in ir_even
    assert "%n: i32," in ir_odd and "%stride: i32)" in ir_odd
    # A contiguous numpy array's address is checked too (it is used in place, or copied into
    # an aligned allocation); one element past an aligned address is no multiple of 16.
    assert ("%x: ptr<f32> {access = \"read\", divisibility = 16}" in ir_even) == (
        x.ctypes.data % 16 == 0)
    odd = x[1:]
    assert "%x: ptr<f32> {access = \"read\"}" in str(
        k.trace(odd, np.zeros(100, np.float32), 100, 3, BLOCK=128))
    for n, stride in ((96, 16), (100, 3), (80, 16), (100, 5)):
        out = np.zeros(100, np.float32)
        k[(1,)](x, out, n, stride, BLOCK=128)
        want = np.zeros(100, np.float32)
        want[:n] = x[::stride][:n]
        np.testing.assert_array_equal(out, want)
    # (96, 16) and (80, 16) share one specialisation, (100, 3) and (100, 5) another.
    assert k.stats.compiles == 2


def test_disk_cache_skips_tracing_in_a_new_kernel_object(monkeypatch, tmp_path):
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    x, out = np.arange(10, dtype=np.float32), np.zeros(10, np.float32)
    first = fresh(scale)
    first[(1,)](x, out, 10, 2.0, BLOCK=32)
    second = fresh(scale)
    second[(1,)](x, out, 10, 5.0, BLOCK=32)
    assert (second.stats.traces, second.stats.disk_hits) == (0, 1)
    np.testing.assert_array_equal(out, x * 5)
    monkeypatch.setenv("METILE_TRACE_CACHE", "off")
    third = fresh(scale)
    third[(1,)](x, out, 10, 5.0, BLOCK=32)
    assert (third.stats.traces, third.stats.disk_hits) == (1, 0)


def test_disk_cache_keeps_apart_kernels_declared_with_other_thread_counts(monkeypatch, tmp_path):
    # One function, decorated three ways: each traced IR carries its own thread count, so
    # the disk cache must not hand one kernel's IR to another (it did: the num_warps of the
    # decorator was lost whenever the plain kernel had been traced first).
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    x, out = np.arange(1000, dtype=np.float32), np.zeros(1000, np.float32)
    threads = {}
    for name, k in (("plan", fresh(scale)), ("4 warps", metile.kernel(scale.fn, num_warps=4)),
                    ("1 warp", metile.kernel(scale.fn, num_warps=1)),
                    ("callable", metile.kernel(scale.fn, num_threads=lambda c: c["BLOCK"] // 16))):
        dispatch = k[(1,)].prepare(x, out, 1000, 2.0, BLOCK=1024)
        dispatch()
        np.testing.assert_array_equal(out, x * 2)
        threads[name] = dispatch.abi["threads_per_threadgroup"][0]
    assert (threads["4 warps"], threads["1 warp"], threads["callable"]) == (128, 32, 64)
    again = metile.kernel(scale.fn, num_warps=4)
    again[(1,)].prepare(x, out, 1000, 2.0, BLOCK=1024)
    assert (again.stats.traces, again.stats.disk_hits) == (0, 1)


def test_a_num_threads_callable_sees_constexprs_and_buffer_dtypes():
    seen = []

    def rule(arguments):
        seen.append(arguments)
        return 64 if arguments["x"].dtype == metile.float32 else None

    k = metile.kernel(scale.fn, num_threads=rule)
    x16 = np.zeros(1000, np.float16)
    planned = fresh(scale)[(1,)].prepare(x16, x16, 1000, 2.0, BLOCK=1024).abi
    # None: the compiler's plan (256 threads on the host, 128 of eight halves on sm90).
    for dtype, threads in ((np.float32, 64), (np.float16, planned["threads_per_threadgroup"][0])):
        x, out = np.arange(1000).astype(dtype), np.zeros(1000, dtype)
        dispatch = k[(1,)].prepare(x, out, 1000, 2.0, BLOCK=1024)
        dispatch()
        np.testing.assert_array_equal(out, x * 2)
        assert dispatch.abi["threads_per_threadgroup"][0] == threads
    assert sorted(seen[0]) == ["BLOCK", "out", "x"]  # runtime scalars are not part of it
    assert seen[0]["BLOCK"] == 1024 and isinstance(seen[0]["out"], metile.BufferArg)
    assert [a["x"].dtype for a in seen] == [metile.float32, metile.float16]
    # f16 again, with num_warps at launch: 64 threads, the callable not consulted
    overridden = k[(1,)].prepare(x, out, 1000, 2.0, BLOCK=1024, num_warps=2)
    assert overridden.abi["threads_per_threadgroup"][0] == 64 and len(seen) == 2
    bad = metile.kernel(scale.fn, num_threads=lambda a: 64.0)
    with pytest.raises(TypeError, match="scale: its num_threads callable returned 64.0; it must "
                                        "return a positive int, or None for the compiler's plan"):
        bad[(1,)](x, out, 1000, 2.0, BLOCK=1024)


def test_prepare_explain_and_reports():
    x, out = np.ones(300, np.float32), np.zeros(300, np.float32)
    dispatch = scale[lambda meta: (metile.cdiv(meta["n"], meta["BLOCK"]),)].prepare(
        x, out, 300, 4.0, BLOCK=128)
    assert dispatch.grid == (3, 1, 1)
    dispatch()
    np.testing.assert_array_equal(out, 4.0)
    report = json.loads(dispatch.explain())
    assert report == dispatch.execution_report
    assert report["kernel"] == "scale"
    assert report["geometry"]["threads_per_threadgroup"][0] >= 1
    assert dispatch.schedule_plan["backend"]["value"] == "elementwise"
    assert dispatch.schedule_plan["requested"] is None
    assert report["schedule_plan"] == json.loads(json.dumps(dict(dispatch.schedule_plan),
                                                            default=dict))
    entry = "kernel void scale" if metile.device() == "host" else 'extern "C" __global__ void scale'
    assert entry in dispatch.source
    assert [p["access"] for p in dispatch.abi["params"]] == ["read", "write", "", ""]
    out[:] = 0
    dispatch()  # a dispatch launches again with the same arguments
    np.testing.assert_array_equal(out, 4.0)


def test_buffer_api():
    b = metile.Buffer(data=[[1.0, 2.0], [3.0, 4.0]])
    assert (b.shape, b.dtype, b.nbytes, len(b)) == ((2, 2), "f32", 16, 2)
    np.testing.assert_array_equal(b.numpy(), [[1, 2], [3, 4]])
    assert metile.Buffer.zeros((3,), dtype="f16").numpy().dtype == np.float16
    assert metile.Buffer.zeros(4, dtype="bf16").dtype == "bf16"
    assert metile.Buffer.from_numpy(np.arange(5, dtype=np.int32)).dtype == "i32"
    assert np.asarray(metile.Buffer(data=np.ones(3, np.float32))).sum() == 3
    assert metile.Buffer(data=np.ones(3)).dtype == "f64"  # numpy's default float, kept
    with pytest.raises(TypeError, match="complex128"):
        metile.Buffer(data=np.ones(3, np.complex128))


def test_grid_helpers():
    assert [metile.cdiv(a, 256) for a in (0, 1, 256, 257)] == [0, 1, 1, 2]
    assert [metile.next_power_of_2(n) for n in (0, 1, 2, 3, 1000, 1024)] == [1, 1, 2, 4, 1024, 1024]


def test_traced_ir_names_the_function_and_infers_access():
    ir = scale.trace(np.zeros(4, np.float32), np.zeros(4, np.float32), 4, 1.0, BLOCK=64)
    assert ir.name == "scale"
    assert ir.params == [("x", "ptr<f32>", "read"), ("out", "ptr<f32>", "write"),
                         ("n", "i32", ""), ("factor", "f32", "")]
    # The constexprs, and that the launch checked every argument's divisibility.
    assert ir.attrs == {"BLOCK": 64, "divisibility_checked": 1}
    assert f'loc("{__file__}"' in ir.print()


def test_metile_debug_dumps_use_the_python_function_name(tmp_path):
    script = tmp_path / "debug_kernel.py"
    script.write_text(
        "import numpy as np, metile\n"
        "@metile.kernel\n"
        "def my_python_kernel(x):\n"
        "    metile.store(x + metile.arange(0, 32), 1.0)\n"
        "my_python_kernel[(1,)](np.zeros(32, np.float32))\n")
    env = dict(os.environ, METILE_DEBUG="tile_ir", METILE_TRACE_CACHE="off")
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, check=True)
    assert list((tmp_path / "debug_output" / "my_python_kernel").iterdir())


def test_every_binding_has_a_signature_and_a_docstring():
    missing = []
    for name in dir(_core):
        obj = getattr(_core, name)
        members = [(name, obj)]
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            members += [(f"{name}.{m}", getattr(obj, m)) for m in vars(obj)
                        if not m.startswith("_") and callable(getattr(obj, m))]
        for qualified, member in members:
            if callable(member) and not (member.__doc__ or "").strip():
                missing.append(qualified)
            elif type(member).__name__ == "nb_func" and "(" not in member.__doc__.splitlines()[0]:
                missing.append(qualified + " (signature)")
    assert not missing, missing


def test_the_default_device_comes_from_the_core():
    device = _core.default_device()
    assert device in _core.devices()
    assert metile.Buffer(data=[1.0, 2.0]).device_buffer.device == device
    x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    scale[(1,)](x, out, 4, 2.0, BLOCK=32)
    np.testing.assert_array_equal(out, x * 2)
    with pytest.raises(metile.CompilationError, match="unknown device 'tpu'"):
        _core.DeviceBuffer.allocate("tpu", "f32", [1])


_MODE_DOUBLE = metile.constexpr(2)  # Liger's module constants, written Triton's way


@metile.kernel
def scale_by_mode(x, out, n, MODE: metile.constexpr, BLOCK: metile.constexpr):
    offsets = metile.arange(0, BLOCK)
    mask = offsets < n
    values = metile.load(x + offsets, mask)
    if MODE == _MODE_DOUBLE:
        values = values * 2
    metile.store(out + offsets, values, mask)


def test_a_module_constant_made_with_constexpr_is_its_value():
    assert metile.constexpr(3) == 3 and metile.constexpr("sum") == "sum"
    x = np.arange(5, dtype=np.float32)
    out = np.zeros(5, np.float32)
    scale_by_mode[(1,)](x, out, 5, MODE=2, BLOCK=8)
    np.testing.assert_array_equal(out, x * 2)
    scale_by_mode[(1,)](x, out, 5, MODE=1, BLOCK=8)
    np.testing.assert_array_equal(out, x)
