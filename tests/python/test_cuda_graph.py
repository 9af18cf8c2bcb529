"""meTile launches inside torch.cuda.graph capture, as a decode loop records them: warmed up
(compiled) before the capture, queued on the capturing stream without waiting, allocating or
reading back, and replayed with new values copied into the captured tensors. Needs torch
with CUDA and the cuda device; skipped elsewhere."""

import pytest

import metile


@metile.kernel
def add(x, y, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask),
                 mask)


@metile.kernel
def scale_rows(x, out, columns, scale, BLOCK: metile.constexpr):
    row = metile.program_id(0)
    offsets = metile.arange(0, BLOCK)
    mask = offsets < columns
    values = metile.load(x + row * columns + offsets, mask)
    metile.store(out + row * columns + offsets, values * scale, mask)


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if metile.device() != "cuda" or not torch.cuda.is_available():
        pytest.skip("needs the cuda device and torch with CUDA")
    return torch


def _warm_up(torch, launches):
    """Runs each launch once on a side stream, as torch asks before a capture: the kernels
    are traced and compiled here, never inside the capture."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for launch in launches:
            launch()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()


def test_two_launches_captured_in_a_cuda_graph_replay_with_new_inputs():
    torch = _torch_cuda()
    rows, columns, block = 6, 100, 128
    n = rows * columns
    generator = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(n, device="cuda", generator=generator)
    y = torch.randn(n, device="cuda", generator=generator)
    total = torch.empty(n, device="cuda")
    out = torch.empty(rows, columns, device="cuda")

    # A plain call and a prepared dispatch, the second reading what the first wrote.
    def first():
        add[(metile.cdiv(n, block),)](x, y, total, n, BLOCK=block)

    second = scale_rows[(rows,)].prepare(total, out, columns, 0.5, BLOCK=block)
    _warm_up(torch, [first, second])
    torch.testing.assert_close(out.flatten(), (x + y) * 0.5)
    compiles = (add.stats.compiles, scale_rows.stats.compiles)

    out.fill_(float("nan"))
    total.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        first()
        second()
    torch.cuda.synchronize()
    # Captured, not run: the launches went on the capturing stream.
    assert torch.isnan(out).all() and torch.isnan(total).all()
    assert (add.stats.compiles, scale_rows.stats.compiles) == compiles

    for step in range(4):
        x.copy_(torch.randn(n, device="cuda", generator=generator))
        y.copy_(torch.full((n,), float(step), device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(total, x + y)
        torch.testing.assert_close(out.flatten(), (x + y) * 0.5)


def test_a_captured_launch_runs_on_every_replay_and_between_eager_launches():
    torch = _torch_cuda()
    n, block = 1000, 256
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    out = torch.zeros(n, device="cuda")

    def accumulate():  # out += x, reading and writing the captured tensor
        add[(metile.cdiv(n, block),)](out, x, out, n, BLOCK=block)

    _warm_up(torch, [accumulate])
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        accumulate()
    out.zero_()
    for _ in range(3):
        graph.replay()
    accumulate()  # an eager launch on the current stream, ordered after the replays
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 5 * x)
