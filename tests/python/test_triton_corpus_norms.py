"""The Triton corpus' norms, softmaxes and losses (tests/python/triton_corpus/): softmax
(tutorial 02's persistent kernel, online and multi-block forms, log-softmax, backward),
layer norm (tutorial 05's forward and dW/dB sum), RMSNorm (Liger's forward and backward),
vLLM's fused residual add + RMSNorm, Liger's KL divergence and JSD, and group norm. Each runs
with only the import renamed on the default device and is checked against a numpy reference,
ragged shapes (sizes not multiples of the block) included."""

import ml_dtypes
import numpy as np
import pytest

import metile
from triton_corpus.load import load, on_device, to_numpy

F32, F16, BF16 = np.float32, np.float16, ml_dtypes.bfloat16
DTYPES = pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["f32", "f16", "bf16"])
TOLERANCE = {F32: 1e-5, F16: 2e-3, BF16: 2e-2}


def kernels(name):
    module, edits = load(name, "metile")
    assert edits == []  # runs as written, with only the import renamed
    return module


def row_stride(x):
    return x.strides[0] // x.itemsize


def f64(x):
    return np.asarray(to_numpy(x)).astype(np.float64)


def softmax_reference(x):
    x = x.astype(np.float64)
    p = np.exp(x - x.max(-1, keepdims=True))
    return p / p.sum(-1, keepdims=True)


def close(got, want, dtype, scale=1.0):
    tolerance = TOLERANCE[dtype] * scale
    np.testing.assert_allclose(f64(got), want, rtol=tolerance, atol=tolerance)


# Softmax -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,shape,programs", [
    (F32, (37, 100), 8),   # ragged columns, rows not a multiple of the programs
    (F16, (5, 64), 16),    # more programs than rows: some run no row
    (BF16, (64, 33), 4),   # sixteen rows for each program
], ids=["f32_ragged_persistent", "f16_more_programs_than_rows", "bf16_many_rows_each"])
def test_tutorial_softmax(dtype, shape, programs, rng):
    module = kernels("softmax")
    n_rows, n_cols = shape
    x = rng.standard_normal(shape).astype(dtype) * 3
    y = np.full(shape, np.nan, dtype)
    x_d, y_d = on_device(x, y)
    module.softmax_kernel[(programs, 1, 1)](y_d, x_d, row_stride(x), row_stride(y), n_rows,
                                            n_cols, BLOCK_SIZE=metile.next_power_of_2(n_cols),
                                            num_stages=2)
    close(y_d, softmax_reference(x.astype(np.float64)), dtype)


@DTYPES
@pytest.mark.parametrize("variant", ["scalar", "vector"])
def test_online_softmax_over_several_blocks(dtype, variant, rng):
    module = kernels("online_softmax")
    n_rows, n_cols, block = 9, 300, 64  # five blocks per row, the last a partial one
    x = (rng.standard_normal((n_rows, n_cols)) * 4).astype(dtype)
    x[0, 250:] += 20  # the row's maximum in its last block: the running sum is rescaled
    y = np.full((n_rows, n_cols), np.nan, dtype)
    x_d, y_d = on_device(x, y)
    if variant == "scalar":
        module.softmax_online_scalar_kernel[(n_rows,)](y_d, row_stride(y), x_d, row_stride(x),
                                                       n_cols, BLOCK_SIZE=block)
    else:
        module.softmax_online_vector_kernel[(n_rows,)](y_d, x_d, n_rows, n_cols, TILE_N=block)
    close(y_d, softmax_reference(x), dtype)


@DTYPES
def test_log_softmax_forward_and_backward(dtype, rng):
    module = kernels("log_softmax")
    n_rows, n_cols = 11, 77
    x = (rng.standard_normal((n_rows, n_cols)) * 3).astype(dtype)
    y = np.full((n_rows, n_cols), np.nan, dtype)
    x_d, y_d = on_device(x, y)
    module.log_softmax_fwd_kernel[lambda META: (n_rows,)](y_d, x_d, row_stride(x),
                                                          row_stride(y), n_cols)
    xf = x.astype(np.float64)
    shifted = xf - xf.max(1, keepdims=True)
    want_y = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    close(y_d, want_y, dtype, scale=4)

    y_host = to_numpy(y_d)
    dy = rng.standard_normal((n_rows, n_cols)).astype(dtype)
    dx = np.full((n_rows, n_cols), np.nan, dtype)
    dx_d, dy_d, out_d = on_device(dx, dy, y_host)
    module.log_softmax_bwd_kernel[(n_rows,)](dx_d, dy_d, out_d, row_stride(dx), row_stride(dy),
                                             row_stride(y_host), n_cols)
    dyf = dy.astype(np.float64)
    want_dx = dyf - np.exp(y_host.astype(np.float64)) * dyf.sum(1, keepdims=True)
    close(dx_d, want_dx, dtype, scale=4)


@DTYPES
@pytest.mark.parametrize("variant,n_cols,block", [("single", 100, 128), ("multi", 200, 64)],
                         ids=["single_block", "multi_block"])
def test_softmax_backward(dtype, variant, n_cols, block, rng):
    module = kernels("softmax_backward")
    n_rows = 7
    y = softmax_reference(rng.standard_normal((n_rows, n_cols))).astype(dtype)
    dy = rng.standard_normal((n_rows, n_cols)).astype(dtype)
    dx = np.full((n_rows, n_cols), np.nan, dtype)
    dy_d, y_d, dx_d = on_device(dy, y, dx)
    kernel = (module.softmax_bwd_single_block_kernel if variant == "single"
              else module.softmax_bwd_multi_block_kernel)
    kernel[(n_rows,)](dy_d, row_stride(dy), y_d, row_stride(y), dx_d, row_stride(dx), n_cols,
                      BLOCK_SIZE=block)
    yf, dyf = y.astype(np.float64), dy.astype(np.float64)
    want = yf * (dyf - (yf * dyf).sum(1, keepdims=True))
    close(dx_d, want, dtype)


# Layer norm --------------------------------------------------------------------------------


def layer_norm_reference(x, w, b, eps):
    x = x.astype(np.float64)
    mean = x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + eps)
    return (x - mean) * rstd * w.astype(np.float64) + b.astype(np.float64), mean[:, 0], rstd[:, 0]


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
def test_tutorial_layer_norm_forward(dtype, rng):
    module = kernels("layer_norm")
    m, n, eps = 13, 300, 1e-5  # three column blocks of 128, the last a partial one
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(dtype)
    w = rng.random(n).astype(dtype) + 0.5
    b = rng.standard_normal(n).astype(dtype)
    y = np.full((m, n), np.nan, dtype)
    mean, rstd = np.full(m, np.nan, F32), np.full(m, np.nan, F32)
    x_d, w_d, b_d, y_d, mean_d, rstd_d = on_device(x, w, b, y, mean, rstd)
    module._layer_norm_fwd_fused[(m,)](x_d, y_d, w_d, b_d, mean_d, rstd_d, row_stride(x), n, eps,
                                       BLOCK_SIZE=128, num_warps=4)
    want_y, want_mean, want_rstd = layer_norm_reference(x, w, b, eps)
    close(y_d, want_y, dtype, scale=2)
    close(mean_d, want_mean, F32)
    close(rstd_d, want_rstd, F32)


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
def test_tutorial_layer_norm_backward_dx_with_the_spin_lock(dtype, rng):
    # Each program (row) computes dx and adds dy * xhat and dy into partial row lock_id =
    # row % GROUP_SIZE_M under that row's lock (`while tl.atomic_cas(Lock, 0, 1) == 1`); the
    # first writer of a partial row marks it in Count. Rows of one group contend for a lock.
    module = kernels("layer_norm")
    m, n, group_size_m, eps = 37, 300, 8, 1e-5
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(dtype)
    dy = rng.standard_normal((m, n)).astype(dtype)
    w = (rng.random(n) + 0.5).astype(dtype)
    x64 = x.astype(np.float64)
    mean = x64.mean(1)
    rstd = 1 / np.sqrt(((x64 - mean[:, None]) ** 2).mean(1) + eps)
    dx = np.full((m, n), np.nan, dtype)
    dw, db = np.zeros((group_size_m, n), dtype), np.zeros((group_size_m, n), dtype)
    locks = np.zeros(2 * group_size_m, np.int32)  # the locks, then the counts
    dx_d, dy_d, dw_d, db_d, x_d, w_d, mean_d, rstd_d, locks_d = on_device(
        dx, dy, dw, db, x, w, mean.astype(F32), rstd.astype(F32), locks)
    module._layer_norm_bwd_dx_fused[(m,)](dx_d, dy_d, dw_d, db_d, x_d, w_d, mean_d, rstd_d,
                                          locks_d, row_stride(x), n, GROUP_SIZE_M=group_size_m,
                                          BLOCK_SIZE_N=512)
    xhat = (x64 - mean[:, None]) * rstd[:, None]
    wdy = w.astype(np.float64) * dy.astype(np.float64)
    c1 = (xhat * wdy).mean(1, keepdims=True)
    c2 = wdy.mean(1, keepdims=True)
    close(dx_d, (wdy - (xhat * c1 + c2)) * rstd[:, None], dtype, scale=4)
    groups = np.arange(m) % group_size_m
    want_dw = np.stack([(dy.astype(np.float64) * xhat)[groups == g].sum(0)
                        for g in range(group_size_m)])
    want_db = np.stack([dy.astype(np.float64)[groups == g].sum(0) for g in range(group_size_m)])
    close(dw_d, want_dw, dtype, scale=8)
    close(db_d, want_db, dtype, scale=8)
    np.testing.assert_array_equal(to_numpy(locks_d), [0] * group_size_m + [1] * group_size_m)


@pytest.mark.parametrize("dtype,group_size_m,n", [(F32, 13, 100), (F16, 40, 200)],
                         ids=["f32_one_row_block", "f16_two_row_blocks"])
def test_tutorial_layer_norm_dwdb(dtype, group_size_m, n, rng):
    # The partial dW/dB rows that _layer_norm_bwd_dx_fused leaves (GROUP_SIZE_M of them, in
    # the weight's dtype), summed column block by column block.
    module = kernels("layer_norm")
    partial_dw = rng.standard_normal((group_size_m, n)).astype(dtype)
    partial_db = rng.standard_normal((group_size_m, n)).astype(dtype)
    dw, db = np.full(n, np.nan, dtype), np.full(n, np.nan, dtype)
    pdw_d, pdb_d, dw_d, db_d = on_device(partial_dw, partial_db, dw, db)
    module._layer_norm_bwd_dwdb[(metile.cdiv(n, 64),)](pdw_d, pdb_d, dw_d, db_d, group_size_m, n,
                                                       BLOCK_SIZE_M=32, BLOCK_SIZE_N=64)
    close(dw_d, partial_dw.astype(np.float64).sum(0), dtype, scale=4)
    close(db_d, partial_db.astype(np.float64).sum(0), dtype, scale=4)


# RMSNorm -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,casting_mode,offset", [
    (F32, "none", 0.0), (F16, "llama", 0.0), (BF16, "gemma", 1.0)], ids=["f32_none",
                                                                         "f16_llama",
                                                                         "bf16_gemma"])
def test_liger_rms_norm_forward_and_backward(dtype, casting_mode, offset, rng):
    module = kernels("rms_norm")
    n_rows, n_cols, eps, rows_per_program = 13, 100, 1e-6, 4
    block = metile.next_power_of_2(n_cols)
    x = rng.standard_normal((n_rows, n_cols)).astype(dtype)
    w = (rng.standard_normal(n_cols) * 0.1 + (1 - offset)).astype(dtype)
    y = np.full((n_rows, n_cols), np.nan, dtype)
    rstd = np.full(n_rows, np.nan, F32)
    x_d, w_d, y_d, rstd_d = on_device(x, w, y, rstd)
    module._rms_norm_forward_kernel[(n_rows,)](y_d, row_stride(y), x_d, row_stride(x), w_d, 1,
                                               rstd_d, 1, n_cols, eps, offset,
                                               casting_mode=casting_mode, BLOCK_SIZE=block)
    xf, wf = x.astype(np.float64), w.astype(np.float64) + offset
    want_rstd = 1 / np.sqrt((xf * xf).mean(1) + eps)
    close(rstd_d, want_rstd, dtype)
    close(y_d, xf * want_rstd[:, None] * wf, dtype, scale=2)

    dy = rng.standard_normal((n_rows, n_cols)).astype(dtype)
    dx = np.full((n_rows, n_cols), np.nan, dtype)
    programs = metile.cdiv(n_rows, rows_per_program)
    partial_dw = np.full((programs, n_cols), np.nan, F32)
    dy_d, dx_d, pdw_d = on_device(dy, dx, partial_dw)
    x_dtype = {F32: metile.float32, F16: metile.float16, BF16: metile.bfloat16}[dtype]
    module._rms_norm_backward_kernel[(programs,)](
        dy_d, row_stride(dy), dx_d, row_stride(dx), x_d, row_stride(x), x_dtype, w_d, 1, rstd_d,
        1, pdw_d, row_stride(partial_dw), n_rows, n_cols, offset,
        rows_per_program=rows_per_program, casting_mode=casting_mode, BLOCK_SIZE=block)
    r = to_numpy(rstd_d).astype(np.float64)[:, None]
    dyf = dy.astype(np.float64)
    m = dyf * wf
    want_dx = r * m - r ** 3 / n_cols * (m * xf).sum(1, keepdims=True) * xf
    close(dx_d, want_dx, dtype, scale=4)
    close(to_numpy(pdw_d).sum(0), (dyf * xf * r).sum(0), dtype, scale=8)


@DTYPES
def test_vllm_fused_add_rms_norm(dtype, rng):
    module = kernels("fused_add_rms_norm")
    tokens, hidden, eps = 9, 200, 1e-6
    x = rng.standard_normal((tokens, hidden)).astype(dtype)
    residual = rng.standard_normal((tokens, hidden)).astype(dtype)
    w = (rng.standard_normal(hidden) * 0.1 + 1).astype(dtype)
    z = (x.astype(np.float64) + residual.astype(np.float64)).astype(dtype)  # in place of both
    x_d, residual_d, w_d = on_device(x.copy(), residual.copy(), w)
    module.fused_add_rms_norm_kernel[(tokens,)](x_d, residual_d, w_d, row_stride(x),
                                                row_stride(residual), hidden, eps,
                                                BLOCK_SIZE=256)
    zf = z.astype(np.float64)
    normed = zf / np.sqrt((zf * zf).mean(1, keepdims=True) + eps)
    np.testing.assert_array_equal(to_numpy(residual_d), z)
    close(x_d, normed * w.astype(np.float64), dtype, scale=2)


# Losses ------------------------------------------------------------------------------------


@pytest.mark.parametrize("log_target,reduction", [(False, "batchmean"), (True, "batchmean"),
                                                  (False, "none")],
                         ids=["batchmean", "log_target", "none"])
def test_liger_kl_div(log_target, reduction, rng):
    module = kernels("kl_div")
    batch, n_cols, eps = 6, 300, 1e-10
    y_pred = np.log(softmax_reference(rng.standard_normal((batch, n_cols)))).astype(F32)
    target = softmax_reference(rng.standard_normal((batch, n_cols)))
    target[1, :10] = 0  # zero probabilities: clamped to eps, contribute zero
    target = (np.log(np.maximum(target, 1e-30)) if log_target else target).astype(F32)
    loss = np.full((batch, n_cols) if reduction == "none" else (batch,), np.nan, F32)
    y_d, gt_d, loss_d = on_device(y_pred, target, loss)
    kwargs = {"log_target": True} if log_target else {}  # the defaults otherwise
    if reduction != "batchmean":
        kwargs["reduction"] = reduction
    module._kldiv_kernel_forward[(batch,)](y_d, row_stride(y_pred), gt_d, row_stride(target),
                                           loss_d, loss.strides[0] // 4, n_cols, eps,
                                           BLOCK_SIZE=128, **kwargs)
    yp, t = y_pred.astype(np.float64), target.astype(np.float64)
    elementwise = (np.exp(t) * (t - yp) if log_target
                   else t * (np.log(np.maximum(t, eps)) - yp))
    if reduction == "none":
        close(loss_d, elementwise, F32, scale=10)
    else:
        close(loss_d, elementwise.sum(1), F32, scale=10)
        batchmean = to_numpy(loss_d).sum() / batch  # the host's reduction, as Liger's
        assert abs(batchmean - elementwise.sum() / batch) < 1e-5


@pytest.mark.parametrize("dtype,beta", [(F32, 0.5), (F32, 0.0), (BF16, 1.0)],
                         ids=["f32_jsd", "f32_forward_kl", "bf16_reverse_kl"])
def test_liger_jsd(dtype, beta, rng):
    module = kernels("jsd")
    batch, n_cols = 6, 200
    x = np.log(softmax_reference(rng.standard_normal((batch, n_cols)))).astype(dtype)
    y = np.log(softmax_reference(rng.standard_normal((batch, n_cols)))).astype(dtype)
    loss = np.full((batch, n_cols), np.nan, F32)
    dx = np.full((batch, n_cols), np.nan, dtype)
    x_d, y_d, loss_d, dx_d = on_device(x, y, loss, dx)
    module._jsd_kernel[(batch,)](x_d, row_stride(x), y_d, row_stride(y), loss_d,
                                 row_stride(loss), dx_d, row_stride(dx), beta, batch, n_cols,
                                 BLOCK_SIZE=64)
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    q, p = np.exp(xf), np.exp(yf)
    if beta == 0.0:
        want_loss, want_dx = p * (yf - xf), -p
    elif beta == 1.0:
        want_loss, want_dx = q * (xf - yf), q * (xf - yf) + q
    else:
        mix = beta * p + (1 - beta) * q
        want_loss = beta * p * yf + (1 - beta) * q * xf - mix * np.log(mix)
        want_dx = (1 - beta) * q * (xf - np.log(mix))
    close(loss_d, want_loss / batch, F32, scale=10)
    close(dx_d, want_dx / batch, dtype, scale=2)
    assert abs(to_numpy(loss_d).sum() - want_loss.sum() / batch) < 1e-5


# Group norm --------------------------------------------------------------------------------


@DTYPES
def test_liger_group_norm_forward(dtype, rng):
    module = kernels("group_norm")
    n, c, groups, hw, eps = 2, 6, 3, 50, 1e-5  # 100 values per group: blocks of 64, ragged
    cpg = c // groups
    x = (rng.standard_normal((n, c, hw)) * 2 + 1).astype(dtype)
    w = (rng.standard_normal(c) * 0.5 + 1).astype(dtype)
    b = rng.standard_normal(c).astype(dtype)
    y = np.full((n, c, hw), np.nan, dtype)
    mean, rstd = np.full((n, groups), np.nan, F32), np.full((n, groups), np.nan, F32)
    x_d, w_d, b_d, y_d, mean_d, rstd_d = on_device(x, w, b, y, mean, rstd)
    hidden = cpg * hw  # the group's values, contiguous
    module._group_norm_forward_kernel[(n, groups)](
        y_d, c * hw, hidden, x_d, c * hw, hidden, mean_d, groups, 1, rstd_d, groups, 1, w_d, b_d,
        hidden, cpg, eps, BLOCK_SIZE=64)
    xg = x.astype(np.float64).reshape(n, groups, hidden)
    want_mean = xg.mean(2)
    want_rstd = 1 / np.sqrt(xg.var(2) + eps)
    normed = ((xg - want_mean[..., None]) * want_rstd[..., None]).reshape(n, c, hw)
    want_y = normed * w.astype(np.float64)[:, None] + b.astype(np.float64)[:, None]
    close(mean_d, want_mean, F32, scale=2)
    close(rstd_d, want_rstd, F32, scale=10)
    close(y_d, want_y, dtype, scale=2)
