#include "metile/lower/plan_threads.h"

#include <gtest/gtest.h>

#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

TEST(PlanThreads, LargestTileOverFour) {
  lower::ThreadPlan plan = lower::plan_threads(vector_add(1024), test_target());
  EXPECT_EQ(plan.threads_per_threadgroup, 256);
  EXPECT_EQ(plan.reason,
            "largest tile has 1024 elements; 256 threads give 4 elements per thread; target "
            "apple-m3 allows up to 1024");
}

TEST(PlanThreads, ClampedToSimdWidthAndDefaultCeiling) {
  EXPECT_EQ(lower::plan_threads(vector_add(16), test_target()).threads_per_threadgroup, 32);
  EXPECT_EQ(lower::plan_threads(vector_add(256), test_target()).threads_per_threadgroup, 64);
  lower::ThreadPlan big = lower::plan_threads(vector_add(8192), test_target());
  EXPECT_EQ(big.threads_per_threadgroup, 256);
  EXPECT_NE(big.reason.find("32 elements per thread"), std::string::npos) << big.reason;
  // 2-D tiles count all their elements.
  EXPECT_EQ(lower::plan_threads(outer_product(32, 32), test_target()).threads_per_threadgroup, 256);
}

TEST(PlanThreads, KernelWithoutTilesGetsOneSimdGroup) {
  ir::Kernel k;
  k.name = "scalar";
  ir::TileBuilder b(k);
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  b.store(out, b.program_id(0));
  lower::ThreadPlan plan = lower::plan_threads(k, test_target());
  EXPECT_EQ(plan.threads_per_threadgroup, 32);
  EXPECT_NE(plan.reason.find("no tiles"), std::string::npos);
}

TEST(PlanThreads, NumThreadsAttributeOverrides) {
  ir::Kernel k = vector_add(1024);
  k.attrs["num_threads"] = int64_t{512};
  lower::ThreadPlan plan = lower::plan_threads(k, test_target());
  EXPECT_EQ(plan.threads_per_threadgroup, 512);
  EXPECT_EQ(plan.reason,
            "the kernel requests num_threads = 512; target apple-m3 allows up to 1024");
}

TEST(PlanThreads, InvalidNumThreadsIsAUserError) {
  for (int64_t bad : {int64_t{0}, int64_t{96}, int64_t{2048}, int64_t{-32}}) {
    ir::Kernel k = vector_add(1024);
    k.attrs["num_threads"] = bad;
    try {
      lower::plan_threads(k, test_target());
      FAIL() << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("num_threads = " + std::to_string(bad)),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("power of two no larger than 1024"), std::string::npos);
    }
  }
  ir::Kernel k = vector_add(1024);
  k.attrs["num_threads"] = std::string("many");
  EXPECT_THROW(lower::plan_threads(k, test_target()), UserError);
}

}  // namespace
}  // namespace metile::lower_test
