"""In-place cache_update (issue 29): a decode step writes its new key and value rows into the
KV caches where they live (no copy of the cache), checked against numpy on the host over
several steps, with the misuses that would make it wrong refused by name."""

import json

import numpy as np
import pytest

import metile

RNG = np.random.default_rng(31)


def spec(shape, dtype="f32"):
    return metile.TensorSpec(shape, dtype)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


HEADS, SLOTS, DIM = 2, 24, 20  # DIM: a ragged row for the kernel's 32-lane block


def decode_step():
    b = metile.GraphBuilder()
    q = b.input("q", spec((HEADS, 1, DIM)))
    k_cache = b.input("k_cache", spec((HEADS, SLOTS, DIM)))
    v_cache = b.input("v_cache", spec((HEADS, SLOTS, DIM)))
    k_new = b.input("k_new", spec((HEADS, 1, DIM)))
    v_new = b.input("v_new", spec((HEADS, 1, DIM)))
    position = b.input("position", spec((1,), "i32"))
    mask = b.input("mask", spec((1, SLOTS)))
    keys = b.cache_update(k_cache, k_new, position, in_place=True)
    values = b.cache_update(v_cache, v_new, position, in_place=True)
    scores = b.add(b.scale(b.matmul(q, b.transpose(keys)), DIM ** -0.5), mask)
    return b.build([b.matmul(b.softmax(scores), values)])


def attend(q, kc, vc, mask):
    s = q.astype(np.float64) @ kc.transpose(0, 2, 1) / np.sqrt(DIM) + mask
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ vc


@pytest.mark.parametrize("as_buffers", [False, True])
def test_decode_steps_write_the_caches_in_place(as_buffers):
    run = metile.plan_graph_fusion(decode_step()).compile()
    report = json.loads(run.explain())
    writes = [k for k in report["kernels"] if k["form"] == "cache_update"]
    assert len(writes) == 2
    assert writes[0]["decision"] == ("in place: the 1 new rows written into %k_cache's buffer at "
                                     "[position, position + 1), one row per program; the cache "
                                     "is not copied")
    assert writes[0]["grid"] == [HEADS, 1, 1]
    # No intermediate holds a cache: the attention reads the caches' own buffers.
    cache_bytes = HEADS * SLOTS * DIM * 4
    assert report["intermediates"]["bytes"] < cache_bytes
    assert run.compiled.in_place_inputs == ["k_cache", "v_cache"]

    kc, vc = randn(HEADS, SLOTS, DIM), randn(HEADS, SLOTS, DIM)
    want_k, want_v = kc.copy(), vc.copy()
    caches = (metile.Buffer(data=kc), metile.Buffer(data=vc)) if as_buffers else (kc, vc)
    for p in (9, 10, 23):
        q, kn, vn = randn(HEADS, 1, DIM), randn(HEADS, 1, DIM), randn(HEADS, 1, DIM)
        mask = np.where(np.arange(SLOTS) <= p, 0.0, -np.inf).astype(np.float32)[None]
        (got,) = run(q, *caches, kn, vn, np.array([p], np.int32), mask)
        want_k[:, p:p + 1], want_v[:, p:p + 1] = kn, vn
        np.testing.assert_allclose(got, attend(q, want_k, want_v, mask), rtol=1e-5, atol=1e-5)
        k_now, v_now = (c.numpy() for c in caches) if as_buffers else caches
        np.testing.assert_array_equal(k_now, want_k)  # every other row untouched
        np.testing.assert_array_equal(v_now, want_v)


def test_in_place_needs_a_graph_input():
    b = metile.GraphBuilder()
    cache = b.input("cache", spec((2, 8, 4)))
    new = b.input("new", spec((2, 1, 4)))
    position = b.input("position", spec((1,), "i32"))
    with pytest.raises(metile.CompilationError,
                       match=r"cache_update: in_place writes the cache where it lives, so the "
                             r"cache must be a graph input; %3 is an op's result, in "
                             r"%4 = cache_update\(%3, %new, %position\)"):
        b.cache_update(b.scale(cache, 2.0), new, position, in_place=True)


def misuse(kind):
    b = metile.GraphBuilder()
    cache = b.input("cache", spec((2, 8, 4)))
    new = b.input("new", spec((2, 1, 4)))
    position = b.input("position", spec((1,), "i32"))
    w = b.input("w", spec((4, 4)))
    updated = b.cache_update(cache, new, position, in_place=True)
    if kind == "old cache read":
        return b.build([b.matmul(updated, w), b.matmul(cache, w)])
    if kind == "output":
        return b.build([updated])
    return b.build([b.exp(updated)])


@pytest.mark.parametrize("kind, message", [
    ("old cache read", r"the in-place %4 = cache_update writes %cache where it lives, but "
                       r"%6 = matmul reads it too \(and would see the new rows\)"),
    ("output", r"the in-place %4 = cache_update's result is a graph output; it is the buffer of "
               r"%cache, which the run updates: read that instead"),
    ("row reader", r"the in-place %4 = cache_update's result \(the buffer of %cache\) is read by "
                   r"%5 = exp, which loads contiguous rows of its own buffers; not supported"),
])
def test_in_place_misuses_are_named(kind, message):
    plan = metile.plan_graph_fusion(misuse(kind))
    with pytest.raises(metile.CompilationError, match=message):
        plan.compile()


def test_measured_dispatch_refuses_in_place_updates():
    plan = metile.plan_graph_fusion(decode_step())
    with pytest.raises(metile.NotSupportedError, match="writes its cache in place"):
        plan.compile(dispatch="measured")
