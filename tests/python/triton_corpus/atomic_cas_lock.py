"""A spin lock on `tl.atomic_cas`, the idiom of the backward pass of Triton's layer-norm
tutorial (05-layer-norm.py, `_layer_norm_bwd_dx_fused`): each program (one row) adds its row
into one of GROUP_SIZE_M partial-sum buffers, chosen by `row % GROUP_SIZE_M`, under that
buffer's lock: `while tl.atomic_cas(lock, 0, 1) == 1: pass` takes it, a counter beside the
locks says whether the buffer holds a first value yet, and `tl.atomic_xchg(lock, 0)` gives
it back. The second kernel sums the GROUP_SIZE_M partial rows into the column totals."""
import triton
import triton.language as tl


@triton.jit
def locked_partial_sum_kernel(x_ptr, partial_ptr, lock_ptr, N, stride_m,
                              GROUP_SIZE_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    lock_id = row % GROUP_SIZE_M
    lock_ptr += lock_id
    count_ptr = lock_ptr + GROUP_SIZE_M
    partial_ptrs = partial_ptr + lock_id * N + cols
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    count = tl.load(count_ptr)
    if count == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        x += tl.load(partial_ptrs, mask=mask)
    tl.store(partial_ptrs, x, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def sum_partials_kernel(partial_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(partial_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cols < N)
