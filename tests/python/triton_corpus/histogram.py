"""Histograms, as torch.histc-style kernels write them in Triton: each program bins BLOCK
values of [lo, hi) into NUM_BINS equal bins and counts them with
`tl.atomic_add(hist_ptr + bins, 1, mask=mask)` on i32 counters (many programs, few bins:
every counter is contended); and the same count of integer values in [0, NUM_BINS) with
`tl.histogram(x, NUM_BINS)` per block (Triton 3.x's block histogram, whose padding lanes
are counted in bin 0 and taken back out), added to the global counters by one vector
`tl.atomic_add`."""
import triton
import triton.language as tl


@triton.jit
def histogram_atomic_kernel(x_ptr, hist_ptr, n_elements, lo, hi, NUM_BINS: tl.constexpr,
                            BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    bins = ((x - lo) * (NUM_BINS / (hi - lo))).to(tl.int32)
    bins = tl.minimum(tl.maximum(bins, 0), NUM_BINS - 1)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)


@triton.jit
def histogram_block_kernel(x_ptr, hist_ptr, n_elements, NUM_BINS: tl.constexpr,
                           BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0)
    counts = tl.histogram(x, NUM_BINS)
    bins = tl.arange(0, NUM_BINS)
    padding = BLOCK - tl.sum(mask.to(tl.int32), axis=0)
    counts = counts - tl.where(bins == 0, padding, 0)
    tl.atomic_add(hist_ptr + bins, counts)
