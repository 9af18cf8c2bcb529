"""Decode-shaped matmul (issue 32): metile_kernels.decode_gemm's gemv and split_k kernels, each
with one split or K split over the grid and the partials reduced by atomics or a second pass,
against numpy on the host emulator: f16, bf16 and f32, ragged N and K (4095 x 4097 included),
the bias / activation / residual epilogue after the reduction, the plan and its reasons, the
metile.select candidates, and the errors."""

import ml_dtypes
import numpy as np
import pytest

from metile_kernels import decode_gemm, gemm

BF16 = ml_dtypes.bfloat16
NUMPY = {"f16": np.float16, "bf16": BF16, "f32": np.float32}
TOLERANCE = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5}  # max |out - ref| / max |ref|


def _operands(rng, rows, columns, inner, dtype, bias=False, residual=False):
    np_dtype = NUMPY[dtype]
    x = rng.standard_normal((rows, inner)).astype(np_dtype)
    w = (rng.standard_normal((inner, columns)) / np.sqrt(inner)).astype(np_dtype)
    b = rng.standard_normal(columns).astype(np_dtype) if bias else None
    r = rng.standard_normal((rows, columns)).astype(np_dtype) if residual else None
    return x, w, b, r


def _expected(x, w, b=None, r=None, activation=None):
    """activation(x @ w + b) + r in float64 from the operands' values (independent of the
    library's reference)."""
    value = x.astype(np.float64) @ w.astype(np.float64)
    if b is not None:
        value = value + b.astype(np.float64)
    if activation == "relu":
        value = np.maximum(value, 0.0)
    elif activation == "silu":
        value = value / (1.0 + np.exp(-value))
    elif activation == "gelu_tanh":
        value = 0.5 * value * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (value + 0.044715 * value**3)))
    if r is not None:
        value = value + r.astype(np.float64)
    return value


def _assert_close(out, want, dtype):
    assert out.shape == want.shape
    assert out.dtype == NUMPY[dtype]
    error = np.max(np.abs(out.astype(np.float64) - want)) / max(np.max(np.abs(want)), 1e-30)
    assert error <= TOLERANCE[dtype], f"max relative error {error:.3g}"


VARIANTS = [("gemv", None), ("gemv", "atomic"), ("gemv", "two_pass"), ("gemv", "last_split"),
            ("split_k", None), ("split_k", "atomic"), ("split_k", "two_pass"),
            ("split_k", "last_split")]


@pytest.mark.parametrize("strategy,reduce", VARIANTS)
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_every_strategy_and_reduction_matches_numpy_on_ragged_shapes(strategy, reduce, dtype):
    rng = np.random.default_rng(1)
    x, w, _, _ = _operands(rng, 3, 45, 97, dtype)  # ragged M, N and K
    splits = 1 if reduce is None else 3
    out = decode_gemm.decode_matmul(x, w, strategy=strategy, reduce=reduce, splits=splits)
    _assert_close(out, _expected(x, w), dtype)


@pytest.mark.parametrize("strategy", ["gemv", "split_k"])
def test_the_issues_ragged_shape_4095_by_4097(strategy):
    rng = np.random.default_rng(2)
    x, w, _, _ = _operands(rng, 1 if strategy == "gemv" else 5, 4095, 4097, "bf16")
    p = decode_gemm.plan(x.shape[0], 4095, 4097, "bf16", strategy=strategy, splits=3)
    assert p["splits"] == 3 and p["reduce"] == "two_pass"
    out = decode_gemm.decode_matmul(x, w, strategy=strategy, splits=3)
    _assert_close(out, _expected(x, w), "bf16")


@pytest.mark.parametrize("strategy,reduce", VARIANTS)
@pytest.mark.parametrize("activation", ["relu", "silu", "gelu_tanh"])
def test_epilogue_runs_once_after_the_reduction(strategy, reduce, activation):
    # relu(sum of partials) differs from the sum of relu(partials) and bias added per split
    # would count it `splits` times: the reference is the epilogue of the whole product.
    rng = np.random.default_rng(3)
    x, w, b, r = _operands(rng, 2, 40, 70, "f32", bias=True, residual=True)
    splits = 1 if reduce is None else 4
    out = decode_gemm.decode_matmul(x, w, bias=b, residual=r, activation=activation,
                                    strategy=strategy, reduce=reduce, splits=splits)
    _assert_close(out, _expected(x, w, b, r, activation), "f32")
    partial_relu = sum(np.maximum(x[:, s:s + 20].astype(np.float64) @ w[s:s + 20] + b, 0)
                       for s in range(0, 70, 20)) + r
    if activation == "relu" and reduce is not None:
        assert not np.allclose(out, partial_relu, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("block_m", [1, 2, 4])
def test_gemv_programs_of_one_two_or_four_rows_cover_ragged_m(block_m):
    rng = np.random.default_rng(7)
    x, w, b, r = _operands(rng, 5, 36, 50, "f32", bias=True, residual=True)
    out = decode_gemm.decode_matmul(x, w, bias=b, residual=r, strategy="gemv", block_m=block_m,
                                    splits=2, reduce="atomic")
    _assert_close(out, _expected(x, w, b, r), "f32")


@pytest.mark.parametrize("reduce", ["two_pass", "last_split"])
@pytest.mark.parametrize("strategy", ["gemv", "split_k"])
def test_two_pass_slices_keep_rows_past_m_out_of_the_next_split(strategy, reduce):
    # A program's rows past M (gemv's fourth row of three, split_k's 16-row tile) are bounded
    # by its own slice of the workspace: they once overwrote the next split's first rows.
    rng = np.random.default_rng(8)
    x, w, _, _ = _operands(rng, 3, 45, 97, "f32")
    for _ in range(4):  # the programs run in parallel: a race shows in some orders only
        out = decode_gemm.decode_matmul(x, w, strategy=strategy, reduce=reduce, splits=4)
        _assert_close(out, _expected(x, w), "f32")


def test_bias_alone_and_residual_alone_in_16_bit():
    rng = np.random.default_rng(4)
    x, w, b, r = _operands(rng, 1, 64, 96, "f16", bias=True, residual=True)
    _assert_close(decode_gemm.decode_matmul(x, w, bias=b, splits=3), _expected(x, w, b), "f16")
    _assert_close(decode_gemm.decode_matmul(x, w, residual=r, splits=3, reduce="atomic"),
                  _expected(x, w, r=r), "f16")


def test_plan_picks_gemv_for_one_row_and_split_k_for_sixteen_and_says_why():
    # 64 columns are one or two output tiles: too few for any device, so K is split.
    one = decode_gemm.plan(1, 64, 4096, "bf16")
    assert one["strategy"] == "gemv" and "M = 1 <= 4" in one["reason"]
    assert one["BLOCK_M"] == 1 and decode_gemm.plan(3, 64, 4096, "bf16")["BLOCK_M"] == 4
    sixteen = decode_gemm.plan(16, 64, 4096, "bf16")
    assert sixteen["strategy"] == "split_k" and "reads the weights once" in sixteen["reason"]
    for p in (one, sixteen):
        many = p["splits"] > decode_gemm.MAX_SLICES
        assert p["splits"] > 1 and p["reduce"] == ("atomic" if many else "two_pass")
        assert "K split" in p["reason"] and "metile.select" in p["reason"]
        assert p["chunk"] % p["BLOCK_K"] == 0 and p["splits"] * p["chunk"] >= 4096
        assert (p["splits"] - 1) * p["chunk"] < 4096  # no split without K to read
    single = decode_gemm.plan(1, 4096, 64, "f32", splits=1)
    assert single["reduce"] is None and single["splits"] == 1
    deep = decode_gemm.plan(1, 32, 1 << 16, "f32")  # one output tile, a long K: many splits
    assert deep["splits"] > decode_gemm.MAX_SLICES and deep["reduce"] == "atomic"
    assert "over 32 splits: partials added by atomics" in deep["reason"]
    for reduce in ("two_pass", "last_split"):  # they read every slice: a bounded count
        bounded = decode_gemm.plan(1, 32, 1 << 16, "f32", reduce=reduce)
        assert bounded["splits"] == decode_gemm.MAX_SLICES and bounded["reduce"] == reduce
        assert f"{reduce} reads every slice: at most 32 splits" in bounded["reason"]
    wide = decode_gemm.plan(16, 1 << 20, 64, "f32")  # the output tiles fill the device
    assert wide["splits"] == 1 and "K is not split" in wide["reason"]


@pytest.mark.parametrize("reduce,kernels", [("atomic", ["gemv", "finish"]),
                                            ("two_pass", ["gemv", "finish"]),
                                            ("last_split", ["gemv"])])
def test_prepared_dispatch_explains_its_plan_and_launches(reduce, kernels):
    rng = np.random.default_rng(5)
    x, w, b, _ = _operands(rng, 1, 48, 80, "f32", bias=True)
    dispatch = decode_gemm.prepare(x, w, bias=b, reduce=reduce, splits=3)
    for _ in range(3):  # the atomics' sums and last_split's tickets are zeroed after each call
        _assert_close(dispatch(), _expected(x, w, b), "f32")
    explained = dispatch.explain()
    assert explained["strategy"] == "gemv" and explained["reduce"] == reduce
    assert [launch["kernel"] for launch in explained["launches"]] == kernels
    assert all("backend" in launch["schedule_plan"] for launch in explained["launches"])


def test_candidates_enter_metile_select_and_the_winner_is_correct():
    rng = np.random.default_rng(6)
    x, w, _, _ = _operands(rng, 1, 40, 64, "f32")
    names = [c.name for c in decode_gemm.candidates(1, 40, 64, "f32")]
    assert all(any(f"gemv[{r}" in n for n in names) for r in decode_gemm.REDUCTIONS)
    assert any(n.startswith("decode_gemm.split_k") for n in names)
    out = decode_gemm.linear(x, w, persist=False)
    _assert_close(out, _expected(x, w), "f32")
    report = decode_gemm.selector(1, 40, 64, "f32", persist=False).report
    assert report["winner"] in names + ["native"]
    assert {row["name"] for row in report["selector"]["candidates"]} >= set(names)


def test_errors_name_the_operand_and_the_rule():
    x = np.zeros((1, 8), np.float32)
    with pytest.raises(ValueError, match=r"disagree on K: \(1, 8\) and \(9, 4\)"):
        decode_gemm.decode_matmul(x, np.zeros((9, 4), np.float32))
    with pytest.raises(ValueError, match="weight must have x's dtype f32, got f16"):
        decode_gemm.decode_matmul(x, np.zeros((8, 4), np.float16))
    with pytest.raises(ValueError, match=r"bias must have shape \[N\] = \[4\]"):
        decode_gemm.decode_matmul(x, np.zeros((8, 4), np.float32), bias=np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="activation must be one of"):
        decode_gemm.decode_matmul(x, np.zeros((8, 4), np.float32), activation="tanh")
    with pytest.raises(ValueError, match="take 1 to 16 rows, got 17"):
        decode_gemm.plan(17, 64, 64, "f32")
    with pytest.raises(ValueError, match="reduce must be one of"):
        decode_gemm.plan(1, 64, 64, "f32", reduce="tree")
    with pytest.raises(ValueError, match="gemv's block_m .rows a program. must be 1, 2 or 4"):
        decode_gemm.plan(3, 64, 64, "f32", strategy="gemv", block_m=3)
    with pytest.raises(ValueError, match="operands must be f16, bf16 or f32, got i32"):
        decode_gemm.plan(1, 64, 64, "i32")



@pytest.mark.parametrize("rows", [1, 3, 16, 17, 40])
def test_the_library_mm_takes_the_decode_path_up_to_sixteen_rows(rows):
    rng = np.random.default_rng(9)
    x, w, _, _ = _operands(rng, rows, 45, 37, "f32")
    chosen = gemm.mm_plan(rows, 45, 37, "f32")
    assert chosen["path"] == ("decode" if rows <= 16 else "tiled")
    assert chosen["reason"].startswith(f"M = {rows} " + ("<=" if rows <= 16 else ">") + " 16")
    _assert_close(gemm.mm(x, w), _expected(x, w), "f32")


def test_a_transposed_numpy_weight_is_read_in_its_logical_order():
    # torch's nn.Linear keeps weights [N, K]; a numpy view of its transpose is staged row-major.
    rng = np.random.default_rng(10)
    linear_weight = rng.standard_normal((36, 50)).astype(np.float32)  # [N, K]
    x = rng.standard_normal((2, 50)).astype(np.float32)
    out = decode_gemm.decode_matmul(x, linear_weight.T, splits=2, reduce="last_split")
    _assert_close(out, _expected(x, linear_weight.T), "f32")
