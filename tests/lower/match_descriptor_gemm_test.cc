// The canonical descriptor GEMM matcher (metile/lower/match_descriptor_gemm.h) and the two
// whole-GEMM backends' matches built on it: the library's K loop matches, with its tile
// origins; match_async_gemm adds wgmma_tma's own rules (f16/bf16 operands); a loop carrying a
// second value breaks the shared recurrence rule, named the same way by both callers.
#include <gtest/gtest.h>

#include <variant>

#include "metile/dsl/dsl.h"
#include "metile/lower/lower_dot_wgmma.h"
#include "metile/lower/match_descriptor_gemm.h"
#include "metile/transform/canonicalize.h"

namespace metile::lower {
namespace {

using namespace metile::dsl;

// metile_kernels.gemm's matmul with 32 x 32 x 16 tiles, canonicalized as the pipeline does before
// matching; `second_carry` also carries a count.
ir::Kernel gemm(ir::DType operands, bool second_carry = false) {
  auto body = [&](KernelContext& k) {
    auto left = k.buffer("left", operands, "read");
    auto right = k.buffer("right", operands, "read");
    auto out = k.buffer("output", f32, "write");
    auto rows = k.scalar("rows", i32);
    auto columns = k.scalar("columns", i32);
    auto inner = k.scalar("inner", i32);
    auto a = tensor(left, {rows, inner}, {}, "read");
    auto b = tensor(right, {inner, columns}, {}, "read");
    auto c = tensor(out, {rows, columns}, {}, "write");
    auto row = program_id(0) * 32 + arange(0, 32);
    auto column = program_id(1) * 32 + arange(0, 32);
    const auto product = [&](Value start, Value& sum) {
      auto ks = start + arange(0, 16);
      sum = dot(a.load({row.col(), ks.row()}), b.load({ks.col(), column.row()}), sum);
    };
    if (!second_carry) {
      c.store({row.col(), column.row()}, tile_range(0, inner, 16, zeros({32, 32}, f32), product));
      return;
    }
    auto [acc, count] = tile_range(0, inner, 16, {zeros({32, 32}, f32), zeros({32, 32}, f32)},
                                   [&](Value start, Value& sum, Value& n) {
                                     product(start, sum);
                                     n = n + 1.0f;
                                   });
    c.store({row.col(), column.row()}, acc + count);
  };
  return transform::canonicalize(trace(second_carry ? "gemm_counting" : "gemm", body, {})).kernel;
}

TEST(MatchDescriptorGemm, TheLibraryKLoopMatchesWithItsTileOrigins) {
  const ir::Kernel k = gemm(ir::DType::f16);
  const KernelValues values(k);
  const auto found = match_descriptor_gemm(values);
  ASSERT_TRUE(std::holds_alternative<DescriptorGemm>(found)) << std::get<GemmMismatch>(found).why;
  const DescriptorGemm& m = std::get<DescriptorGemm>(found);
  EXPECT_EQ(k.body.ops[m.loop].kind, ir::OpKind::For);
  EXPECT_EQ(k.body.ops[m.store].kind, ir::OpKind::TensorStore);
  EXPECT_EQ(m.stored, m.accumulator);
  EXPECT_NE(m.row0, ir::kNoValue);
  EXPECT_NE(m.column0, ir::kNoValue);
  const KRecurrence recurrence = k_recurrence(values, k.body.ops[m.loop]);
  EXPECT_EQ(recurrence.carried, 1);
  EXPECT_EQ(recurrence.dot, m.dot);

  const schedule::AsyncGemm async = match_async_gemm(k);
  ASSERT_TRUE(async.matched()) << async.not_matched;
  EXPECT_EQ(async.block_m, 32);
  EXPECT_EQ(async.block_n, 32);
  EXPECT_EQ(async.block_k, 16);
  EXPECT_EQ(async.dtype, ir::DType::f16);
}

TEST(MatchDescriptorGemm, WgmmaKeepsItsOwnOperandTypeRule) {
  const ir::Kernel k = gemm(ir::DType::f32);
  EXPECT_TRUE(std::holds_alternative<DescriptorGemm>(match_descriptor_gemm(KernelValues(k))));
  EXPECT_EQ(match_async_gemm(k).not_matched, "operands of f32 (wgmma takes f16 and bf16 here)");
}

TEST(MatchDescriptorGemm, ASecondCarriedValueBreaksTheRecurrenceForBothCallers) {
  const ir::Kernel k = gemm(ir::DType::f16, true);
  const KernelValues values(k);
  const auto found = match_descriptor_gemm(values);
  ASSERT_TRUE(std::holds_alternative<GemmMismatch>(found));
  const GemmMismatch& bad = std::get<GemmMismatch>(found);
  ASSERT_NE(bad.op, nullptr);
  EXPECT_EQ(bad.op->kind, ir::OpKind::For);
  EXPECT_EQ(k_recurrence(values, *bad.op).carried, 2);
  const std::string why = values.describe(bad.op) + " " + bad.why;
  EXPECT_NE(why.find("= for' at "), std::string::npos) << why;
  EXPECT_NE(why.find("carries 2 values; the tensor backend lowers one matrix recurrence"),
            std::string::npos)
      << why;
  EXPECT_EQ(match_async_gemm(k).not_matched, why);
}

}  // namespace
}  // namespace metile::lower
