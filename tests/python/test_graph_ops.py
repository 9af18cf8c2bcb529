"""The graph ops a transformer block needs, run through plan.compile() on the host and checked
against numpy: casts, transposes and reshapes (views read in place through strides), slices,
concat, rotary embedding, embedding lookup, KV-cache update and grouped-query attention
(issue 29). Builder errors name the node."""

import json

import numpy as np
import pytest

import metile

RNG = np.random.default_rng(29)


def spec(shape, dtype="f32"):
    return metile.TensorSpec(shape, dtype)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def compiled(b, outputs):
    run = metile.plan_graph_fusion(b.build(outputs)).compile()
    return run, json.loads(run.explain())


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def test_cast_rounds_where_the_graph_says():
    b = metile.GraphBuilder()
    x = b.input("x", spec((3, 37)))
    y = b.cast(b.cast(b.scale(x, 3.0), "f16"), "f32")
    i = b.cast(b.scale(x, 10.0), "i32")
    run, report = compiled(b, [b.add(y, x), i])
    # Casts are elementwise: they fuse into row kernels (two sinks: two regions).
    assert [k["ops"] for k in report["kernels"]] == [
        ["%1 = scale", "%2 = cast", "%3 = cast", "%6 = add"], ["%4 = scale", "%5 = cast"]]
    xv = randn(3, 37)
    got, got_i = run(xv)
    want = (xv * 3).astype(np.float16).astype(np.float32) + xv
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert got_i.dtype == np.int32
    np.testing.assert_array_equal(got_i, np.trunc(xv * np.float32(10)).astype(np.int32))


def test_transpose_of_any_two_axes_is_copied_when_it_is_an_output():
    b = metile.GraphBuilder()
    x = b.input("x", spec((3, 5, 7)))
    run, report = compiled(b, [b.transpose(x, 0, 1), b.transpose(x)])
    assert [k["form"] for k in report["kernels"]] == ["copy", "transpose"]
    xv = randn(3, 5, 7)
    a, c = run(xv)
    np.testing.assert_array_equal(a, xv.transpose(1, 0, 2))
    np.testing.assert_array_equal(c, xv.transpose(0, 2, 1))


def test_transposed_matmul_operand_is_read_in_place():
    b = metile.GraphBuilder()
    a = b.input("a", spec((2, 19, 40)))
    w = b.input("w", spec((70, 40)))  # (N, K): a linear layer's weight
    run, report = compiled(b, [b.matmul(a, b.transpose(w))])
    assert [k["form"] for k in report["kernels"]] == ["matmul"]
    assert report["views"] == {"%2": "%w, offset 0, strides (1, 40)"}
    av, wv = randn(2, 19, 40), randn(70, 40)
    (got,) = run(av, wv)
    np.testing.assert_allclose(got, av @ wv.T, rtol=1e-4, atol=1e-4)


def test_reshape_is_a_view_and_a_copy_when_its_input_is_strided():
    b = metile.GraphBuilder()
    x = b.input("x", spec((6, 20)))
    w = b.input("w", spec((5, 9)))
    heads = b.reshape(x, (6, 4, 5))                     # a view of x
    flat = b.reshape(b.transpose(heads, 0, 1), (4, -1))  # strided: copied
    y = b.matmul(heads, w)
    run, report = compiled(b, [y, flat])
    forms = sorted(k["form"] for k in report["kernels"])
    assert forms == ["copy", "matmul"]
    assert "%2" in report["views"] and "%3" in report["views"]
    xv, wv = randn(6, 20), randn(5, 9)
    got_y, got_flat = run(xv, wv)
    np.testing.assert_allclose(got_y, xv.reshape(6, 4, 5) @ wv, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got_flat, xv.reshape(6, 4, 5).transpose(1, 0, 2).reshape(4, -1))


def test_slice_and_concat():
    b = metile.GraphBuilder()
    x = b.input("x", spec((3, 17)))
    y = b.input("y", spec((3, 6)))
    w = b.input("w", spec((5, 4)))
    part = b.slice(x, 1, 4, 9)
    joined = b.concat([x, y, part], axis=-1)
    projected = b.matmul(part, w)  # the slice read in place
    run, report = compiled(b, [joined, projected])
    assert sorted(k["form"] for k in report["kernels"]) == ["copy", "copy", "copy", "matmul"]
    xv, yv, wv = randn(3, 17), randn(3, 6), randn(5, 4)
    got_joined, got_projected = run(xv, yv, wv)
    np.testing.assert_array_equal(got_joined, np.concatenate([xv, yv, xv[:, 4:9]], axis=-1))
    np.testing.assert_allclose(got_projected, xv[:, 4:9] @ wv, rtol=1e-5, atol=1e-5)


def test_rotary_reads_the_head_transpose_in_place():
    t, heads, d = 13, 3, 10  # ragged: 13 positions, half of 5
    b = metile.GraphBuilder()
    q = b.input("q", spec((t, heads * d)))
    cos = b.input("cos", spec((t, d // 2)))
    sin = b.input("sin", spec((t, d // 2)))
    per_head = b.transpose(b.reshape(q, (t, heads, d)), 0, 1)  # (heads, t, d), a view
    run, report = compiled(b, [b.rotary(per_head, cos, sin)])
    assert [k["form"] for k in report["kernels"]] == ["rotary"]
    qv = randn(t, heads * d)
    angles = np.arange(t)[:, None] * 10000.0 ** (-np.arange(d // 2) / (d // 2))
    cv, sv = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    (got,) = run(qv, cv, sv)
    want = rotate(qv.reshape(t, heads, d).transpose(1, 0, 2), cv, sv)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_embedding_gathers_rows():
    b = metile.GraphBuilder()
    table = b.input("table", spec((50, 37)))
    ids = b.input("ids", spec((3, 7), "i32"))
    run, report = compiled(b, [b.embedding(table, ids)])
    tv = randn(50, 37)
    iv = RNG.integers(0, 50, (3, 7)).astype(np.int32)
    (got,) = run(tv, iv)
    np.testing.assert_array_equal(got, tv[iv])


def test_cache_update_replaces_the_window_at_a_run_time_position():
    b = metile.GraphBuilder()
    cache = b.input("cache", spec((2, 20, 12)))
    new = b.input("new", spec((2, 3, 12)))
    position = b.input("position", spec((1,), "i32"))
    run, _ = compiled(b, [b.cache_update(cache, new, position)])
    cv, nv = randn(2, 20, 12), randn(2, 3, 12)
    for p in (0, 5, 17):
        (got,) = run(cv, nv, np.array([p], np.int32))
        want = cv.copy()
        want[:, p:p + 3] = nv
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("length", [37, 70])  # 37: the group's heads packed along M
@pytest.mark.parametrize("causal", [False, True])
def test_grouped_query_attention(causal, length):
    kv_heads, group, dim = 2, 3, 32
    b = metile.GraphBuilder()
    q = b.input("q", spec((kv_heads, group, length, dim)))
    k = b.input("k", spec((kv_heads, 1, length, dim)))
    v = b.input("v", spec((kv_heads, 1, length, dim)))
    scores = b.scale(b.matmul(q, b.transpose(k)), dim ** -0.5)
    if causal:
        scores = b.causal_mask(scores)
    plan = metile.plan_graph_fusion(b.build([b.matmul(b.softmax(scores), v)]))
    assert len(plan.rewrites) == 1
    run = plan.compile()
    report = json.loads(run.explain())
    (kernel,) = report["kernels"]  # kt is read through the transpose's strides
    assert kernel["form"] == "flash_attention" and "grouped-query" in kernel["decision"]
    assert ("3 query heads of a K/V head packed along M (111 rows)" in kernel["decision"]) == (
        length == 37)
    qv, kv, vv = randn(kv_heads, group, length, dim), randn(kv_heads, 1, length, dim), \
        randn(kv_heads, 1, length, dim)
    (got,) = run(qv, kv, vv)
    s = qv.astype(np.float64) @ np.swapaxes(kv, -1, -2) / np.sqrt(dim)
    if causal:
        s = np.where(np.tril(np.ones((length, length), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(got, (p / p.sum(-1, keepdims=True)) @ vv, rtol=1e-4, atol=1e-4)


def test_builder_errors_name_the_node():
    b = metile.GraphBuilder()
    x = b.input("x", spec((4, 6)))
    ids = b.input("ids", spec((4,), "i32"))
    cos = b.input("cos", spec((4, 2)))
    cases = [
        (lambda: b.reshape(x, (5, 5)),
         r"reshape: \(4, 6\) \(24 elements\) cannot become \(5, 5\), in %3 = reshape\(%x\)"),
        (lambda: b.transpose(x, 1, -1),
         r"transpose: axis0 and axis1 are both axis 1 of shape \(4, 6\), in %3 = transpose\(%x\)"),
        (lambda: b.slice(x, 1, 4, 9),
         r"slice: \[4:9\] of axis 1 of \(4, 6\) is empty or out of range, in %3 = slice\(%x\)"),
        (lambda: b.concat([x, cos], 0),
         r"concat: operand 1 \(4, 2\) f32 does not match operand 0 \(4, 6\) f32 but along axis 0,"
         r" in %3 = concat\(%x, %cos\)"),
        (lambda: b.rotary(x, cos, cos),
         r"rotary: cos and sin must be \(4, 3\) f32 for x \(4, 6\) f32, got \(4, 2\) f32 and "
         r"\(4, 2\) f32, in %3 = rotary\(%x, %cos, %cos\)"),
        (lambda: b.embedding(x, x),
         r"embedding: ids must be i32, got \(4, 6\) f32, in %3 = embedding\(%x, %x\)"),
        (lambda: b.cache_update(x, x, ids),
         r"cache_update: position must be \(1,\) i32, got \(4,\) i32, in "
         r"%3 = cache_update\(%x, %x, %ids\)"),
    ]
    for make, message in cases:
        with pytest.raises(metile.CompilationError, match=message):
            make()


def test_new_ops_read_back_from_text():
    b = metile.GraphBuilder()
    x = b.input("x", spec((4, 6)))
    y = b.cast(b.slice(b.transpose(b.reshape(x, (2, 2, 6)), 0, 2), 0, 1, 5), "f16")
    graph = b.build([y])
    assert str(metile.parse_graph(str(graph))) == str(graph)


def test_embedding_and_cache_update_read_views():
    b = metile.GraphBuilder()
    table = b.input("table", spec((12, 40)))  # used as its transpose, columns 2:10: (40, 8)
    ids = b.input("ids", spec((2, 5), "i32"))
    cache = b.input("cache", spec((9, 2, 8)))
    new = b.input("new", spec((3, 2, 8)))
    position = b.input("position", spec((1,), "i32"))
    rows = b.embedding(b.slice(b.transpose(table), 1, 2, 10), b.transpose(ids, 0, 1))
    updated = b.cache_update(b.transpose(cache, 0, 1), b.transpose(new, 0, 1), position)
    run, report = compiled(b, [rows, updated])
    assert sorted(k["form"] for k in report["kernels"]) == ["cache_update", "embedding"]
    assert len(report["views"]) == 5
    tv, cv, nv = randn(12, 40), randn(9, 2, 8), randn(3, 2, 8)
    iv = RNG.integers(0, 40, (2, 5)).astype(np.int32)
    got_rows, got_cache = run(tv, iv, cv, nv, np.array([4], np.int32))
    np.testing.assert_array_equal(got_rows, tv.T[:, 2:10][iv.T])
    want = cv.transpose(1, 0, 2).copy()
    want[:, 4:7] = nv.transpose(1, 0, 2)
    np.testing.assert_array_equal(got_cache, want)


def test_decode_step_with_a_kv_cache():
    # One token: the new key and value enter the caches at a run-time position, and the query
    # attends to the cache's valid prefix through an additive mask (0 or -inf per slot).
    heads, slots, dim = 2, 24, 16
    b = metile.GraphBuilder()
    q = b.input("q", spec((heads, 1, dim)))
    k_cache = b.input("k_cache", spec((heads, slots, dim)))
    v_cache = b.input("v_cache", spec((heads, slots, dim)))
    k_new = b.input("k_new", spec((heads, 1, dim)))
    v_new = b.input("v_new", spec((heads, 1, dim)))
    position = b.input("position", spec((1,), "i32"))
    mask = b.input("mask", spec((1, slots)))
    keys = b.cache_update(k_cache, k_new, position)
    values = b.cache_update(v_cache, v_new, position)
    scores = b.add(b.scale(b.matmul(q, b.transpose(keys)), dim ** -0.5), mask)
    out = b.matmul(b.softmax(scores), values)
    run, report = compiled(b, [out, keys, values])
    assert sum(k["form"] == "cache_update" for k in report["kernels"]) == 2
    qv, kc, vc, kn, vn = (randn(*s) for s in ((heads, 1, dim), (heads, slots, dim),
                                              (heads, slots, dim), (heads, 1, dim),
                                              (heads, 1, dim)))
    p = 9
    mv = np.where(np.arange(slots) <= p, 0.0, -np.inf).astype(np.float32)[None]
    got, got_k, got_v = run(qv, kc, vc, kn, vn, np.array([p], np.int32), mv)
    kc[:, p:p + 1], vc[:, p:p + 1] = kn, vn
    np.testing.assert_array_equal(got_k, kc)
    np.testing.assert_array_equal(got_v, vc)
    s = qv.astype(np.float64) @ kc.transpose(0, 2, 1) / np.sqrt(dim) + mv
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(got, (e / e.sum(-1, keepdims=True)) @ vc, rtol=1e-5, atol=1e-5)


def test_views_off_copies_every_view_op():
    b = metile.GraphBuilder()
    a = b.input("a", spec((7, 20)))
    w = b.input("w", spec((9, 20)))
    graph = b.build([b.matmul(b.reshape(a, (7, 20)), b.transpose(w))])
    run = metile.plan_graph_fusion(graph).compile(views=False)
    report = json.loads(run.explain())
    assert sorted(k["form"] for k in report["kernels"]) == ["copy", "matmul", "transpose"]
    assert report["views"] == {}
    av, wv = randn(7, 20), randn(9, 20)
    (got,) = run(av, wv)
    np.testing.assert_allclose(got, av @ wv.T, rtol=1e-5, atol=1e-5)


def test_reshape_of_a_row_slice_keeps_its_offset():
    b = metile.GraphBuilder()
    x = b.input("x", spec((5, 12)))
    w = b.input("w", spec((4, 7)))
    rows = b.reshape(b.slice(x, 0, 2, 4), (6, 4))  # rows 2 and 3: contiguous, offset 24
    run, report = compiled(b, [b.matmul(rows, w)])
    assert report["views"]["%3"] == "%x, offset 24, strides (4, 1)"
    xv, wv = randn(5, 12), randn(4, 7)
    (got,) = run(xv, wv)
    np.testing.assert_allclose(got, xv[2:4].reshape(6, 4) @ wv, rtol=1e-5, atol=1e-5)
