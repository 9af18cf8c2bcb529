"""Buffer and descriptor access inferred by the tracing core. tests/dsl/
access_inference_test.cc traces the same kernel shapes with the C++ eDSL and expects the
same accesses, so the two frontends agree."""

import re

import numpy as np

import metile

X = np.zeros(64, np.float32)


def param_accesses(ir):
    return [access for _, _, access in ir.params]


def descriptor_accesses(ir):
    return re.findall(r'make_tensor [^{]*\{access = "(\w+)"\}', ir.print())


@metile.kernel
def copy_add(x, y, acc, unused):
    offs = metile.arange(0, 64)
    metile.store(acc + offs, metile.load(acc + offs) + metile.load(x + offs))
    metile.store(y + offs, metile.load(x + offs))


@metile.kernel
def rows_through_offset_descriptors(x, out, n):
    row = metile.program_id(0) * n
    src = metile.tensor(x + row, shape=(n,))
    dst = metile.tensor(out + row, shape=(n,))
    cols = metile.arange(0, 64)
    dst.store(cols, src.load(cols))


@metile.kernel
def pointer_carried_through_a_loop(x, out, n):
    offs = metile.arange(0, 64)
    total = metile.zeros((64,), "f32")
    p = x
    for i in metile.tile_range(0, n, 64):
        total = total + metile.load(p + offs)
        p = p + 64
    metile.store(out + offs, total)


@metile.kernel
def declared_descriptor_access(x, n):
    t = metile.tensor(x, shape=(n,), access="read_write")
    t.load(metile.arange(0, 64))


def test_loads_read_stores_write_both_read_write_unused_read():
    ir = copy_add.trace(X, X, X, X)
    assert param_accesses(ir) == ["read", "write", "read_write", "read"]


def test_descriptors_over_an_offset_follow_their_buffer():
    ir = rows_through_offset_descriptors.trace(X, X, 64)
    assert param_accesses(ir) == ["read", "write", ""]
    assert descriptor_accesses(ir) == ["read", "write"]


def test_pointers_through_a_loop():
    ir = pointer_carried_through_a_loop.trace(X, X, 64)
    assert param_accesses(ir) == ["read", "write", ""]


def test_a_declared_descriptor_access_is_a_use_of_its_buffer():
    ir = declared_descriptor_access.trace(X, 64)
    assert param_accesses(ir) == ["read_write", ""]
    assert descriptor_accesses(ir) == ["read_write"]
