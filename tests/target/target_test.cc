// The named Target descriptions: the limits the planners and the emitters read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metile/support/errors.h"
#include "metile/target/target.h"

namespace metile::target {
namespace {

using ::testing::HasSubstr;

TEST(Targets, Sm90HasTheH200Limits) {
  const Target& t = target_by_name("sm90");
  EXPECT_EQ(t.language, Language::CUDA);
  EXPECT_EQ(t.max_threads_per_threadgroup, 1024);
  EXPECT_EQ(t.threadgroup_memory_bytes, 227 * 1024);
  EXPECT_EQ(t.static_threadgroup_memory_bytes, 48 * 1024);
  EXPECT_EQ(t.threadgroup_memory_per_core, 228 * 1024);
  EXPECT_EQ(t.registers_per_core, 65536);
  EXPECT_TRUE(t.matrix_facilities.has(MatrixFacility::MmaSync));
  EXPECT_TRUE(t.matrix_facilities.has(MatrixFacility::Wgmma));
  EXPECT_FALSE(t.matrix_facilities.has(MatrixFacility::SimdgroupMatrix8x8));
  EXPECT_EQ(t.buffer_alignment_bytes, 256);
  EXPECT_EQ(t.max_vector_bytes, 16);
  EXPECT_DOUBLE_EQ(t.memory_bandwidth_gbps, 4300);
  EXPECT_TRUE(t.collectives_need_whole_simd_groups);  // full-warp masks
  EXPECT_FALSE(target_by_name("host").collectives_need_whole_simd_groups);
}

TEST(Targets, AppleTargetsHaveSimdgroupMatricesAndM5AndTheHostHaveTensorOps) {
  // The host emulator emulates Metal 4's tensor ops (msl/mpp_tensor_ops.h).
  EXPECT_TRUE(target_by_name("host").matrix_facilities.has(MatrixFacility::AppleTensorOps));
  for (const char* name : {"apple-m1", "apple-m2", "apple-m3", "apple-m4"}) {
    const Target& t = target_by_name(name);
    EXPECT_EQ(t.language, Language::MSL) << name;
    EXPECT_TRUE(t.matrix_facilities.has(MatrixFacility::SimdgroupMatrix8x8)) << name;
    EXPECT_FALSE(t.matrix_facilities.has(MatrixFacility::AppleTensorOps)) << name;
    EXPECT_EQ(t.threadgroup_memory_bytes, 32768) << name;
    EXPECT_EQ(t.static_threadgroup_memory_bytes, 32768) << name;
    EXPECT_FALSE(t.registers_per_core.has_value()) << name;
  }
  EXPECT_TRUE(target_by_name("apple-m5").matrix_facilities.has(MatrixFacility::AppleTensorOps));
}

TEST(Targets, StaticThreadgroupMemoryNeverExceedsTheTotal) {
  for (const std::string& name : target_names()) {
    const Target& t = target_by_name(name);
    EXPECT_LE(t.static_threadgroup_memory_bytes, t.threadgroup_memory_bytes) << name;
    EXPECT_LE(t.threadgroup_memory_bytes, t.threadgroup_memory_per_core) << name;
    EXPECT_LE(t.max_vector_bytes, t.buffer_alignment_bytes) << name;
    EXPECT_FALSE(t.matrix_facilities.none()) << name;
  }
}

TEST(Targets, Bf16NeedsMsl31) {
  EXPECT_FALSE(target_by_name("apple-m2").supports_bf16);
  const Target& m3 = target_by_name("apple-m3");
  EXPECT_TRUE(m3.supports_bf16);
  EXPECT_EQ(m3.msl_version_minor, 1);
}

TEST(Targets, UnknownNameListsTheKnownOnes) {
  try {
    target_by_name("apple-m9");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown target 'apple-m9'; known targets: apple-m1"));
    EXPECT_THAT(e.what(), HasSubstr("sm90"));
  }
  EXPECT_EQ(default_target().name, "host");
}

TEST(Targets, MatrixFacilitiesHaveNames) {
  EXPECT_EQ(matrix_facility_name(MatrixFacility::SimdgroupMatrix8x8), "simdgroup-8x8");
  EXPECT_EQ(matrix_facility_name(MatrixFacility::Wgmma), "wgmma");
  EXPECT_TRUE(MatrixFacilities{}.none());
}

}  // namespace
}  // namespace metile::target
