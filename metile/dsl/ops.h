// The free functions of the C++ eDSL: geometry, tile construction, math, memory,
// reductions and SIMD collectives. Names follow the Python language (DESIGN "Python API").
// Each takes a trailing `Here` that defaults to the caller's source line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/dsl/value.h"

namespace metile::dsl {

using Shape = std::vector<int64_t>;
using ThreadLayout = ir::ThreadLayout;

// ---- geometry (i32 scalars) ------------------------------------------------------------
Scalar program_id(int axis = 0, Here here = Here::current());
Scalar num_programs(int axis = 0, Here here = Here::current());
Scalar thread_id(int axis = 0, Here here = Here::current());

// ---- tile construction -------------------------------------------------------------------
// The i32 tile start, ..., end - 1; end - start must be a power of two.
Tile arange(int64_t start, int64_t end, Here here = Here::current());
// The same, owned as `layout` says (seed 004); the layout's size is end - start.
Tile arange(int64_t start, int64_t end, const ThreadLayout& layout, Here here = Here::current());
Tile zeros(const Shape& shape, DType dtype, Here here = Here::current());
Tile full(const Shape& shape, double value, DType dtype, Here here = Here::current());
// A tile whose every element is the scalar `value`.
Tile splat(const Value& value, const Shape& shape, Here here = Here::current());
// Inserts a dimension of size 1 at `axis` (1-D to 2-D); col(t) = t[:, None], row(t) = t[None, :].
Tile expand_dims(const Value& tile, int axis, Here here = Here::current());
Tile col(const Value& tile, Here here = Here::current());
Tile row(const Value& tile, Here here = Here::current());
Tile broadcast_to(const Value& value, const Shape& shape, Here here = Here::current());
// The same logical tile, owned as `layout` says: the values move between threads, the logical
// indices stay.
Tile convert_layout(const Value& tile, const ThreadLayout& layout, Here here = Here::current());

// ---- elementwise ---------------------------------------------------------------------------
Value cast(const Value& value, DType dtype, Here here = Here::current());
// a where c is true, else b; numbers adopt the other choice's dtype.
Value where(const Value& cond, const Operand& a, const Operand& b, Here here = Here::current());
Value minimum(const Operand& a, const Operand& b, Here here = Here::current());
Value maximum(const Operand& a, const Operand& b, Here here = Here::current());
Value min(const Operand& a, const Operand& b, Here here = Here::current());
Value max(const Operand& a, const Operand& b, Here here = Here::current());
// Integer division rounding toward negative infinity (Python //).
Value floordiv(const Operand& a, const Operand& b, Here here = Here::current());

// Floating-point math; the fast_ forms allow the target's fast approximation.
Value exp(const Value& x, Here here = Here::current());
Value exp2(const Value& x, Here here = Here::current());
Value log(const Value& x, Here here = Here::current());
Value sqrt(const Value& x, Here here = Here::current());
Value rsqrt(const Value& x, Here here = Here::current());
Value tanh(const Value& x, Here here = Here::current());
Value sin(const Value& x, Here here = Here::current());
Value cos(const Value& x, Here here = Here::current());
Value abs(const Value& x, Here here = Here::current());  // integers too
Value fast_exp(const Value& x, Here here = Here::current());
Value fast_exp2(const Value& x, Here here = Here::current());
Value fast_log(const Value& x, Here here = Here::current());
Value fast_sqrt(const Value& x, Here here = Here::current());
Value fast_rsqrt(const Value& x, Here here = Here::current());
Value fast_tanh(const Value& x, Here here = Here::current());
Value fast_sin(const Value& x, Here here = Here::current());
Value fast_cos(const Value& x, Here here = Here::current());

// ---- memory ------------------------------------------------------------------------------
// *ptr; where `mask` is false the result is `other` (default 0) and memory is not touched.
// An empty mask means none: `load(p, {}, 1.0f)` is an error, 'other' needs a mask.
// `eviction_policy` is Triton's: "", "evict_first" or "evict_last" (a cache hint for CUDA).
Value load(const Value& ptr, const Value& mask = Value(), const Operand& other = Operand(),
           const std::string& eviction_policy = "", Here here = Here::current());
// *ptr = value where `mask` is true; a number adopts the pointee dtype.
void store(const Value& ptr, const Operand& value, const Value& mask = Value(),
           const std::string& eviction_policy = "", Here here = Here::current());
// A threadgroup allocation of `size` elements.
Ptr shared(int64_t size, DType dtype, Here here = Here::current());

// ---- reductions, collectives, synchronisation -----------------------------------------------
// All elements of a tile combined into one scalar.
Scalar sum(const Value& tile, Here here = Here::current());
Scalar max(const Value& tile, Here here = Here::current());
Scalar min(const Value& tile, Here here = Here::current());
// A 2-D tile combined along `axis` (0 or 1) into the 1-D tile of the other dimension:
// sum_axis(t, 1) of [M, N] is [M] (Triton's tl.sum(t, axis=1)). Not overloads of sum/max/min:
// max(a, 2) is the elementwise maximum.
Tile sum_axis(const Value& tile, int axis, Here here = Here::current());
Tile max_axis(const Value& tile, int axis, Here here = Here::current());
Tile min_axis(const Value& tile, int axis, Here here = Here::current());

// acc + a @ b: a [M, K], b [K, N] of one float dtype, acc f32 [M, N] (ops.def `dot`);
// precision "ieee", "tf32" or "" (the kernel's math mode decides).
Tile dot(const Value& a, const Value& b, const Value& acc, const std::string& precision = "",
         Here here = Here::current());

// Per-thread scalars across the SIMD group.
Scalar simd_sum(const Value& x, Here here = Here::current());
Scalar simd_max(const Value& x, Here here = Here::current());
Scalar simd_min(const Value& x, Here here = Here::current());
Scalar simd_shuffle(const Value& x, const Operand& lane, Here here = Here::current());
Scalar simd_shuffle_xor(const Value& x, const Operand& mask, Here here = Here::current());
Scalar simd_broadcast(const Value& x, const Operand& lane, Here here = Here::current());
// x of lane (this lane + delta); lanes past the end of the SIMD group keep their own x.
Scalar simd_shuffle_down(const Value& x, const Operand& delta, Here here = Here::current());

// Every thread of the threadgroup waits here; memory written before is visible after.
void barrier(Here here = Here::current());

}  // namespace metile::dsl
