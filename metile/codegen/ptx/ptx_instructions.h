// The PTX instructions meTile writes, in one table: the PTX renderer (ptx_renderer.h) emits
// them as instructions, the CUDA dialect (cuda/cuda_dialect.cc) wraps the same strings in
// inline asm, so a spelling (an approximation, a cache policy, a shuffle mode) is decided once.
#pragma once

#include <string>
#include <string_view>

#include "metile/ir/types.h"

namespace metile::codegen::ptx {

// The PTX ISA version and target the renderer declares; sm_90 is the H200.
inline constexpr std::string_view kVersion = "8.0";
inline constexpr std::string_view kTarget = "sm_90";

// The typed suffix of dtype t for arithmetic ("f32", "s32", "u32", "s64"), its bit-size suffix
// for moves and bitwise ops ("b32", "b64"), and the register type (".f32", ".pred", ...).
// Empty for a dtype the restricted subset does not hold (f16, bf16, i8, u8).
std::string_view arithmetic_suffix(ir::DType t);
std::string_view bits_suffix(ir::DType t);
std::string register_type(ir::DType t);

// ex2.approx of a float, flushing denormal results to zero when `ftz` (the fast variant of
// exp and exp2; __expf's and Triton's exp scale by log2(e) first).
std::string ex2_approx(bool ftz);
inline constexpr std::string_view kLog2E = "0f3FB8AA3B";  // 1.4426950408889634 as f32 bits
inline constexpr std::string_view kLn2 = "0f3F317218";    // 0.6931471805599453 as f32 bits

// A warp shuffle of a 32-bit value: mode is "bfly" (xor), "idx" (a lane), "down"; `clamp` is
// PTX's c operand (0x1f: the whole warp for bfly, idx and down).
std::string shuffle(std::string_view mode);
inline constexpr std::string_view kFullWarpMask = "0xffffffff";
inline constexpr std::string_view kWarpClamp = "0x1f";

// Barriers: every thread of the CTA (orders shared and global memory for the CTA, as
// __syncthreads does), and every thread of the warp (__syncwarp).
inline constexpr std::string_view kCtaBarrier = "bar.sync 0";
inline constexpr std::string_view kWarpBarrier = "bar.warp.sync -1";

// Conversions between f32 and the 16-bit float formats (the CUDA dialect's half and bfloat).
inline constexpr std::string_view kF32ToF16 = "cvt.rn.f16.f32";
inline constexpr std::string_view kF16ToF32 = "cvt.f32.f16";
inline constexpr std::string_view kF32ToBf16 = "cvt.rn.bf16.f32";

}  // namespace metile::codegen::ptx
