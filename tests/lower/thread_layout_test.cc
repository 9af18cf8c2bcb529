#include "metile/ir/thread_layout.h"

#include <gtest/gtest.h>

#include <set>

#include "metile/support/errors.h"

namespace metile::ir {
namespace {

// Every logical index has exactly one (thread, register) and the maps invert each other.
void expect_bijection(const ThreadLayout& layout) {
  std::set<int64_t> seen;
  for (int64_t t = 0; t < layout.thread_count(); ++t)
    for (int64_t r = 0; r < layout.elements_per_thread(); ++r) {
      const int64_t index = layout.logical_index(t, r);
      ASSERT_GE(index, 0);
      ASSERT_LT(index, layout.size());
      EXPECT_TRUE(seen.insert(index).second) << "index " << index << " owned twice";
      EXPECT_EQ(layout.owner(index), t);
      EXPECT_EQ(layout.register_of(index), r);
    }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), layout.size());
}

TEST(ThreadLayout, IdentityIsStriped) {
  ThreadLayout layout = ThreadLayout::identity(1024, 4);
  EXPECT_EQ(layout.size(), 1024);
  EXPECT_EQ(layout.thread_count(), 256);
  EXPECT_EQ(layout.elements_per_thread(), 4);
  EXPECT_TRUE(layout.is_identity());
  for (int64_t t : {0, 1, 17, 255})
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(layout.logical_index(t, r), t + r * 256);
  EXPECT_EQ(layout.owner(700), 700 % 256);
  EXPECT_EQ(layout.register_of(700), 2);
  EXPECT_EQ(layout.str(), "identity(1024 elements, 256 threads, 4 per thread)");
  expect_bijection(layout);
}

TEST(ThreadLayout, SwapsTheFirstTwoBits) {
  ThreadLayout layout({1, 0, 2, 3, 4});
  EXPECT_EQ(layout.thread_count(), 32);
  EXPECT_FALSE(layout.is_identity());
  EXPECT_EQ(layout.logical_index(1), 2);
  EXPECT_EQ(layout.logical_index(2), 1);
  EXPECT_EQ(layout.logical_index(3), 3);
  EXPECT_EQ(layout.logical_index(5), 6);
  EXPECT_EQ(layout.owner(2), 1);
  expect_bijection(layout);
}

TEST(ThreadLayout, RegisterBitsLowGiveAdjacentElements) {
  ThreadLayout layout({8, 9, 0, 1, 2, 3, 4, 5, 6, 7}, 0, 4);
  EXPECT_EQ(layout.thread_count(), 256);
  for (int64_t t : {0, 1, 100, 255})
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(layout.logical_index(t, r), 4 * t + r);
  EXPECT_EQ(layout.owner(401), 100);
  EXPECT_EQ(layout.register_of(401), 1);
  expect_bijection(layout);
}

TEST(ThreadLayout, XorMaskAppliesToTheLogicalIndex) {
  ThreadLayout layout({0, 1, 2, 3, 4, 5}, 0b101, 2);
  EXPECT_EQ(layout.logical_index(0, 0), 5);
  EXPECT_EQ(layout.owner(5), 0);
  expect_bijection(layout);
  expect_bijection(ThreadLayout({3, 4, 5, 0, 1, 2}, 7, 8));
  expect_bijection(ThreadLayout::identity(1, 1));
  expect_bijection(ThreadLayout::identity(16, 16));
}

// A row statistic held by every lane of its row: 8 elements over 32 threads, thread bits 0
// and 1 replicate.
TEST(ThreadLayout, ReplicatedLayoutHoldsEachElementInEveryReplica) {
  ThreadLayout layout({2, 3, 4}, 0, 1, 32);
  EXPECT_EQ(layout.size(), 8);
  EXPECT_EQ(layout.thread_count(), 32);
  EXPECT_TRUE(layout.is_replicated());
  EXPECT_EQ(layout.replica_bits(), 3);
  EXPECT_FALSE(layout.is_identity());
  for (int64_t t = 0; t < 32; ++t) EXPECT_EQ(layout.logical_index(t), t >> 2);
  EXPECT_EQ(layout.owner(5), 20);  // the canonical replica: replica bits 0
  EXPECT_EQ(layout.register_of(5), 0);
  EXPECT_EQ(layout.str(),
            "ThreadLayout((2, 3, 4), xor 0, 32 threads, 1 per thread, replicated over thread "
            "bits 3)");
  EXPECT_FALSE(layout == ThreadLayout({2, 3, 4}, 0, 1, 64));
  EXPECT_FALSE(ThreadLayout::identity(8).is_replicated());
}

TEST(ThreadLayout, ReplicatedLayoutWithRegisters) {
  // Logical bit 0 on thread bit 2, bit 1 on the register, bit 2 on thread bit 3.
  ThreadLayout layout({2, 4, 3}, 0, 2, 16);
  EXPECT_EQ(layout.replica_bits(), 3);
  EXPECT_EQ(layout.logical_index(13, 1), 7);
  EXPECT_EQ(layout.logical_index(12, 1), 7);
  EXPECT_EQ(layout.logical_index(13, 0), 5);
  EXPECT_EQ(layout.owner(7), 12);
  EXPECT_EQ(layout.register_of(7), 1);
  for (int64_t index = 0; index < layout.size(); ++index)
    EXPECT_EQ(layout.logical_index(layout.owner(index), layout.register_of(index)), index);
}

TEST(ThreadLayout, RejectsReplicatedRegistersAndTooFewThreads) {
  // Register bits cannot replicate: a register holding nothing is no layout.
  try {
    ThreadLayout({0, 1}, 0, 2, 4);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("register bit 0 names no logical bit"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ThreadLayout({0, 1, 2}, 0, 1, 4), UserError);   // 8 elements need 8 threads
  EXPECT_THROW(ThreadLayout({0, 1, 2}, 0, 1, 24), UserError);  // not a power of two
  EXPECT_THROW(ThreadLayout({0, 5, 2}, 0, 1, 32), UserError);  // bit 5 is past the threads
}

TEST(ThreadLayout, RejectsInvalidDescriptions) {
  EXPECT_THROW(ThreadLayout({0, 0, 1}), UserError);
  EXPECT_THROW(ThreadLayout({0, 3}), UserError);
  EXPECT_THROW(ThreadLayout({0, 1}, 4), UserError);
  EXPECT_THROW(ThreadLayout({0, 1}, 0, 3), UserError);
  EXPECT_THROW(ThreadLayout({0, 1}, 0, 8), UserError);
  EXPECT_THROW(ThreadLayout::identity(1000), UserError);
  ThreadLayout layout = ThreadLayout::identity(64, 2);
  EXPECT_THROW(layout.logical_index(32, 0), UserError);
  EXPECT_THROW(layout.logical_index(0, 2), UserError);
  EXPECT_THROW(layout.owner(64), UserError);
  try {
    ThreadLayout({0, 0});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("permutation"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace metile::ir
