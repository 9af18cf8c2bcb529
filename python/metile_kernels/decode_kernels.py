"""The decode matmul's kernels (decode_gemm.py plans and launches them; docs/decode_gemm.md):
``gemv`` and ``split_k`` compute one K split of epilogue(x [M, K] @ weight [K, N]) and either
apply the epilogue (one split) or hand the partial sum to a reduction (REDUCE "atomic",
"two_pass" or "last_split"); ``finish`` is the second pass of the first two.
"""

import metile

ACTIVATIONS = (None, "relu", "silu", "gelu_tanh")
REDUCTIONS = ("atomic", "two_pass", "last_split")
TAIL_UNROLL = 8  # slices the last split reads at once
SPLIT_STEP = 16  # slices finish reads at once


def _activate(value, ACTIVATION):
    """ACTIVATION of an f32 tile (traced inside a kernel)."""
    if ACTIVATION is None:
        return value
    if ACTIVATION == "relu":
        return metile.maximum(value, 0.0)
    if ACTIVATION == "silu":
        return value / (1.0 + metile.exp(-value))
    if ACTIVATION == "gelu_tanh":
        inner = 0.7978845608028654 * (value + 0.044715 * value * value * value)
        return 0.5 * value * (1.0 + metile.tanh(inner))
    raise ValueError(f"decode_gemm: activation must be one of {ACTIVATIONS}, got {ACTIVATION!r}")


def _epilogue(value, bias, residual, rows, columns, row, column, ACTIVATION):
    """activation(value + bias) + residual in f32 at (row, column) (traced inside a kernel)."""
    if bias is not None:
        b = metile.tensor(bias, shape=(columns,), access="read")
        value = value + b.load((column,)).to("f32")
    value = _activate(value, ACTIVATION)
    if residual is not None:
        r = metile.tensor(residual, shape=(rows, columns), access="read")
        value = value + r.load((row, column)).to("f32")
    return value


def _finish_or_reduce(total, bias, residual, output, partials, counters, rows, columns, row,
                      column, split, ACTIVATION, REDUCE):
    """The end of a split: the epilogue and the store when there is one split (REDUCE None),
    else the partial sum into the workspace, and for last_split the reduction by the split
    that stores last (traced inside a kernel)."""
    if REDUCE is None:
        value = _epilogue(total, bias, residual, rows, columns, row, column, ACTIVATION)
        c = metile.tensor(output, shape=(rows, columns), access="write")
        c.store((row, column), value)
    elif REDUCE == "last_split":
        _reduce_by_the_last_split(total, bias, residual, output, partials, counters, rows,
                                  columns, row, column, split, ACTIVATION)
    elif REDUCE == "atomic":
        inside = (row < rows) & (column < columns)
        # Relaxed: the sums are read by the next launch, which the kernel boundary orders.
        metile.atomic_add(partials + row * columns + column, total, mask=inside, sem="relaxed")
    elif REDUCE == "two_pass":
        # Bounded per slice: a tile's rows past M must not reach the next split's slice.
        p = metile.tensor(partials, shape=(metile.num_programs(2), rows, columns),
                          access="write")
        p.store((split, row, column), total)
    else:
        raise ValueError(f"decode_gemm: REDUCE must be None or one of {REDUCTIONS}, got "
                         f"{REDUCE!r}")


@metile.kernel
def _reduce_by_the_last_split(total, bias, residual, output, partials, counters, rows, columns,
                              row, column, split, ACTIVATION):
    """One launch, no second pass: each element's partial is stored in its split's slice, then
    an acq_rel ticket on the element's counter tells the split that arrives last, which sums the
    slices in order (the acquire makes the other splits' stores visible), applies the
    epilogue, stores the output and resets the counter for the next call (traced inside a
    kernel; a kernel itself so that its loop is traced). Each element is its own thread's: no
    barrier is needed."""
    splits = metile.num_programs(2)
    inside = (row < rows) & (column < columns)
    at = row * columns + column
    metile.store(partials + split * rows * columns + at, total, mask=inside)
    ticket = metile.atomic_add(counters + at, 1, mask=inside, sem="acq_rel")
    last = inside & (ticket == splits - 1)
    reduced = total * 0.0
    for s0 in metile.tile_range(0, splits, TAIL_UNROLL):
        for j in metile.static_range(TAIL_UNROLL):  # loads in flight together: a short tail
            s = s0 + j
            reduced += metile.load(partials + s * rows * columns + at, mask=last & (s < splits),
                                   other=0.0)
    value = _epilogue(reduced, bias, residual, rows, columns, row, column, ACTIVATION)
    metile.store(output + at, value.to(output.dtype.element_ty), mask=last)
    metile.store(counters + at, 0, mask=last)


def _activation_row(x, row, rows, inner, clamped, live):
    """x[row, clamped] in f32, 0 where ``live`` is false (past K); the row is clamped into x
    so that no load needs a mask (traced inside a kernel)."""
    xk = metile.load(x + metile.minimum(row, rows - 1) * inner + clamped).to("f32")
    return metile.where(live, xk, 0.0)


@metile.kernel
def gemv(x, weight, bias, residual, output, partials, counters, rows, columns, inner, chunk,
         ACTIVATION: metile.constexpr, REDUCE: metile.constexpr, BLOCK_N: metile.constexpr,
         UNROLL: metile.constexpr, ROWS: metile.constexpr, EVEN_N: metile.constexpr):
    """Grid (cdiv(rows, ROWS), cdiv(columns, BLOCK_N), splits): ROWS (1, 2 or 4) activation
    rows from program_id(0) * ROWS and BLOCK_N columns over K chunk program_id(2) (``chunk``
    rows, a multiple of UNROLL). Every tile is 1-D and no value moves between threads, so the
    compiler gives each thread runs of adjacent columns (docs/lowering.md, "Ownership") and
    reads each run of a weight row as one 16-byte vector, once for the ROWS rows; a K step
    reads UNROLL weight rows, their loads independent of each other."""
    if ROWS not in (1, 2, 4):
        raise ValueError(f"gemv: ROWS must be 1, 2 or 4, got {ROWS}")
    first = metile.program_id(0) * ROWS
    column = metile.program_id(1) * BLOCK_N + metile.arange(0, BLOCK_N)
    inside = None if EVEN_N else column < columns
    split = metile.program_id(2)
    acc0 = metile.zeros((BLOCK_N,), dtype="f32")
    acc1 = metile.zeros((BLOCK_N,), dtype="f32")
    acc2 = metile.zeros((BLOCK_N,), dtype="f32")
    acc3 = metile.zeros((BLOCK_N,), dtype="f32")
    for k in metile.tile_range(split * chunk, split * chunk + chunk, UNROLL):
        for j in metile.static_range(UNROLL):
            # Past K the loads read row K - 1 and the activation counts as 0: no load has a
            # mask that changes with K, so none waits behind a branch.
            clamped = metile.minimum(k + j, inner - 1)
            live = k + j < inner
            w = metile.load(weight + clamped * columns + column, mask=inside).to("f32")
            acc0 += w * _activation_row(x, first, rows, inner, clamped, live)
            if ROWS > 1:
                acc1 += w * _activation_row(x, first + 1, rows, inner, clamped, live)
            if ROWS > 2:
                acc2 += w * _activation_row(x, first + 2, rows, inner, clamped, live)
                acc3 += w * _activation_row(x, first + 3, rows, inner, clamped, live)
    for r, acc in ((0, acc0), (1, acc1), (2, acc2), (3, acc3))[:ROWS]:
        _finish_or_reduce(acc, bias, residual, output, partials, counters, rows, columns,
                          first + r, column, split, ACTIVATION, REDUCE)


@metile.kernel
def split_k(x, weight, bias, residual, output, partials, counters, rows, columns, inner, chunk,
            ACTIVATION: metile.constexpr, REDUCE: metile.constexpr, BLOCK_M: metile.constexpr,
            BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    """Grid (cdiv(rows, BLOCK_M), cdiv(columns, BLOCK_N), splits): the [BLOCK_M, BLOCK_N] tile
    of x @ weight over K chunk program_id(2), by ``metile.dot``."""
    a = metile.tensor(x, shape=(rows, inner), access="read")
    b = metile.tensor(weight, shape=(inner, columns), access="read")
    row = metile.program_id(0) * BLOCK_M + metile.arange(0, BLOCK_M)
    column = metile.program_id(1) * BLOCK_N + metile.arange(0, BLOCK_N)
    split = metile.program_id(2)
    ks = metile.arange(0, BLOCK_K)
    acc = metile.zeros((BLOCK_M, BLOCK_N), dtype="f32")
    for k in metile.tile_range(split * chunk, split * chunk + chunk, BLOCK_K):
        acc = metile.dot(a.load((row[:, None], (k + ks)[None, :])),
                         b.load(((k + ks)[:, None], column[None, :])), acc)
    _finish_or_reduce(acc, bias, residual, output, partials, counters, rows, columns,
                      row[:, None], column[None, :], split, ACTIVATION, REDUCE)


@metile.kernel
def finish(partials, bias, residual, output, rows, columns, splits, ACTIVATION: metile.constexpr,
           BLOCK: metile.constexpr, ZERO: metile.constexpr = False):
    """Grid (rows, cdiv(columns, BLOCK)): the sum of the ``splits`` [rows, columns] f32 slices of
    ``partials`` (in a fixed order), then the epilogue, rounded once to the output's dtype.
    With ZERO (the atomics' one slice) the slice is zeroed once read, ready for the next call's
    atomics: no separate clearing launch."""
    p = metile.tensor(partials, shape=(splits, rows, columns),
                      access="read_write" if ZERO else "read")
    row = metile.program_id(0)
    column = metile.program_id(1) * BLOCK + metile.arange(0, BLOCK)
    steps = metile.arange(0, SPLIT_STEP)
    # SPLIT_STEP slices a step, summed across threads once at the end: the loads of a step are
    # in flight together, where one slice a step would wait for each in turn.
    block = metile.zeros((SPLIT_STEP, BLOCK), dtype="f32")
    for split in metile.tile_range(0, splits, SPLIT_STEP):
        block += p.load(((split + steps)[:, None], row, column[None, :]))
    total = metile.sum(block, axis=0)
    if ZERO:
        p.store((0, row, column), metile.zeros((BLOCK,), dtype="f32"))
    value = _epilogue(total, bias, residual, rows, columns, row, column, ACTIVATION)
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row, column), value)
