// Hand-written MSL kernels in the emitter's form (body function + kernel entry, see
// metile/codegen/kernel_abi.h), with their ABIs. Each is compiled once per process
// (and cached on disk across processes).
#pragma once

#include <string>

#include "metile/runtime/compiled_kernel.h"
#include "metile/runtime/devices.h"

namespace metile::runtime::testing {

// out[i] = a[i] + b[i] for i < n; 256 threads per threadgroup.
const CompiledKernel& vector_add_kernel();
// Same, but the mask is i <= n: writes one element past the end.
const CompiledKernel& vector_add_off_by_one_kernel();
// Per row of x[rows][cols]: sum and max, 128 threads, threadgroup scratch + barriers +
// simd_sum / simd_max.
const CompiledKernel& row_reduce_kernel();
// Every SIMD permutation function on 64 threads; writes 8 results per thread.
const CompiledKernel& simd_ops_kernel();
// Mixed half / bfloat / float arithmetic and math.
const CompiledKernel& half_bfloat_kernel();
// i8 and u8 buffers and scalars (64 threads): out[i] = x[i] + bias wrapping in 8 bits,
// out_u[i] = uchar(x[i]) ^ mask.
const CompiledKernel& bytes_kernel();
// Threads >= 16 of threadgroup 1 return before a threadgroup_barrier.
const CompiledKernel& divergent_barrier_kernel();
// Lanes 0-7 call simd_sum while the others call simd_max.
const CompiledKernel& mismatched_collective_kernel();
// convert_layout's two exchanges as lowering emits them, but conditional, which lowering never
// emits (verify_scratch rejects it): the threadgroup scratch exchange (store, publication
// barrier, load, release barrier) run by the first SIMD group of two only, and the
// simd_shuffle exchange run by half a SIMD group.
const CompiledKernel& conditional_scratch_exchange_kernel();
const CompiledKernel& conditional_shuffle_exchange_kernel();
// A 48-thread threadgroup whose second SIMD group shuffles with lane ^ 16.
const CompiledKernel& partial_simd_group_kernel();
// Writes threadgroup memory one float past its 64 bytes.
const CompiledKernel& threadgroup_overflow_kernel();
// 64 threads store scratch[t] = t, then read their neighbour's scratch[(t + 1) % 64] with
// nothing between (a race), a threadgroup barrier, or (neighbours within the SIMD group)
// a SIMD-group barrier.
enum class Sync { None, Threadgroup, SimdGroup };
const CompiledKernel& neighbour_exchange_kernel(Sync sync);
// On 32 threads, by op: out[t] = (t + 100) / d, (t + 1) << d, or (INT_MIN + t) / d.
const CompiledKernel& checked_integer_kernel();
// An 8x4 threadgroup that records every thread's coordinates.
const CompiledKernel& coordinates_kernel();
// d = a * b + c with simdgroup 8x8 matrices; also records each lane's thread_elements.
const CompiledKernel& simdgroup_matmul_kernel();

// A thread whose 160 KB local array overflows its fiber stack.
const CompiledKernel& stack_hog_kernel();

// out[i] = precise::exp(x[i]) for i < n; 256 threads.
const CompiledKernel& exp_kernel();

// The MSL source of the vector_add kernel (for compiler tests).
std::string vector_add_msl();
codegen::KernelABI vector_add_abi();

}  // namespace metile::runtime::testing
