"""meTile quick start: four Python kernels on the default device (the host emulator).

For each kernel: its name, the geometry the compiler chose (threads per threadgroup,
threadgroup memory), the largest error against numpy, and PASS or FAIL.

    python examples/quickstart.py
"""

import sys

import numpy as np

import metile


@metile.kernel
def vector_add(x, y, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask),
                 mask)


@metile.kernel
def softmax(x_ptr, out_ptr, n_cols, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    x_row = x_ptr + row * n_cols
    m = -1e38  # a Python number; the loop makes it a tile of BLOCK running maxima
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=-1e38)
        m = metile.maximum(m, x)
    m = metile.max(m)
    total = 0.0
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols, other=-1e38)
        total = total + metile.exp(x - m)
    total = metile.sum(total)
    for start in metile.tile_range(0, n_cols, BLOCK):
        cols = start + metile.arange(0, BLOCK)
        x = metile.load(x_row + cols, mask=cols < n_cols)
        metile.store(out_ptr + row * n_cols + cols, metile.exp(x - m) / total, mask=cols < n_cols)


@metile.kernel
def layer_norm(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    cols = metile.arange(0, BLOCK)
    mask = cols < n_cols
    x = metile.load(x_ptr + row * n_cols + cols, mask=mask)
    count = n_cols.to(metile.float32)
    mean = metile.sum(x) / count
    centered = metile.where(mask, x - mean, 0.0)
    rstd = metile.rsqrt(metile.sum(centered * centered) / count + eps)  # eps: a runtime f32
    y = centered * rstd * metile.load(w_ptr + cols, mask=mask) + metile.load(b_ptr + cols, mask=mask)
    metile.store(out_ptr + row * n_cols + cols, y, mask=mask)


@metile.kernel
def tile_copy_scaled(src, dst, rows, cols, factor, BR: metile.constexpr, BC: metile.constexpr):
    # Descriptors know the logical extent: tiles that run past it are masked.
    source = metile.tensor(src, shape=(rows, cols), access="read")
    target = metile.tensor(dst, shape=(rows, cols), access="write")
    r = metile.program_id(0) * BR + metile.arange(0, BR)
    c = metile.program_id(1) * BC + metile.arange(0, BC)
    target.store((r[:, None], c[None, :]), source.load((r[:, None], c[None, :])) * factor)


def report(name, dispatch, got, expected, tolerance):
    geometry = dispatch.execution_report["geometry"]
    threads = geometry["threads_per_threadgroup"][0]
    tg_bytes = dispatch.execution_report.get("threadgroup_bytes", 0)
    error = float(np.max(np.abs(got - expected))) if expected.size else 0.0
    ok = error <= tolerance
    print(f"{name:18s} threads={threads:<5d} threadgroup_bytes={tg_bytes:<6d} "
          f"max_error={error:.2e}  {'PASS' if ok else 'FAIL'}")
    return ok


def main():
    rng = np.random.default_rng(0)
    results = []

    n = 10_000
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = metile.Buffer.zeros(n)
    d = vector_add[(metile.cdiv(n, 256),)].prepare(
        metile.Buffer(data=x), metile.Buffer(data=y), out, n, BLOCK=256)
    d()
    results.append(report("vector_add", d, out.numpy(), x + y, 0.0))

    rows, cols = 64, 1000
    a = rng.standard_normal((rows, cols), np.float32)
    probabilities = np.zeros_like(a)
    d = softmax[(rows,)].prepare(a, probabilities, cols, BLOCK=256)
    d()
    e = np.exp(a - a.max(1, keepdims=True))
    results.append(report("softmax", d, probabilities, e / e.sum(1, keepdims=True), 1e-6))

    w, b = rng.standard_normal(cols, np.float32), rng.standard_normal(cols, np.float32)
    normalized = np.zeros_like(a)
    eps = 1e-5
    d = layer_norm[(rows,)].prepare(a, w, b, normalized, cols, eps,
                                    BLOCK=metile.next_power_of_2(cols))
    d()
    expected = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + eps) * w + b
    results.append(report("layer_norm", d, normalized, expected, 1e-4))

    r, c = 45, 70  # 16 x 32 tiles run past both extents
    src = rng.standard_normal((r, c), np.float32)
    guarded = np.full(r * c + 256, -1.0, np.float32)  # memory after the tensor must stay -1
    d = tile_copy_scaled[(metile.cdiv(r, 16), metile.cdiv(c, 32))].prepare(
        src, guarded[: r * c], r, c, 2.0, BR=16, BC=32)
    d()
    got = np.concatenate([guarded[: r * c], guarded[r * c:]])
    expected = np.concatenate([(src * 2).ravel(), np.full(256, -1.0, np.float32)])
    results.append(report("tile_copy_scaled", d, got, expected, 0.0))

    print("all PASS" if all(results) else "some FAIL")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
