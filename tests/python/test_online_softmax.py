"""merge_online_reductions end to end: the quick start's three-pass softmax runs with two
passes over its input under the online softmax law's certificate and matches numpy on ragged
rows, -inf entries included; kernels that start from -inf keep NaN for rows of only -inf, as
numpy; a kernel the law does not license keeps its three passes and its report says why."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import metile

NEG_INF = float("-inf")
RAGGED = (1, 7, 1000, 4097)


def _quickstart():
    path = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"
    spec = importlib.util.spec_from_file_location("quickstart", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


quickstart_softmax = _quickstart().softmax


@metile.kernel
def softmax_scalar_state(x_ptr, out_ptr, n_cols, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    m = NEG_INF
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        m = metile.maximum(m, metile.max(metile.load(x_row + cols, mask=cols < n_cols,
                                                     other=NEG_INF)))
    total = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=NEG_INF)
        total = total + metile.sum(metile.exp(x - m))
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols)
        metile.store(out_ptr + row * n_cols + cols, metile.exp(x - m) / total, mask=cols < n_cols)


@metile.kernel
def softmax_per_element_state(x_ptr, out_ptr, n_cols, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    m = NEG_INF
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        m = metile.maximum(m, metile.load(x_row + cols, mask=cols < n_cols, other=NEG_INF))
    m = metile.max(m)
    total = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=NEG_INF)
        total = total + metile.exp(x - m)
    total = metile.sum(total)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols)
        metile.store(out_ptr + row * n_cols + cols, metile.exp(x - m) / total, mask=cols < n_cols)


@metile.kernel
def softmax_row_blocks(x_ptr, out_ptr, n_rows, n_cols, BM: metile.constexpr,
                       BN: metile.constexpr):
    rows = metile.program_id(0) * BM + metile.arange(0, BM)
    m = metile.full((BM,), NEG_INF, metile.float32)
    for start in metile.tile_range(0, n_cols, BN):
        cols = start + metile.arange(0, BN)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = metile.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=NEG_INF)
        m = metile.maximum(m, metile.max(x, axis=1))
    s = metile.zeros((BM,), metile.float32)
    for start in metile.tile_range(0, n_cols, BN):
        cols = start + metile.arange(0, BN)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = metile.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=NEG_INF)
        s = s + metile.sum(metile.exp(x - m[:, None]), axis=1)
    for start in metile.tile_range(0, n_cols, BN):
        cols = start + metile.arange(0, BN)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = metile.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask)
        metile.store(out_ptr + rows[:, None] * n_cols + cols[None, :],
                     metile.exp(x - m[:, None]) / s[:, None], mask=mask)


@metile.kernel
def min_then_sum(x_ptr, out_ptr, n_cols, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    m = 1e38
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        m = metile.minimum(m, metile.min(metile.load(x_row + cols, mask=cols < n_cols,
                                                     other=1e38)))
    total = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=NEG_INF)
        total = total + metile.sum(metile.exp(x - m))
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols)
        metile.store(out_ptr + row * n_cols + cols, metile.exp(x - m) / total, mask=cols < n_cols)


def numpy_softmax(a):
    with np.errstate(invalid="ignore"):
        e = np.exp(a - a.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)


def rows(rng, n, only_neg_inf):
    a = rng.standard_normal((4, n)).astype(np.float32)
    a[1, 1::3] = NEG_INF  # masked scores in a row that keeps a finite one
    a[2, 1:] = NEG_INF  # a single finite element
    if only_neg_inf:
        a[3, :] = NEG_INF
    return a


def run(kernel, a):
    out = np.zeros_like(a)
    dispatch = kernel[(a.shape[0],)].prepare(a, out, a.shape[1], BLOCK=256)
    dispatch()
    return dispatch, out


def check_merged(dispatch):
    # Traced with three loops; compiled with two, each reading x once.
    assert dispatch.tile_ir.count(" for ") == 3
    report = dispatch.execution_report
    assert len(report["loops"]) == 2
    [discovery] = report["discoveries"]
    assert discovery["rewrite"] == "online softmax" and discovery["applied"]
    assert discovery["law"] == "online_softmax"
    certificate = discovery["certificate"]
    assert [o.split(" ")[0] for o in certificate["obligations"]] == [
        "left_identity", "right_identity", "associativity", "pair_homomorphism",
        "list_homomorphism"]
    assert certificate["cases_checked"] > 0
    assert "online_softmax" in dispatch.explain() and "list_homomorphism" in dispatch.explain()


@pytest.mark.parametrize("n", RAGGED)
def test_quickstart_softmax_reads_its_input_twice_and_matches_numpy(n, rng):
    # The quick start starts from -1e38, so a row of only -inf is not numpy's NaN there.
    a = rows(rng, n, only_neg_inf=False)
    dispatch, out = run(quickstart_softmax, a)
    check_merged(dispatch)
    np.testing.assert_allclose(out, numpy_softmax(a), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kernel", [softmax_scalar_state, softmax_per_element_state])
@pytest.mark.parametrize("n", RAGGED)
def test_kernels_from_neg_inf_keep_nan_rows(kernel, n, rng):
    a = rows(rng, n, only_neg_inf=True)
    dispatch, out = run(kernel, a)
    check_merged(dispatch)
    expected = numpy_softmax(a)
    assert np.isnan(expected[3]).all()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("n", RAGGED)
def test_row_blocks_merge_row_by_row(n, rng):
    # Five rows in blocks of four: the second block's last three rows are masked.
    a = np.concatenate([rows(rng, n, only_neg_inf=True),
                        rng.standard_normal((1, n)).astype(np.float32)])
    out = np.zeros_like(a)
    dispatch = softmax_row_blocks[(metile.cdiv(5, 4),)].prepare(a, out, 5, n, BM=4, BN=64)
    dispatch()
    check_merged(dispatch)
    assert "along axis 1" in dispatch.execution_report["discoveries"][0]["result"]
    np.testing.assert_allclose(out, numpy_softmax(a), rtol=1e-5, atol=1e-7, equal_nan=True)


def test_a_running_minimum_keeps_three_passes_and_says_why(rng):
    a = rng.standard_normal((3, 1000)).astype(np.float32)
    dispatch, out = run(min_then_sum, a)
    report = dispatch.execution_report
    assert len(report["loops"]) == 3
    [discovery] = report["discoveries"]
    assert not discovery["applied"] and "certificate" not in discovery
    assert "running minimum" in discovery["reason"]
    assert "running minimum" in dispatch.explain()
    np.testing.assert_allclose(out, numpy_softmax(a), rtol=1e-5, atol=1e-7)
